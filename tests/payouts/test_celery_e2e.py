"""End to end on a real Celery worker process, on Redis and on RabbitMQ (not eager mode): a
payout created through the API goes from ``reserved`` to ``successful`` in the worker.

Redis: ``TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/14``); RabbitMQ:
``TEST_RABBITMQ_URL``. Skipped only when the broker does not answer, and never under
``REQUIRE_POSTGRES=1`` (CI), where it fails instead (RabbitMQ also under ``CI=true``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from merchants.models import Mode
from payouts.models import Payout, PayoutStatus, SandboxTransfer
from tests.celery_worker import (
    Process,
    broker_url_for,
    celery_worker_running,
    unavailable_for,
)
from tests.payouts.helpers import PAYOUTS_URL, assert_wallet_balanced, fund_wallet
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_get

pytestmark = [pytest.mark.multiprocess]

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/14")
WORKER_WAIT_SECONDS = 60


@pytest.fixture
def celery_worker(tmp_path: Path, celery_broker: str) -> Iterator[Process]:
    """A worker on Redis or RabbitMQ consuming a queue of its own, to which this process
    publishes the payout tasks meanwhile."""
    with celery_worker_running(
        tmp_path,
        broker_url=broker_url_for(celery_broker, redis_url=REDIS_URL),
        queue_prefix="payouts-e2e",
        task_patterns=["payouts.tasks.*"],
        unavailable=unavailable_for("end-to-end Celery test"),
    ) as worker:
        yield worker


def _wait_for_status(payout_id: int, status: str, worker: Process) -> Payout:
    deadline = time.monotonic() + WORKER_WAIT_SECONDS
    while time.monotonic() < deadline:
        payout = Payout.objects.get(pk=payout_id)
        if payout.status == status:
            return payout
        assert worker.alive(), f"worker exited early:\n{worker.output()[-3000:]}"
        time.sleep(0.2)
    raise AssertionError(
        f"payout stayed {payout.status} for {WORKER_WAIT_SECONDS}s; worker log:\n"
        f"{worker.output()[-3000:]}"
    )


@pytest.mark.django_db(transaction=True)
def test_worker_takes_a_payout_from_reserved_to_successful(
    celery_worker: Process, merchant_account, client_for
) -> None:
    wallet = fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "5000")
    client = client_for(merchant_account.test_key.plaintext)
    response = client.post(
        PAYOUTS_URL,
        {
            "account_number": "0123456789",
            "bank_code": "058",
            "amount": "1500.00",
            "idempotency_key": "e2e-worker-1",
        },
        format="json",
    )
    assert response.status_code == 202
    created = response.json()["data"]["payout"]
    assert created["status"] == "reserved"

    payout = _wait_for_status(created["id"], PayoutStatus.SUCCESSFUL, celery_worker)
    assert payout.completed_at is not None
    assert payout.dispatch_attempts == 1
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    debit = LedgerEntry.objects.get(payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT)
    assert (debit.amount, debit.fee_amount) == (Decimal("1500.00"), Decimal("10.00"))
    wallet.refresh_from_db()
    assert wallet.available_balance == Decimal("3490.00")
    assert wallet.reserved_balance == Decimal("0.00")
    assert_wallet_balanced(wallet)
    details = client.get(f"{PAYOUTS_URL}/{payout.pk}").json()["data"]
    assert details["status"] == "successful"
    assert _log_mentions(celery_worker, "payouts_dispatch_round_task")


def _log_mentions(worker: Process, text: str) -> bool:
    """The work was done by the worker process (its log names the task)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if text in worker.output():
            return True
        time.sleep(0.2)
    return False
