"""Delivery of events: signed POSTs of the stored bytes to a real local receiver, attempts
recorded, retries with backoff for 72 hours, SSRF checks at send time, resend and the sweeper."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import responses
from celery.exceptions import Retry
from django.conf import settings as django_settings
from django.db import DatabaseError
from django.utils import timezone

from collections_app.models import CollectionTransaction, PaymentStatus
from collections_app.services import transaction_confirm
from merchants.models import Merchant, Mode, WebhookSettings
from tests.collections_app.factories import CollectionTransactionFactory
from tests.collections_app.helpers import ReceivedRequest, RecordingReceiver, hmac_sha512_hex
from tests.merchants.factories import WebhookSettingsFactory
from webhooks import deliveries, tasks
from webhooks.deliveries import (
    DeliveryAttemptResult,
    PostResult,
    event_resend,
    retry_delay_seconds,
    webhook_deliveries_due_ids,
    webhook_deliveries_expire,
    webhook_deliveries_sweep,
    webhook_delivery_attempt,
    webhook_delivery_resend,
)
from webhooks.models import (
    DeliveryStatus,
    DeliveryTarget,
    Event,
    WebhookDelivery,
    WebhookDeliveryAttempt,
)
from webhooks.signing import webhook_signature_compute

pytestmark = pytest.mark.django_db

SECRET = "whsec_delivery_tests_secret"
DEFAULT_DELAYS = [30, 120, 600, 1800, 3600, 7200, 14400, 28800]


@pytest.fixture
def allow_private(settings: Any) -> None:
    settings.CALLBACK_URL_ALLOW_PRIVATE = True


@pytest.fixture
def receiver(allow_private: None) -> Iterator[RecordingReceiver]:
    server = RecordingReceiver().start()
    yield server
    server.stop()


@pytest.fixture
def no_jitter(settings: Any) -> None:
    settings.WEBHOOK_RETRY_JITTER = 0.0


def paid_event(
    merchant: Merchant, callback_url: str, *, webhook_url: str = "", secret: str = SECRET
) -> Event:
    if webhook_url or secret:
        WebhookSettings.objects.update_or_create(
            merchant=merchant, mode=Mode.TEST, defaults={"url": webhook_url, "secret": secret}
        )
    txn = CollectionTransactionFactory(merchant=merchant, callback_url=callback_url)
    transaction_confirm(collection=txn, outcome=PaymentStatus.PAID, gateway_reference="SBX_9")
    return Event.objects.get(transaction=txn)


def chain(event: Event, target: str = DeliveryTarget.CALLBACK_URL) -> WebhookDelivery:
    return event.deliveries.get(target=target)


def attempt(delivery: WebhookDelivery, now: datetime | None = None):  # type: ignore[no-untyped-def]
    return webhook_delivery_attempt(delivery_id=delivery.pk, now=now)


# --- signature and bytes -----------------------------------------------------------------------


def test_signature_matches_an_independent_hmac_of_the_raw_body(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    event = paid_event(merchant, receiver.url("/callback"))
    attempt(chain(event))
    [received] = receiver.received("POST", "/callback")
    assert received.body == event.body.encode("utf-8")
    signature = received.header("X-Webhook-Signature")
    assert signature == hmac_sha512_hex(received.body, SECRET)
    assert signature == signature.lower() and len(signature) == 128
    assert webhook_signature_compute(received.body, secret=SECRET) == signature
    assert received.header("Content-Type") == "application/json"
    assert received.header("X-Webhook-Event") == "transaction.paid"
    assert received.header("X-Webhook-Event-Id") == event.event_id
    assert received.json()["id"] == event.event_id
    assert received.json()["data"]["reference"] == event.reference


def test_without_a_secret_there_is_no_signature_header(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    event = paid_event(merchant, receiver.url("/callback"), secret="")
    attempt(chain(event))
    [received] = receiver.received("POST")
    assert received.header("X-Webhook-Signature") is None
    assert chain(event).status == DeliveryStatus.SUCCEEDED


def test_callback_and_webhook_both_receive_the_signed_event(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    event = paid_event(merchant, receiver.url("/callback"), webhook_url=receiver.url("/webhook"))
    for delivery in event.deliveries.all():
        attempt(delivery)
    by_path = {request.path: request for request in receiver.received("POST")}
    assert set(by_path) == {"/callback", "/webhook"}
    assert by_path["/callback"].body == by_path["/webhook"].body == event.body_bytes
    for request in by_path.values():
        assert request.header("X-Webhook-Signature") == hmac_sha512_hex(request.body, SECRET)


def test_a_rotated_secret_signs_the_next_attempt(
    merchant: Merchant, receiver: RecordingReceiver, no_jitter: None
) -> None:
    answers = iter([500, 200])
    receiver.answer = lambda request: (next(answers), b"", {})
    event = paid_event(merchant, receiver.url("/callback"))
    delivery = chain(event)
    first = attempt(delivery)
    WebhookSettings.objects.filter(merchant=merchant).update(secret="whsec_rotated")
    attempt(delivery, now=first.delivery.next_attempt_at)
    old, new = receiver.received("POST")
    assert old.body == new.body
    assert old.header("X-Webhook-Signature") == hmac_sha512_hex(old.body, SECRET)
    assert new.header("X-Webhook-Signature") == hmac_sha512_hex(new.body, "whsec_rotated")


# --- recording ---------------------------------------------------------------------------------


def test_a_2xx_answer_ends_the_chain_and_is_recorded(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    receiver.answer = lambda request: (202, b"x" * 2000, {})
    event = paid_event(merchant, receiver.url("/callback"))
    now = timezone.now()
    recorded = attempt(chain(event), now=now)
    delivery = recorded.delivery
    assert delivery.status == DeliveryStatus.SUCCEEDED
    assert (delivery.attempt_count, delivery.last_status_code) == (1, 202)
    assert delivery.next_attempt_at is None
    assert delivery.delivered_at == now
    row = WebhookDeliveryAttempt.objects.get(delivery=delivery)
    assert (row.attempt_number, row.status_code, row.succeeded) == (1, 202, True)
    assert row.url == receiver.url("/callback")
    assert row.latency_ms is not None and row.latency_ms >= 0
    assert row.response_excerpt == "x" * 500
    assert row.error == ""
    assert row.next_attempt_at is None


def test_an_answer_with_nul_bytes_is_recorded_and_ends_the_chain(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    """Found by the simulator on PostgreSQL: a receiver answering NUL bytes made the attempt
    unrecordable (text columns refuse NUL), so the delivery was re-sent for ever."""
    receiver.answer = lambda request: (200, b"\x00\xff\xfe ok \x00" + b"A" * 4000, {})
    event = paid_event(merchant, receiver.url("/callback"))
    recorded = attempt(chain(event), now=timezone.now())
    assert recorded.delivery.status == DeliveryStatus.SUCCEEDED
    row = WebhookDeliveryAttempt.objects.get(delivery=recorded.delivery)
    assert "\x00" not in row.response_excerpt
    assert row.response_excerpt.startswith("\ufffd\ufffd\ufffd ok \ufffd")


def test_a_5xx_answer_schedules_the_next_attempt(
    merchant: Merchant, receiver: RecordingReceiver, no_jitter: None
) -> None:
    receiver.answer = lambda request: (503, b'{"error":"busy"}', {})
    event = paid_event(merchant, receiver.url("/callback"))
    now = timezone.now()
    recorded = attempt(chain(event), now=now)
    assert recorded.delivery.status == DeliveryStatus.PENDING
    assert recorded.delivery.next_attempt_at == now + timedelta(seconds=30)
    assert recorded.attempt.status_code == 503
    assert recorded.attempt.response_excerpt == '{"error":"busy"}'
    assert recorded.attempt.next_attempt_at == now + timedelta(seconds=30)
    assert not recorded.attempt.succeeded


def test_redirects_are_not_followed_and_count_as_failure(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    receiver.answer = lambda request: (
        (302, b"", {"Location": receiver.url("/elsewhere")})
        if request.path == "/callback"
        else (200, b"", {})
    )
    event = paid_event(merchant, receiver.url("/callback"))
    recorded = attempt(chain(event))
    assert recorded.attempt.status_code == 302
    assert recorded.delivery.status == DeliveryStatus.PENDING
    assert [request.path for request in receiver.received()] == ["/callback"]


def test_a_slow_receiver_times_out(
    merchant: Merchant, receiver: RecordingReceiver, settings: Any
) -> None:
    settings.WEBHOOK_READ_TIMEOUT_SECONDS = 0.3

    def slow(request: ReceivedRequest) -> tuple[int, bytes, dict[str, str]]:
        time.sleep(1.0)
        return 200, b"", {}

    receiver.answer = slow
    event = paid_event(merchant, receiver.url("/callback"))
    started = time.monotonic()
    recorded = attempt(chain(event))
    assert time.monotonic() - started < 0.9
    assert recorded.attempt.status_code is None
    assert recorded.attempt.error.startswith("timeout")
    assert recorded.delivery.status == DeliveryStatus.PENDING


def test_a_receiver_that_is_down_is_a_connection_error(
    merchant: Merchant, allow_private: None
) -> None:
    down = RecordingReceiver()  # never started: connection refused
    event = paid_event(merchant, down.url("/callback"))
    recorded = attempt(chain(event))
    assert recorded.attempt.status_code is None
    assert recorded.attempt.error.startswith("connection error")
    assert recorded.delivery.status == DeliveryStatus.PENDING
    assert recorded.delivery.last_error == recorded.attempt.error


class RawReceiver:
    """A one-shot TCP server on 127.0.0.1 that reads each request and answers with the exact
    bytes given, however malformed, then closes the connection."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.requests = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)
        self.port = self._server.getsockname()[1]
        self._running = True
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def url(self, path: str = "/callback") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        while self._running:
            try:
                connection, _address = self._server.accept()
            except (TimeoutError, OSError):
                continue
            with connection:
                connection.settimeout(2)
                received = b""
                while b"\r\n\r\n" not in received:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    received += chunk
                head, _, body = received.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                while len(body) < length:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    body += chunk
                self.requests += 1
                with contextlib.suppress(OSError):
                    connection.sendall(self.reply)

    def stop(self) -> None:
        self._running = False
        self._thread.join(timeout=2)
        self._server.close()


