"""End to end on a real Celery worker process, on Redis and on RabbitMQ: the test helper settles a
paid collection with a split, the share payout task queued on commit runs in the worker and creates
the payout; dispatched, it ends ``successful`` and the platform ledger moves the share from owed to
paid.

Redis: ``TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/14``); RabbitMQ: ``TEST_RABBITMQ_URL``.
Skipped only when the broker does not answer, and never under ``REQUIRE_POSTGRES=1`` (CI), where it
fails instead (RabbitMQ also under ``CI=true``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from merchants.models import Mode
from payouts.models import PayoutStatus
from payouts.services import payouts_dispatch_round
from settlements.models import PlatformAccount, SettlementShare
from settlements.platform_ledger import platform_balances
from tests.celery_worker import (
    Process,
    broker_url_for,
    celery_worker_running,
    unavailable_for,
)
from tests.settlements.helpers import paid_collection, subaccount_for, wallet_of

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow]

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/14")
WORKER_WAIT_SECONDS = 60


@pytest.fixture
def celery_worker(tmp_path: Path, celery_broker: str) -> Iterator[Process]:
    with celery_worker_running(
        tmp_path,
        broker_url=broker_url_for(celery_broker, redis_url=REDIS_URL),
        queue_prefix="settlements-e2e",
        task_patterns=["settlements.tasks.*", "payouts.tasks.*"],
        unavailable=unavailable_for("end-to-end settlement test"),
    ) as worker:
        yield worker


@pytest.mark.django_db(transaction=True)
def test_a_settled_share_is_paid_by_the_worker(
    celery_worker: Process, merchant_account, client_for
) -> None:
    merchant = merchant_account.merchant
    subaccount = subaccount_for(merchant)
    paid_collection(merchant=merchant, shares={subaccount: Decimal("700.00")})
    client = client_for(merchant_account.test_key.plaintext)

    response = client.post("/api/v1/test-helpers/settlements/run", format="json")

    assert response.status_code == 200, response.content
    assert wallet_of(merchant).available_balance == Decimal("6300.00")
    deadline = time.monotonic() + WORKER_WAIT_SECONDS
    share = SettlementShare.objects.select_related("payout").get()
    while share.payout is None and time.monotonic() < deadline:
        assert celery_worker.alive(), celery_worker.output()[-3000:]
        time.sleep(0.2)
        share = SettlementShare.objects.select_related("payout").get()
    assert share.payout is not None, celery_worker.output()[-3000:]
    # The worker's own publishes (the dispatch wake) go to the service's queues, which this
    # test's worker does not consume: the round runs here, as the worker's would.
    payouts_dispatch_round(payout_ids=[share.payout.pk])
    share.payout.refresh_from_db()
    assert share.payout.status == PayoutStatus.SUCCESSFUL
    assert share.payout.account_number == subaccount.account_number
    balances = platform_balances(mode=Mode.TEST)
    assert balances.equation_holds
    assert balances[PlatformAccount.OWED_SUBACCOUNTS] == Decimal("0.00")
    assert balances[PlatformAccount.SUBACCOUNT_PAYOUTS] == Decimal("700.00")
