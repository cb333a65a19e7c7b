"""A Celery worker is killed with SIGKILL in the middle of a dispatch.

On Redis and on RabbitMQ (the ``broker`` fixture). The first worker's batch claims the payout and
sends the transfer; the fake Paystack records it and holds the answer until the test has killed the
worker. The batch task was acknowledged late, so the broker hands it to a second worker (RabbitMQ
requeues it as the killed worker's connection closes, Redis once the visibility timeout has passed);
it finds no reserved payout and sends nothing. Once the claim is stale, the ``dispatch_stuck``
sweeper (what beat runs) queues the payout's own dispatch; the worker asks the provider by reference
before sending anything and settles the payout from the provider's record: one transfer at the
provider, one capture in the ledger.
"""

from __future__ import annotations

import time
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from payouts.models import Payout, PayoutStatus
from payouts.services import payouts_dispatch_stuck
from tests.faults.conftest import (
    LIVE_MODE,
    PAYOUTS_PATH,
    Broker,
    FakePaystack,
    Processes,
    funded_wallet,
    payout_body,
    wait_for,
)
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_totals

pytestmark = [pytest.mark.multiprocess]

VISIBILITY_TIMEOUT = 3
CLAIM_TIMEOUT = 2


@pytest.mark.django_db(transaction=True)
def test_a_dispatch_cut_by_sigkill_is_redelivered_and_sent_once_captured_once(
    merchant_account,
    live_client,
    broker: Broker,
    processes: Processes,
    live_paystack_settings: FakePaystack,
    settings: Any,
) -> None:
    provider = live_paystack_settings
    settings.PAYOUT_DISPATCH_CLAIM_TIMEOUT = timedelta(seconds=CLAIM_TIMEOUT)
    provider.block_first_transfer = True
    worker_env = {
        "CELERY_BROKER_URL": broker.url,
        "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT),
        "PAYOUT_DISPATCH_CLAIM_TIMEOUT_SECONDS": str(CLAIM_TIMEOUT),
        "PAYSTACK_BASE_URL": provider.base_url,
        "PAYOUT_PROVIDER_TIMEOUT_SECONDS": "30",
    }
    first = processes.worker("worker-1", queue=broker.queue, **worker_env)
    wallet = funded_wallet(merchant_account, LIVE_MODE, "20000.00")

    response = live_client.post(PAYOUTS_PATH, payout_body("sigkill-1"), format="json")
    assert response.status_code == 202, response.content
    payout = Payout.objects.get(pk=response.json()["data"]["payout"]["id"])
    total = payout.total_debit_amount

    assert provider.transfer_received.wait(timeout=30), first.output()[-3000:]
    delivered_at = time.monotonic()
    assert Payout.objects.get(pk=payout.pk).status == PayoutStatus.PROCESSING
    first.kill()  # SIGKILL, while the provider call is in flight
    assert first.popen.returncode == -9
    provider.release.set()

    payout.refresh_from_db()
    assert payout.status == PayoutStatus.PROCESSING
    wallet.refresh_from_db()
    assert wallet.reserved_balance == total

    # The broker hands the unacknowledged task to the next worker: RabbitMQ at once, Redis once
    # the visibility timeout passed.
    time.sleep(max(0.0, broker.redelivered_after + 1 - (time.monotonic() - delivered_at)))
    second = processes.worker("worker-2", queue=broker.queue, **worker_env)
    wait_for(
        lambda: "payouts_dispatch_round_task" in second.output(),
        timeout=30,
        what=f"the redelivered batch task; worker-2 log:\n{second.output()[-3000:]}",
    )
    time.sleep(1)  # the redelivered batch finds nothing reserved
    assert Payout.objects.get(pk=payout.pk).status == PayoutStatus.PROCESSING
    assert provider.posts_to_transfer(payout.internal_reference) == 1

    # Beat's dispatch_stuck sweeper: the claim went stale, the payout's own dispatch is queued.
    time.sleep(max(0.0, CLAIM_TIMEOUT + 0.5 - (time.monotonic() - delivered_at)))
    assert payouts_dispatch_stuck(enqueue=True).outcomes == {"queued": 1}

    settled = wait_for(
        lambda: Payout.objects.filter(pk=payout.pk, status=PayoutStatus.SUCCESSFUL).first(),
        timeout=45,
        what=f"the redelivered dispatch; worker-2 log:\n{second.output()[-3000:]}",
    )

    assert provider.posts_to_transfer(payout.internal_reference) == 1
    assert provider.posts_to_transfer() == 1
    assert provider.verifies(payout.internal_reference) >= 1
    assert settled.dispatch_attempts == 2
    debits = LedgerEntry.objects.filter(
        payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
    )
    assert debits.count() == 1
    assert not LedgerEntry.objects.filter(
        payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_REVERSAL
    ).exists()
    wallet.refresh_from_db()
    assert wallet.reserved_balance == Decimal("0.00")
    assert wallet.available_balance == Decimal("20000.00") - total
    assert wallet_totals(wallet=wallet).balanced
    assert "payout_dispatch_task" in second.output()
