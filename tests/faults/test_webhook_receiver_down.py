"""The merchant's webhook receiver is down for several attempts.

Three collection transactions are completed (test helper); each event goes to its callback URL
and to the merchant's webhook URL. Nothing listens on the receiver's port at first, so a real
Celery worker's attempts fail (connection refused) and are retried with backoff (1 s here).
Once every delivery has failed several times the receiver comes up: every event is delivered,
with its original event id and byte-for-byte body, exactly once per destination.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from collections_app.services import CustomerInfo, transaction_initialize
from merchants.models import Mode
from merchants.services import webhook_settings_set
from payment_items.demo import demo_catalogue_seed
from tests.faults.conftest import Broker, Processes, free_port, wait_for
from webhooks.models import DeliveryStatus, Event, WebhookDelivery
from webhooks.signing import webhook_signature_compute

pytestmark = [pytest.mark.multiprocess]

FAILED_ATTEMPTS_WHILE_DOWN = 3
EVENTS = 3


@dataclass
class Receiver:
    port: int
    received: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.received.append(
                        {
                            "path": self.path,
                            "event_id": self.headers.get("X-Webhook-Event-Id"),
                            "signature": self.headers.get("X-Webhook-Signature"),
                            "body": body,
                        }
                    )
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    down = Receiver(port=free_port())  # nothing listens here until start()
    try:
        yield down
    finally:
        down.stop()


@pytest.mark.django_db(transaction=True)
def test_events_reach_a_receiver_that_was_down_with_their_ids_once_it_is_back(
    settings: Any,
    merchant_account,
    test_client,
    broker: Broker,
    processes: Processes,
    receiver: Receiver,
) -> None:
    settings.CALLBACK_URL_ALLOW_PRIVATE = True  # the receiver is on loopback
    merchant = merchant_account.merchant
    hooks = webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/hooks"))
    item_id = demo_catalogue_seed(merchant=merchant)["payment_items"]["fixed"]
    worker = processes.worker(
        "worker-webhooks",
        queue=broker.queue,
        CELERY_BROKER_URL=broker.url,
        CALLBACK_URL_ALLOW_PRIVATE="1",
        WEBHOOK_RETRY_DELAYS_SECONDS="1",
        WEBHOOK_RETRY_JITTER="0",
        WEBHOOK_CONNECT_TIMEOUT_SECONDS="1",
        WEBHOOK_READ_TIMEOUT_SECONDS="2",
    )

    for n in range(EVENTS):
        created = transaction_initialize(
            merchant=merchant,
            mode=Mode.TEST,
            payment_item_id=item_id,
            transaction_reference=f"hook-down-{n}",
            channel="bank-transfer",
            amount=Decimal("7000.00"),
            customer_info=CustomerInfo(
                email="ada@example.com",
                phone_number="08012345678",
                first_name="Ada",
                last_name="Obi",
            ),
            callback_url=receiver.url(f"/callback/{n}"),
        ).transaction
        completed = test_client.post(
            f"/api/v1/test-helpers/transactions/{created.reference}/complete",
            {"outcome": "paid"},
            format="json",
        )
        assert completed.status_code == 200, completed.content

    events = list(Event.objects.filter(merchant=merchant))
    assert len(events) == EVENTS
    deliveries = WebhookDelivery.objects.filter(event__in=events)
    assert deliveries.count() == 2 * EVENTS  # callback URL and webhook URL for each event

    wait_for(
        lambda: all(d.attempt_count >= FAILED_ATTEMPTS_WHILE_DOWN for d in deliveries.all()),
        timeout=60,
        what=f"failed attempts while the receiver is down; worker log:\n{worker.output()[-3000:]}",
    )
    assert receiver.received == []
    assert all(d.status == DeliveryStatus.PENDING for d in deliveries.all())
    assert all(d.last_error for d in deliveries.all())

    receiver.start()
    wait_for(
        lambda: all(d.status == DeliveryStatus.SUCCEEDED for d in deliveries.all()),
        timeout=60,
        what=f"delivery once the receiver is back; worker log:\n{worker.output()[-3000:]}",
    )

    by_id = {event.event_id: event for event in events}
    with receiver.lock:
        received = list(receiver.received)
    per_destination = Counter((r["event_id"], r["path"]) for r in received)
    assert all(count == 1 for count in per_destination.values()), per_destination
    assert {event_id for event_id, _ in per_destination} == set(by_id)
    assert len(received) == 2 * EVENTS
    for request in received:
        event = by_id[request["event_id"]]
        assert request["body"] == event.body_bytes
        if request["path"] == "/hooks":
            assert request["signature"] == webhook_signature_compute(
                event.body_bytes, secret=hooks.secret
            )
    for delivery in deliveries.all():
        assert delivery.attempt_count >= FAILED_ATTEMPTS_WHILE_DOWN + 1
        assert delivery.attempts.filter(succeeded=True).count() == 1