ODD_REPLIES = {
    "status 600": b"HTTP/1.1 600 Beyond\r\nContent-Length: 2\r\n\r\nok",
    "status 999": b"HTTP/1.1 999 Weird\r\nContent-Length: 2\r\n\r\nok",
    "status 42": b"HTTP/1.1 42 Too Low\r\nContent-Length: 2\r\n\r\nok",
    "status 1000": b"HTTP/1.1 1000 Too High\r\nContent-Length: 2\r\n\r\nok",
    "status not a number": b"HTTP/1.1 2OO OK\r\n\r\n",
    "not http at all": b"\x00\xff\xfe garbage \x00\r\n\r\n",
    "empty reply": b"",
    "invalid utf-8 body": b"HTTP/1.1 500 Oops\r\nContent-Length: 6\r\n\r\n\xff\xfe\xc3(\xed\xa0",
    "NUL in the reason": b"HTTP/1.1 503 Busy\x00\x00\r\nContent-Length: 0\r\n\r\n",
    "a 70 KB header line": (
        b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 70_000 + b"\r\nContent-Length: 0\r\n\r\n"
    ),
    "200 headers": (
        b"HTTP/1.1 200 OK\r\n"
        + b"".join(b"X-H%d: v\r\n" % index for index in range(200))
        + b"Content-Length: 0\r\n\r\n"
    ),
    "non-latin header bytes": (
        b"HTTP/1.1 502 Bad\r\nX-Odd: \xff\x00\xe2\x80\xae\r\nContent-Length: 0\r\n\r\n"
    ),
    "body shorter than announced": b"HTTP/1.1 500 Oops\r\nContent-Length: 999\r\n\r\nshort",
    "a gzip body that is not gzip": (
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 8\r\n\r\nnot gzip"
    ),
    "a chunked body that is not chunked": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnope\r\n"
    ),
}


