"""With a real worker process on Redis: /readyz follows the worker's heartbeat (ready while it
runs, 503 naming ``worker`` soon after it stops), /metrics shows the backlog growing while it
is stopped, and a request's id reaches the log records of the task it queued."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from core.heartbeats import BEAT_HEARTBEAT, heartbeat_record
from merchants.models import Mode
from merchants.services import MerchantCreated
from payouts.models import Payout, PayoutStatus
from tests.celery_worker import (
    celery_publishing_to,
    celery_worker_start,
    redis_require,
    unavailable_for,
    unique_queue,
    wait_for,
    worker_environment,
)
from tests.payouts.helpers import PAYOUTS_URL, fund_wallet
from wallets.selectors import wallet_get

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/14")
STALE_SECONDS = 3
REQUEST_ID = "req-liveness-0123456789"

unavailable = unavailable_for("worker liveness test")

pytestmark = [pytest.mark.multiprocess]


def _ready() -> tuple[int, str]:
    heartbeat_record(BEAT_HEARTBEAT)  # beat is not under test here
    response = Client().get("/readyz")
    return response.status_code, response.json()["message"]


def _gauge(name: str, **labels: str) -> float:
    text = Client().get("/metrics").content.decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    raise AssertionError(f"{name}{labels} not in /metrics")


def _payout_create(client: APIClient, key: str, **headers: str) -> int:
    response = client.post(
        PAYOUTS_URL,
        {
            "account_number": "0123456789",
            "bank_code": "058",
            "amount": "100.00",
            "idempotency_key": key,
        },
        format="json",
        **headers,
    )
    assert response.status_code == 202, response.content
    assert response["X-Request-ID"]
    return response.json()["data"]["payout"]["id"]


@pytest.mark.django_db(transaction=True)
def test_readiness_and_backlog_follow_a_real_worker(
    tmp_path: Path,
    settings,
    heartbeat_dir: Path,
    merchant_account: MerchantCreated,
    client_for: Callable[[str], APIClient],
) -> None:
    redis_require(REDIS_URL, unavailable=unavailable)
    queue = unique_queue("liveness")
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    settings.WORKER_HEARTBEAT_STALE_SECONDS = STALE_SECONDS
    fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "5000")
    client = client_for(merchant_account.test_key.plaintext)

    with celery_publishing_to(REDIS_URL, queue=queue, task_patterns=["payouts.tasks.*"]):
        assert _ready() == (503, "not ready: worker not seen")
        worker = celery_worker_start(
            "liveness",
            queue=queue,
            env=worker_environment(
                tmp_path,
                CELERY_BROKER_URL=REDIS_URL,
                HEARTBEAT_STORE="file",
                HEARTBEAT_DIR=str(heartbeat_dir),
                HEARTBEAT_INTERVAL_SECONDS="0.5",
                LOG_FORMAT="json",
            ),
            log_dir=tmp_path,
        )
        try:
            wait_for(lambda: _ready()[0] == 200, timeout=10, what="ready with the worker up")

            # A request's id follows it into the dispatch round it queued.
            first = _payout_create(client, "liveness-1", HTTP_X_REQUEST_ID=REQUEST_ID)
            wait_for(
                lambda: Payout.objects.get(pk=first).status == PayoutStatus.SUCCESSFUL,
                timeout=30,
                what=f"the worker to dispatch; log:\n{worker.output()[-3000:]}",
            )
            records = [
                json.loads(line) for line in worker.output().splitlines() if line.startswith("{")
            ]
            claimed = [r for r in records if r["message"].startswith("dispatch_round: 1 ")]
            assert claimed, worker.output()[-3000:]
            assert {r["request_id"] for r in claimed} == {REQUEST_ID}
        finally:
            worker.stop()
        stopped_at = time.monotonic()

        wait_for(lambda: _ready()[0] == 503, timeout=30, what="not ready once the worker stopped")
        assert _ready() == (503, "not ready: worker not seen")
        noticed_after = time.monotonic() - stopped_at
        assert noticed_after <= STALE_SECONDS + 2

        reserved = _gauge("payouts_pending", status="reserved")
        waiting = _gauge("celery_queue_length", queue=queue)
        for index in range(2):
            _payout_create(client, f"liveness-stopped-{index}")
            time.sleep(0.15)  # past the wake interval: each create publishes a round
        assert _gauge("payouts_pending", status="reserved") == reserved + 2
        assert _gauge("celery_queue_length", queue=queue) > waiting
        assert _gauge("payouts_pending_oldest_age_seconds", status="reserved") > 0
