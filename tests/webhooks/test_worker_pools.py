"""End to end with the Procfile's own Celery workers (real processes, their pools and concurrency as
written) on Redis and on RabbitMQ: one merchant's slow webhook receiver never delays another
merchant's payout, and never holds more of the webhook pool than the merchant's cap.

Merchant A's receiver holds every connection: ``drip`` answers ``HTTP/1.1 200 OK`` and then one byte
every 2 s; ``silent`` reads the request and says nothing. A records six events (the way a moved
low-balance threshold does), then merchant B creates a payout through the API, which must be final
within its usual few seconds. Redis: ``TEST_REDIS_URL`` (default db 14); RabbitMQ:
``TEST_RABBITMQ_URL``; skipped only when the broker or PostgreSQL is missing, never under
``REQUIRE_POSTGRES=1`` (CI), where it fails.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction

from merchants.models import Mode
from merchants.services import merchant_create, webhook_settings_set
from payouts.models import FINAL_STATUSES, Payout, PayoutStatus
from tests.celery_worker import (
    Process,
    broker_url_for,
    procfile_workers_running,
    unavailable_for,
    wait_for,
)
from tests.payouts.helpers import PAYOUTS_URL, fund_wallet
from tests.webhooks.receivers import SlowReceiver
from wallets.selectors import wallet_get
from webhooks.models import WebhookDelivery
from webhooks.wallet_events import wallet_balance_low_record

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/14")
SLOW_EVENTS = 6
MERCHANT_CAP = 2
USUAL_SECONDS = 6.0  # a payout's create → final on an idle worker is about a second
WAIT_SECONDS = 90  # long enough to measure how long a stalled worker holds it

# Real receivers that hold a connection open for seconds.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.multiprocess]


@pytest.fixture
def workers(tmp_path: Path, celery_broker: str) -> Iterator[dict[str, Process]]:
    with procfile_workers_running(
        tmp_path,
        broker_url=broker_url_for(celery_broker, redis_url=REDIS_URL),
        unavailable=unavailable_for("end-to-end worker pool test"),
        extra_env={
            "CALLBACK_URL_ALLOW_PRIVATE": "1",
            "WEBHOOK_MERCHANT_MAX_IN_FLIGHT": str(MERCHANT_CAP),
        },
    ) as started:
        yield started


def _logs(workers: dict[str, Process]) -> str:
    return "\n".join(f"--- {name}\n{p.output()[-2500:]}" for name, p in workers.items())


# The receiver's two behaviours on Redis; on RabbitMQ one of them (the pools are what the broker
# changes, not the receiver), which keeps the suite's time down.
@pytest.mark.parametrize(
    ("behaviour", "celery_broker"), [("drip", "redis"), ("silent", "redis"), ("drip", "rabbitmq")]
)
def test_a_slow_webhook_receiver_does_not_delay_another_merchants_payout(
    behaviour: str, workers: dict[str, Process], settings: Any, client_for: Any
) -> None:
    settings.CALLBACK_URL_ALLOW_PRIVATE = True
    receiver = SlowReceiver(behaviour, interval=2.0, max_seconds=20).start()
    try:
        slow = merchant_create(name="Slow Hooks Ltd", email="slow@example.com").merchant
        webhook_settings_set(merchant=slow, mode=Mode.TEST, url=receiver.url("/hooks"))
        slow_wallet = wallet_get(merchant=slow, mode=Mode.TEST)
        for _ in range(SLOW_EVENTS):
            with transaction.atomic():  # each commit enqueues its delivery
                wallet_balance_low_record(
                    wallet=slow_wallet,
                    available_balance=Decimal("10.00"),
                    low_balance_threshold=Decimal("5000.00"),
                    ledger_entry=None,
                )
        wait_for(
            lambda: receiver.open_now() >= 2,
            timeout=20,
            what=f"the slow receiver to hold two senders; logs:\n{_logs(workers)}",
        )

        prompt = merchant_create(name="Prompt Payouts", email="prompt@example.com")
        fund_wallet(wallet_get(merchant=prompt.merchant, mode=Mode.TEST), "5000")
        client = client_for(prompt.test_key.plaintext)
        started = time.monotonic()
        response = client.post(
            PAYOUTS_URL,
            {
                "account_number": "0123456789",
                "bank_code": "058",
                "amount": "1500.00",
                "idempotency_key": f"pools-{behaviour}",
            },
            format="json",
        )
        assert response.status_code == 202, response.content
        payout_id = response.json()["data"]["payout"]["id"]
        final = wait_for(
            lambda: Payout.objects.filter(pk=payout_id, status__in=FINAL_STATUSES).first(),
            timeout=WAIT_SECONDS,
            what=f"the payout to be final; logs:\n{_logs(workers)}",
        )
        elapsed = time.monotonic() - started
        held_at_most = receiver.most_open
    finally:
        receiver.stop()
    print(f"{behaviour}: merchant B's payout create → {final.status} in {elapsed:.2f} s")
    assert final.status == PayoutStatus.SUCCESSFUL
    assert elapsed <= USUAL_SECONDS, f"the payout waited {elapsed:.1f}s behind the slow receiver"
    assert held_at_most <= MERCHANT_CAP
    assert WebhookDelivery.objects.filter(event__merchant=slow).count() == SLOW_EVENTS