@pytest.mark.parametrize("name", sorted(ODD_REPLIES))
def test_an_odd_reply_is_recorded_as_an_attempt(
    merchant: Merchant, allow_private: None, name: str
) -> None:
    """Whatever a receiver answers, the attempt is recorded and the chain moves on: an
    unrecordable attempt would leave the delivery to be sent again and again."""
    raw = RawReceiver(ODD_REPLIES[name])
    try:
        event = paid_event(merchant, raw.url())
        now = timezone.now()
        recorded = attempt(chain(event), now=now)
    finally:
        raw.stop()
    assert raw.requests == 1
    assert recorded is not None
    row = WebhookDeliveryAttempt.objects.get(delivery=recorded.delivery)
    assert row.attempt_number == 1
    assert "\x00" not in row.error + row.response_excerpt
    assert row.status_code is None or 100 <= row.status_code <= 999
    delivery = WebhookDelivery.objects.get(pk=recorded.delivery.pk)
    assert delivery.attempt_count == 1
    if delivery.status == DeliveryStatus.PENDING:
        assert delivery.next_attempt_at > now
    assert attempt(delivery, now=now) is None  # nothing is re-sent before its time


# --- give-up time ------------------------------------------------------------------------------


def _window_ends_in(delivery: WebhookDelivery, seconds: int) -> WebhookDelivery:
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        give_up_at=delivery.next_attempt_at + timedelta(seconds=seconds)
    )
    delivery.refresh_from_db()
    return delivery


