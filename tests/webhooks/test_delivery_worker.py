"""End to end on a real Celery worker process, on Redis and on RabbitMQ: a receiver that answers 503
and then times out gets the event again from the worker's own retries, with the same id and bytes,
until it answers 200.

The worker runs with a 1-second retry schedule and no jitter (``WEBHOOK_RETRY_DELAYS_SECONDS``,
``WEBHOOK_RETRY_JITTER``) so the test takes seconds, not minutes; on RabbitMQ each retry's
one-second countdown is kept by the broker. Skipped only when the broker does not answer, and never
under ``REQUIRE_POSTGRES=1`` (CI), where it fails instead.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from collections_app.models import PaymentStatus
from collections_app.services import transaction_confirm
from merchants.models import Merchant
from tests.collections_app.factories import CollectionTransactionFactory
from tests.collections_app.helpers import (
    ReceivedRequest,
    RecordingReceiver,
    celery_worker_running,
    hmac_sha512_hex,
)
from tests.merchants.factories import WebhookSettingsFactory
from webhooks.models import DeliveryStatus, Event, WebhookDelivery

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.multiprocess]

WAIT_SECONDS = 30


def _unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_POSTGRES") == "1":
        pytest.fail(f"end-to-end delivery test cannot run under REQUIRE_POSTGRES=1: {reason}")
    pytest.skip(reason)


@pytest.fixture
def worker(tmp_path: Path, celery_broker: str) -> Iterator:
    extra_env = {
        "WEBHOOK_RETRY_DELAYS_SECONDS": "1",
        "WEBHOOK_RETRY_JITTER": "0",
        "WEBHOOK_READ_TIMEOUT_SECONDS": "0.5",
    }
    with celery_worker_running(
        tmp_path, unavailable=_unavailable, extra_env=extra_env, broker=celery_broker
    ) as proc:
        yield proc


def test_worker_retries_until_the_receiver_answers(
    worker, merchant: Merchant, settings, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    settings.CALLBACK_URL_ALLOW_PRIVATE = True
    answers = iter(["503", "slow"])

    def answer(request: ReceivedRequest) -> tuple[int, bytes, dict[str, str]]:
        step = next(answers, "ok")
        if step == "503":
            return 503, b"try later", {}
        if step == "slow":
            time.sleep(1.5)  # longer than the worker's 0.5 s read timeout
        return 200, b"ok", {}

    receiver = RecordingReceiver(answer=answer).start()
    try:
        secret = "whsec_worker_e2e"
        WebhookSettingsFactory(merchant=merchant, url="", secret=secret)
        txn = CollectionTransactionFactory(merchant=merchant, callback_url=receiver.url("/hook"))
        transaction_confirm(collection=txn, outcome=PaymentStatus.PAID)  # enqueued on commit
        delivery = WebhookDelivery.objects.get(event__transaction=txn)
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            delivery.refresh_from_db()
            if delivery.status != DeliveryStatus.PENDING:
                break
            assert worker.poll() is None, worker.log_path.read_text()[-3000:]
            time.sleep(0.2)
    finally:
        receiver.stop()
    assert delivery.status == DeliveryStatus.SUCCEEDED, worker.log_path.read_text()[-3000:]
    rows = list(delivery.attempts.order_by("attempt_number"))
    assert [row.attempt_number for row in rows] == [1, 2, 3]
    assert [row.status_code for row in rows] == [503, None, 200]
    assert rows[1].error.startswith("timeout")
    assert rows[0].response_excerpt == "try later"
    event = Event.objects.get(transaction=txn)
    posts = receiver.received("POST", "/hook")
    assert len(posts) == 3
    assert {request.body for request in posts} == {event.body_bytes}
    assert {request.header("X-Webhook-Event-Id") for request in posts} == {event.event_id}
    assert all(
        request.header("X-Webhook-Signature") == hmac_sha512_hex(request.body, secret)
        for request in posts
    )
    log = worker.log_path.read_text()
    assert "webhook_delivery_send_task" in log
    assert "Retry in" in log  # the worker itself scheduled the retries (Celery countdown)