def test_a_claim_never_extends_a_delivery_past_its_give_up_time(
    merchant: Merchant, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.WEBHOOK_DELIVERY_CLAIM_SECONDS = 60
    delivery = _window_ends_in(chain(paid_event(merchant, "https://merchant.example.com/a")), 10)
    now = delivery.next_attempt_at
    monkeypatch.setattr(deliveries, "webhook_post", _lost_worker)
    with pytest.raises(WorkerLost):
        attempt(delivery, now=now)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.next_attempt_at == delivery.give_up_at == now + timedelta(seconds=10)


class WorkerLost(Exception):
    """The worker died after claiming, before the attempt could be recorded."""


def _lost_worker(**kwargs: Any) -> PostResult:
    raise WorkerLost()


def _unrecordable(**kwargs: Any) -> DeliveryAttemptResult:
    raise DatabaseError("the attempt could not be stored")


@pytest.mark.parametrize("failure", ["worker lost after the claim", "attempt not recordable"])
def test_a_delivery_whose_attempts_never_get_recorded_fails_at_its_give_up_time(
    merchant: Merchant,
    receiver: RecordingReceiver,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    failure: str,
) -> None:
    """A claim used to move ``next_attempt_at`` a lease ahead whatever ``give_up_at`` said: a
    delivery whose attempts were never recorded was claimed, and sent, for ever."""
    settings.WEBHOOK_DELIVERY_CLAIM_SECONDS = 60
    receiver.answer = lambda request: (500, b"", {})
    delivery = _window_ends_in(chain(paid_event(merchant, receiver.url("/callback"))), 300)
    if failure == "attempt not recordable":
        monkeypatch.setattr(deliveries, "_attempt_record", _unrecordable)
        expected: type[Exception] = DatabaseError
    else:
        monkeypatch.setattr(deliveries, "webhook_post", _lost_worker)
        expected = WorkerLost
    now = delivery.next_attempt_at
    claims = 0
    for _ in range(100):  # a frozen clock, advanced to each due time
        if webhook_deliveries_due_ids(now=now) != [delivery.pk]:
            break
        try:
            outcome = attempt(delivery, now=now)
        except expected:
            claims += 1
            delivery.refresh_from_db()
            assert delivery.next_attempt_at <= delivery.give_up_at
            now = delivery.next_attempt_at
        else:
            assert outcome is None
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.next_attempt_at is None
    assert claims == 5  # at 0, 60, 120, 180 and 240 s; at 300 s the window is over
    sends = len(receiver.received("POST"))
    assert sends == (claims if failure == "attempt not recordable" else 0)
    assert webhook_deliveries_due_ids(now=now + timedelta(days=30)) == []


def test_a_due_attempt_not_started_before_give_up_time_is_not_sent_and_fails(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    delivery = _window_ends_in(chain(paid_event(merchant, receiver.url("/callback"))), 5)
    assert attempt(delivery, now=delivery.give_up_at + timedelta(seconds=1)) is None
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.next_attempt_at is None
    assert receiver.received() == []


def test_the_sweeper_fails_deliveries_past_give_up_time_and_enqueues_the_rest(
    merchant: Merchant, monkeypatch: pytest.MonkeyPatch
) -> None:
    enqueued: list[int] = []
    monkeypatch.setattr(tasks.webhook_delivery_send_task, "delay", enqueued.append)
    expired = chain(paid_event(merchant, "https://merchant.example.com/a"))
    claimed_past = chain(paid_event(merchant, "https://merchant.example.com/b"))
    due = chain(paid_event(merchant, "https://merchant.example.com/c"))
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=expired.pk).update(
        next_attempt_at=now - timedelta(hours=1), give_up_at=now - timedelta(minutes=1)
    )
    # A lease taken before claims were capped: it runs past the give-up time.
    WebhookDelivery.objects.filter(pk=claimed_past.pk).update(
        next_attempt_at=now + timedelta(minutes=1), give_up_at=now - timedelta(seconds=1)
    )
    WebhookDelivery.objects.filter(pk=due.pk).update(next_attempt_at=now - timedelta(seconds=1))
    assert webhook_deliveries_sweep(now=now) == 1
    assert enqueued == [due.pk]
    statuses = dict(
        WebhookDelivery.objects.filter(pk__in=[expired.pk, claimed_past.pk, due.pk]).values_list(
            "pk", "status"
        )
    )
    assert statuses == {
        expired.pk: DeliveryStatus.FAILED,
        claimed_past.pk: DeliveryStatus.FAILED,
        due.pk: DeliveryStatus.PENDING,
    }
    assert WebhookDelivery.objects.get(pk=expired.pk).next_attempt_at is None


def test_an_attempt_in_flight_at_give_up_time_is_still_recorded(
    merchant: Merchant, receiver: RecordingReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweeper may fail a delivery while its last attempt is being sent; that attempt's
    outcome is still recorded, and a 2xx still counts as delivered."""
    delivery = _window_ends_in(chain(paid_event(merchant, receiver.url("/callback"))), 5)
    started = delivery.next_attempt_at
    real_post = deliveries.webhook_post

    def post_while_the_sweeper_runs(**kwargs: Any) -> PostResult:
        webhook_deliveries_expire(now=started + timedelta(seconds=6))
        return real_post(**kwargs)

    monkeypatch.setattr(deliveries, "webhook_post", post_while_the_sweeper_runs)
    recorded = attempt(delivery, now=started)
    assert recorded is not None
    assert recorded.delivery.status == DeliveryStatus.SUCCEEDED
    assert recorded.attempt.succeeded is True


# --- schedule ----------------------------------------------------------------------------------


def test_the_default_schedule() -> None:
    assert django_settings.WEBHOOK_RETRY_DELAYS_SECONDS == DEFAULT_DELAYS
    assert django_settings.WEBHOOK_RETRY_WINDOW_HOURS == 72
    assert django_settings.WEBHOOK_RETRY_JITTER == 0.2
    assert django_settings.WEBHOOK_CONNECT_TIMEOUT_SECONDS == 3.0
    assert django_settings.WEBHOOK_READ_TIMEOUT_SECONDS == 5.0


@pytest.mark.parametrize(
    ("failed_attempts", "seconds"),
    [(1, 30), (2, 120), (3, 600), (4, 1800), (5, 3600), (6, 7200), (7, 14400), (8, 28800)]
    + [(9, 28800), (15, 28800)],
)
def test_backoff_grows_then_caps_at_8_hours(failed_attempts: int, seconds: int) -> None:
    assert retry_delay_seconds(failed_attempts=failed_attempts, jitter=0) == seconds


def test_jitter_spreads_delays_within_20_percent() -> None:
    samples = [retry_delay_seconds(failed_attempts=3) for _ in range(300)]
    assert all(480 <= sample <= 720 for sample in samples)
    assert len({round(sample, 3) for sample in samples}) > 50
    assert min(samples) < 560 and max(samples) > 640


def test_a_receiver_down_for_72_hours_gets_16_attempts_then_the_chain_fails(
    merchant: Merchant, allow_private: None, no_jitter: None
) -> None:
    down = RecordingReceiver()
    event = paid_event(merchant, down.url("/callback"))
    delivery = chain(event)
    start = delivery.next_attempt_at
    now = start
    while True:
        recorded = attempt(delivery, now=now)
        assert recorded is not None
        if recorded.delivery.status != DeliveryStatus.PENDING:
            break
        assert attempt(delivery, now=now) is None  # claimed / not yet due
        now = recorded.delivery.next_attempt_at
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.next_attempt_at is None
    rows = list(delivery.attempts.order_by("attempt_number"))
    assert [row.attempt_number for row in rows] == list(range(1, 17))
    offsets = [int((row.created_at - start).total_seconds()) for row in rows]
    assert offsets[:9] == [0, 30, 150, 750, 2550, 6150, 13350, 27750, 56550]
    assert offsets[-1] == 258150  # 71 h 42 min: the next one would be past 72 h
    assert rows[-1].next_attempt_at is None
    assert all(row.created_at <= delivery.give_up_at for row in rows)
    assert webhook_deliveries_due_ids(now=start + timedelta(days=30)) == []


def test_a_receiver_down_for_a_while_then_up_gets_every_event(
    merchant: Merchant, allow_private: None, no_jitter: None
) -> None:
    """Connection refused, then 503s, then 200: every chain ends delivered; each event reached
    each URL with the same id and bytes on every attempt, and exactly once with a 2xx."""
    receiver = RecordingReceiver()
    events = [
        paid_event(merchant, receiver.url("/callback"), webhook_url=receiver.url("/webhook"))
        for _ in range(3)
    ]
    chains = WebhookDelivery.objects.filter(event__in=events)
    assert chains.count() == 6
    answer = {"status": 503}
    receiver.answer = lambda request: (answer["status"], b"", {})
    now = timezone.now()
    try:
        for step in range(4):
            if step == 1:
                receiver.start()  # up again, but failing
            if step == 2:
                answer["status"] = 200
            due = webhook_deliveries_due_ids(now=now)
            assert len(due) == (6 if step < 3 else 0)
            for delivery_id in due:
                webhook_delivery_attempt(delivery_id=delivery_id, now=now)
            pending = chains.filter(status=DeliveryStatus.PENDING)
            if pending.exists():
                now = min(delivery.next_attempt_at for delivery in pending)
    finally:
        receiver.stop()
    assert set(chains.values_list("status", flat=True)) == {DeliveryStatus.SUCCEEDED}
    stored = {event.event_id: event.body_bytes for event in events}
    posts = receiver.received("POST")
    assert len(posts) == 12  # six refused connections left no trace; six 503s; six 200s
    assert all(stored[request.header("X-Webhook-Event-Id")] == request.body for request in posts)
    assert all(json.loads(request.body)["id"] in stored for request in posts)
    delivered = sorted(
        (request.header("X-Webhook-Event-Id"), request.path)
        for request in posts
        if request.answered == 200
    )
    assert delivered == sorted(
        (event_id, path) for event_id in stored for path in ("/callback", "/webhook")
    )
    for delivery in chains:
        rows = list(delivery.attempts.order_by("attempt_number"))
        assert [row.attempt_number for row in rows] == [1, 2, 3]
        assert rows[0].error.startswith("connection error")
        assert [row.status_code for row in rows] == [None, 503, 200]
        assert [row.succeeded for row in rows] == [False, False, True]


# --- SSRF at send time -------------------------------------------------------------------------


def test_a_url_that_now_resolves_to_a_private_address_is_refused_unsent(
    merchant: Merchant, fake_dns: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    event = paid_event(merchant, "https://merchant.example.com/callback")
    monkeypatch.setitem(fake_dns, "merchant.example.com", ["10.1.2.3"])
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add(responses.POST, "https://merchant.example.com/callback", status=200)
        recorded = attempt(chain(event))
        assert len(mock.calls) == 0
    assert recorded.attempt.status_code is None
    assert recorded.attempt.error.startswith("refused by the SSRF check")
    assert "private address (10.1.2.3)" in recorded.attempt.error
    assert recorded.delivery.status == DeliveryStatus.PENDING
    assert recorded.delivery.next_attempt_at is not None


def test_the_same_url_is_sent_while_it_resolves_publicly(
    merchant: Merchant, fake_dns: dict[str, list[str]]
) -> None:
    event = paid_event(merchant, "https://merchant.example.com/callback")
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, "https://merchant.example.com/callback", status=200)
        recorded = attempt(chain(event))
        assert mock.calls[0].request.body == event.body_bytes
    assert recorded.delivery.status == DeliveryStatus.SUCCEEDED


def test_loopback_is_refused_unless_private_urls_are_allowed(
    merchant: Merchant, settings: Any
) -> None:
    receiver = RecordingReceiver().start()
    try:
        event = paid_event(merchant, receiver.url("/callback"))
        settings.CALLBACK_URL_ALLOW_PRIVATE = False
        refused = attempt(chain(event))
        assert refused.attempt.error.startswith("refused by the SSRF check")
        assert receiver.received() == []
        settings.CALLBACK_URL_ALLOW_PRIVATE = True
        sent = attempt(chain(event), now=refused.delivery.next_attempt_at)
        assert sent.delivery.status == DeliveryStatus.SUCCEEDED
        assert len(receiver.received("POST")) == 1
    finally:
        receiver.stop()


def test_the_connection_goes_to_the_address_that_was_checked(
    merchant: Merchant,
    receiver: RecordingReceiver,
    fake_dns: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The name only resolves through the checked (fake) resolver: the request reaching the
    local receiver proves the connection used the checked address, with the original Host."""
    monkeypatch.setitem(fake_dns, "hooks.example.test", ["127.0.0.1"])
    url = f"http://hooks.example.test:{receiver.port}/callback"
    event = paid_event(merchant, url)
    recorded = attempt(chain(event))
    assert recorded.delivery.status == DeliveryStatus.SUCCEEDED
    [received] = receiver.received("POST")
    assert received.header("Host") == f"hooks.example.test:{receiver.port}"


# --- claims, task, sweeper, resend -------------------------------------------------------------


def test_an_attempt_is_made_only_when_due(merchant: Merchant, receiver: RecordingReceiver) -> None:
    event = paid_event(merchant, receiver.url("/callback"))
    delivery = chain(event)
    assert attempt(delivery, now=delivery.next_attempt_at - timedelta(seconds=1)) is None
    assert attempt(delivery) is not None
    assert attempt(delivery) is None  # delivered
    assert len(receiver.received("POST")) == 1


def test_task_body_retries_a_near_attempt_and_leaves_far_ones_to_the_sweeper(
    merchant: Merchant, receiver: RecordingReceiver, no_jitter: None, settings: Any
) -> None:
    receiver.answer = lambda request: (500, b"", {})
    event = paid_event(merchant, receiver.url("/callback"))
    delivery = chain(event)
    with pytest.raises(Retry):
        tasks.webhook_delivery_send_task(delivery.pk)  # next in 30 s: Celery countdown
    assert tasks.webhook_delivery_send_task(delivery.pk) == "not due"
    settings.WEBHOOK_TASK_RETRY_MAX_COUNTDOWN_SECONDS = 10
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    assert tasks.webhook_delivery_send_task(delivery.pk) == "pending"  # 2 min: the sweeper's
    receiver.answer = lambda request: (200, b"", {})
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    assert tasks.webhook_delivery_send_task(delivery.pk) == "succeeded"


def test_sweeper_enqueues_due_deliveries_only(
    merchant: Merchant, monkeypatch: pytest.MonkeyPatch
) -> None:
    enqueued: list[int] = []
    monkeypatch.setattr(tasks.webhook_delivery_send_task, "delay", enqueued.append)
    due = chain(paid_event(merchant, "https://merchant.example.com/a"))
    later = chain(paid_event(merchant, "https://merchant.example.com/b"))
    done = chain(paid_event(merchant, "https://merchant.example.com/c"))
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=later.pk).update(next_attempt_at=now + timedelta(minutes=5))
    WebhookDelivery.objects.filter(pk=done.pk).update(
        status=DeliveryStatus.SUCCEEDED, next_attempt_at=None
    )
    assert webhook_deliveries_sweep(now=now) == 1
    assert enqueued == [due.pk]
    assert webhook_deliveries_sweep(now=now + timedelta(minutes=6)) == 2


def test_beat_runs_the_sweeper() -> None:
    entry = django_settings.CELERY_BEAT_SCHEDULE["collections-webhook-deliveries-due"]
    assert entry["task"] == tasks.webhook_deliveries_sweep_task.name
    assert entry["schedule"] == timedelta(seconds=30)


def test_resend_is_a_new_chain_with_the_same_event_and_bytes(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    event = paid_event(merchant, receiver.url("/callback"))
    original = chain(event)
    attempt(original)
    resent = webhook_delivery_resend(delivery=original)
    assert resent.pk != original.pk
    assert (resent.event_id, resent.url, resent.resend_of_id) == (
        event.pk,
        original.url,
        original.pk,
    )
    assert (resent.status, resent.attempt_count) == (DeliveryStatus.PENDING, 0)
    attempt(resent)
    first, second = receiver.received("POST")
    assert first.body == second.body == event.body_bytes
    assert first.header("X-Webhook-Event-Id") == second.header("X-Webhook-Event-Id")
    original.refresh_from_db()
    assert (original.status, original.attempt_count) == (DeliveryStatus.SUCCEEDED, 1)
    resent.refresh_from_db()
    assert (resent.status, resent.attempt_count) == (DeliveryStatus.SUCCEEDED, 1)


def test_event_resend_covers_every_destination_once(merchant: Merchant) -> None:
    event = paid_event(
        merchant, "https://merchant.example.com/callback", webhook_url="https://shop.example.org/h"
    )
    resent = event_resend(event=event)
    assert sorted(d.target for d in resent) == ["callback_url", "webhook_url"]
    event_resend(event=event)
    assert event.deliveries.count() == 6
    assert event.deliveries.filter(resend_of__isnull=False).count() == 4


def test_resend_is_enqueued_on_commit(
    merchant: Merchant, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    enqueued: list[int] = []
    monkeypatch.setattr(tasks.webhook_delivery_send_task, "delay", enqueued.append)
    original = chain(paid_event(merchant, "https://merchant.example.com/callback"))
    with django_capture_on_commit_callbacks(execute=True):
        resent = webhook_delivery_resend(delivery=original)
    assert enqueued == [resent.pk]


def test_unused_webhook_settings_factory_secret_is_independent(merchant: Merchant) -> None:
    """Two merchants never sign with each other's secret."""
    other = WebhookSettingsFactory(secret="whsec_other")
    event = paid_event(merchant, "https://merchant.example.com/callback")
    assert other.merchant_id != event.merchant_id
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, "https://merchant.example.com/callback", status=200)
        attempt(chain(event))
        header = mock.calls[0].request.headers["X-Webhook-Signature"]
    assert header == hmac_sha512_hex(event.body_bytes, SECRET)
    assert header != hmac_sha512_hex(event.body_bytes, "whsec_other")


def test_transaction_model_is_untouched_by_delivery(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    event = paid_event(merchant, receiver.url("/callback"))
    before = CollectionTransaction.objects.get(pk=event.transaction_id).updated_at
    attempt(chain(event))
    assert CollectionTransaction.objects.get(pk=event.transaction_id).updated_at == before
