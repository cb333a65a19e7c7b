"""The events routes (an extension beside the routes of docs/spec.md): the merchant's events of
the key's mode, one event with the exact bytes sent and every attempt, and a resend to the
merchant's current webhook URL."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import requests
import responses
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from collections_app.models import PaymentStatus
from collections_app.services import transaction_confirm
from core.api.throttling import SecretKeyRateThrottle
from merchants.models import Merchant, Mode, WebhookSettings
from merchants.services import MerchantCreated, merchant_create
from payouts.events import payout_event_emit
from payouts.models import PayoutStatus
from tests.collections_app.factories import CollectionTransactionFactory
from tests.merchants.factories import WebhookSettingsFactory
from tests.payouts.factories import PayoutFactory
from wallets.selectors import wallet_get
from webhooks import tasks
from webhooks.deliveries import webhook_delivery_attempt
from webhooks.models import DeliveryStatus, DeliveryTarget, Event, EventType, WebhookDelivery

pytestmark = pytest.mark.django_db

EVENTS_URL = "/api/v1/events"
WEBHOOK_URL = "https://merchant.example.com/webhooks"
NEW_WEBHOOK_URL = "https://shop.example.org/hooks/payments"
CALLBACK_URL = "https://merchant.example.com/payments/callback"
LAGOS = ZoneInfo("Africa/Lagos")
UNAUTHORIZED = {
    "status": False,
    "message": "Unauthorized: invalid or missing secret key",
    "data": None,
    "statusCode": 401,
}
NOT_FOUND = {"status": False, "message": "Event not found", "data": None, "statusCode": 404}
ITEM_KEYS = {"id", "type", "reference", "created_at", "delivery_status"}
SUMMARY_KEYS = {"status", "attempt_count", "last_status_code", "next_attempt_at", "delivered_at"}
DELIVERY_KEYS = {
    "id",
    "target",
    "url",
    "status",
    "attempt_count",
    "last_status_code",
    "last_error",
    "next_attempt_at",
    "give_up_at",
    "delivered_at",
    "resend_of",
    "created_at",
    "attempts",
}
ATTEMPT_KEYS = {"attempt_number", "status_code", "succeeded", "error", "latency_ms", "created_at"}


def detail_url(event: Event | str) -> str:
    event_id = event if isinstance(event, str) else event.event_id
    return f"{EVENTS_URL}/{event_id}"


def resend_url(event: Event | str) -> str:
    return detail_url(event) + "/resend"


@contextmanager
def clock(at: datetime | None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``timezone.now()`` reads ``at`` (when given), so an event is recorded at that instant."""
    if at is None:
        yield
        return
    with monkeypatch.context() as patch:
        patch.setattr(timezone, "now", lambda: at)
        yield


@pytest.fixture
def record_payout_event(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A final payout's event through ``payout_event_emit`` (the code path settlement uses)."""

    def record(
        merchant: Merchant,
        *,
        mode: str = Mode.TEST,
        status: str = PayoutStatus.SUCCESSFUL,
        at: datetime | None = None,
    ) -> Event:
        payout = PayoutFactory(
            wallet=wallet_get(merchant=merchant, mode=mode),
            status=status,
            completed_at=at or timezone.now(),
        )
        with clock(at, monkeypatch):
            payout_event_emit(payout=payout)
        return Event.objects.get(payout=payout)

    return record


def paid_collection_event(merchant: Merchant, *, callback_url: str = CALLBACK_URL) -> Event:
    """A collection transaction confirmed paid through ``transaction_confirm``."""
    txn = CollectionTransactionFactory(merchant=merchant, callback_url=callback_url)
    transaction_confirm(collection=txn, outcome=PaymentStatus.PAID, gateway_reference="SBX_1")
    return Event.objects.get(transaction=txn)


def data(response: Any) -> Any:
    body = response.json()
    assert body["statusCode"] == response.status_code, body
    return body["data"]


def ids(response: Any) -> list[str]:
    return [item["id"] for item in data(response)["items"]]


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Delivery ids handed to the send task (when the database transaction commits)."""
    sent: list[int] = []
    monkeypatch.setattr(tasks.webhook_delivery_send_task, "delay", sent.append)
    return sent


@pytest.fixture
def resend(
    test_client: APIClient, django_capture_on_commit_callbacks: Any
) -> Callable[[Event | str], Any]:
    """POSTs a resend with the test key and runs what its database transaction enqueued."""

    def post(event: Event | str) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return test_client.post(resend_url(event))

    return post


# --- list -----------------------------------------------------------------------------------------


def test_list_is_newest_first_with_a_delivery_summary_per_target(
    test_client: APIClient, merchant: Merchant, webhook_settings, record_payout_event
) -> None:
    now = timezone.now()
    oldest = record_payout_event(merchant, at=now - timedelta(hours=2))
    middle = record_payout_event(merchant, status=PayoutStatus.FAILED, at=now - timedelta(hours=1))
    newest = paid_collection_event(merchant)

    response = test_client.get(EVENTS_URL)

    assert response.status_code == 200
    assert response.json()["message"] == "Events retrieved successfully"
    assert ids(response) == [newest.event_id, middle.event_id, oldest.event_id]
    first, second, _ = data(response)["items"]
    assert set(first) == ITEM_KEYS
    assert (first["type"], first["reference"]) == ("transaction.paid", newest.reference)
    assert (second["type"], second["reference"]) == ("payout.failed", middle.reference)
    assert set(first["delivery_status"]) == {"callback_url", "webhook_url"}
    assert set(first["delivery_status"]["callback_url"]) == SUMMARY_KEYS
    assert first["delivery_status"]["webhook_url"] == {
        "status": "pending",
        "attempt_count": 0,
        "last_status_code": None,
        "next_attempt_at": first["delivery_status"]["webhook_url"]["next_attempt_at"],
        "delivered_at": None,
    }
    assert second["delivery_status"]["callback_url"] is None  # payouts have no callback URL
    assert data(response)["pagination"] == {
        "page": 1,
        "limit": 50,
        "total": 3,
        "total_pages": 1,
        "has_next_page": False,
        "has_previous_page": False,
    }


def test_the_summary_shows_the_latest_attempt(
    test_client: APIClient, merchant: Merchant, webhook_settings, record_payout_event
) -> None:
    event = record_payout_event(merchant)
    delivery = event.deliveries.get()
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, WEBHOOK_URL, status=503)
        webhook_delivery_attempt(delivery_id=delivery.pk)

    [item] = data(test_client.get(EVENTS_URL))["items"]

    summary = item["delivery_status"]["webhook_url"]
    assert (summary["status"], summary["attempt_count"], summary["last_status_code"]) == (
        "pending",
        1,
        503,
    )
    assert summary["next_attempt_at"] is not None


def test_list_filters_by_type(
    test_client: APIClient, merchant: Merchant, record_payout_event
) -> None:
    succeeded = record_payout_event(merchant)
    record_payout_event(merchant, status=PayoutStatus.FAILED)
    paid_collection_event(merchant)

    response = test_client.get(EVENTS_URL, {"type": "payout.successful"})

    assert ids(response) == [succeeded.event_id]


def test_list_filters_by_exact_reference(
    test_client: APIClient, merchant: Merchant, record_payout_event
) -> None:
    payout_event = record_payout_event(merchant)
    collection_event = paid_collection_event(merchant)

    assert ids(test_client.get(EVENTS_URL, {"reference": payout_event.reference})) == [
        payout_event.event_id
    ]
    assert ids(test_client.get(EVENTS_URL, {"reference": collection_event.reference})) == [
        collection_event.event_id
    ]
    assert ids(test_client.get(EVENTS_URL, {"reference": collection_event.reference[:-1]})) == []


def test_list_filters_by_creation_date_and_a_bare_to_date_covers_the_day(
    test_client: APIClient, merchant: Merchant, record_payout_event
) -> None:
    day_before = record_payout_event(merchant, at=datetime(2026, 3, 9, 23, 59, tzinfo=LAGOS))
    morning = record_payout_event(merchant, at=datetime(2026, 3, 10, 0, 0, tzinfo=LAGOS))
    late = record_payout_event(merchant, at=datetime(2026, 3, 10, 23, 59, 59, tzinfo=LAGOS))
    day_after = record_payout_event(merchant, at=datetime(2026, 3, 11, 0, 0, tzinfo=LAGOS))

    one_day = test_client.get(EVENTS_URL, {"from_date": "2026-03-10", "to_date": "2026-03-10"})
    since = test_client.get(EVENTS_URL, {"from_date": "2026-03-10T23:00:00+01:00"})
    until = test_client.get(EVENTS_URL, {"to_date": "2026-03-09"})

    assert ids(one_day) == [late.event_id, morning.event_id]
    assert ids(since) == [day_after.event_id, late.event_id]
    assert ids(until) == [day_before.event_id]


def test_list_paginates(test_client: APIClient, merchant: Merchant, record_payout_event) -> None:
    now = timezone.now()
    events = [record_payout_event(merchant, at=now - timedelta(minutes=n)) for n in range(5)]

    response = test_client.get(EVENTS_URL, {"page": 2, "limit": 2})

    assert ids(response) == [events[2].event_id, events[3].event_id]
    assert data(response)["pagination"] == {
        "page": 2,
        "limit": 2,
        "total": 5,
        "total_pages": 3,
        "has_next_page": True,
        "has_previous_page": True,
    }
    assert ids(test_client.get(EVENTS_URL, {"page": 4, "limit": 2})) == []


def test_a_test_key_never_sees_live_events_nor_a_live_key_test_ones(
    test_client: APIClient, live_client: APIClient, merchant: Merchant, record_payout_event
) -> None:
    test_event = record_payout_event(merchant, mode=Mode.TEST)
    live_event = record_payout_event(merchant, mode=Mode.LIVE)

    assert ids(test_client.get(EVENTS_URL)) == [test_event.event_id]
    assert ids(live_client.get(EVENTS_URL)) == [live_event.event_id]
    assert ids(test_client.get(EVENTS_URL, {"reference": live_event.reference})) == []


def test_another_merchants_events_never_appear(
    test_client: APIClient, merchant: Merchant, record_payout_event
) -> None:
    other = merchant_create(name="Bola Foods", email="bola@example.com").merchant
    mine = record_payout_event(merchant)
    theirs = record_payout_event(other)

    assert ids(test_client.get(EVENTS_URL)) == [mine.event_id]
    assert ids(test_client.get(EVENTS_URL, {"reference": theirs.reference})) == []


def test_list_queries_do_not_grow_with_the_page(
    test_client: APIClient,
    merchant: Merchant,
    webhook_settings,
    record_payout_event,
    django_assert_num_queries,
) -> None:
    paid_collection_event(merchant)  # two deliveries
    with CaptureQueriesContext(connection) as one_event:
        test_client.get(EVENTS_URL)
    for _ in range(12):
        event = record_payout_event(merchant)
        WebhookDelivery.objects.create(
            event=event,
            target=DeliveryTarget.WEBHOOK_URL,
            url=WEBHOOK_URL,
            give_up_at=timezone.now() + timedelta(hours=72),
            resend_of=event.deliveries.get(),
        )

    # the key, the count, the page of events, their deliveries
    with django_assert_num_queries(4):
        response = test_client.get(EVENTS_URL)

    assert len(ids(response)) == 13
    with CaptureQueriesContext(connection) as thirteen_events:
        test_client.get(EVENTS_URL)
    assert len(thirteen_events) == len(one_event)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"type": "payout.completed"},
            "type: must be one of " + ", ".join(EventType.values),
        ),
        ({"type": "PAYOUT.SUCCESSFUL"}, "type: must be one of " + ", ".join(EventType.values)),
        ({"from_date": "yesterday"}, "from_date: must be an ISO 8601 date or date-time"),
        ({"to_date": "2026-02-30"}, "to_date: must be an ISO 8601 date or date-time"),
        (
            {"from_date": "2026-03-02", "to_date": "2026-03-01"},
            "to_date: must not be earlier than from_date",
        ),
        ({"limit": "201"}, "limit: Ensure this value is less than or equal to 200."),
        ({"page": "0"}, "page: Ensure this value is greater than or equal to 1."),
    ],
)
def test_bad_list_parameters_are_a_400_naming_the_parameter(
    test_client: APIClient, params: dict[str, str], message: str
) -> None:
    response = test_client.get(EVENTS_URL, params)

    assert response.status_code == 400
    assert response.json() == {"status": False, "message": message, "data": None, "statusCode": 400}


# --- detail ---------------------------------------------------------------------------------------


def test_detail_holds_the_exact_bytes_delivered(
    test_client: APIClient, merchant: Merchant, webhook_settings
) -> None:
    event = paid_collection_event(merchant)
    delivery = event.deliveries.get(target=DeliveryTarget.WEBHOOK_URL)
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, WEBHOOK_URL, status=200)
        webhook_delivery_attempt(delivery_id=delivery.pk)
        delivered = mock.calls[0].request.body

    response = test_client.get(detail_url(event))

    assert response.status_code == 200
    assert response.json()["message"] == "Event retrieved successfully"
    detail = data(response)
    assert detail["body"] == event.body
    assert detail["body"].encode("utf-8") == delivered
    assert detail["payload"] == json.loads(delivered)
    assert detail["payload"]["id"] == detail["id"] == event.event_id
    assert (detail["type"], detail["reference"]) == ("transaction.paid", event.reference)
    assert detail["payload"]["data"]["reference"] == event.reference


def test_detail_lists_every_delivery_with_its_attempts(
    test_client: APIClient, merchant: Merchant, webhook_settings
) -> None:
    event = paid_collection_event(merchant)
    webhook_chain = event.deliveries.get(target=DeliveryTarget.WEBHOOK_URL)
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, WEBHOOK_URL, status=500)
        mock.add(responses.POST, WEBHOOK_URL, status=200)
        first = webhook_delivery_attempt(delivery_id=webhook_chain.pk)
        webhook_delivery_attempt(delivery_id=webhook_chain.pk, now=first.delivery.next_attempt_at)

    detail = data(test_client.get(detail_url(event)))

    callback, webhook = detail["deliveries"]
    assert set(webhook) == DELIVERY_KEYS
    assert (callback["target"], callback["url"], callback["attempts"]) == (
        "callback_url",
        CALLBACK_URL,
        [],
    )
    assert (webhook["target"], webhook["url"], webhook["status"]) == (
        "webhook_url",
        WEBHOOK_URL,
        "succeeded",
    )
    assert (webhook["attempt_count"], webhook["last_status_code"], webhook["resend_of"]) == (
        2,
        200,
        None,
    )
    assert [set(attempt) for attempt in webhook["attempts"]] == [ATTEMPT_KEYS, ATTEMPT_KEYS]
    assert [
        (attempt["attempt_number"], attempt["status_code"], attempt["succeeded"], attempt["error"])
        for attempt in webhook["attempts"]
    ] == [(1, 500, False, ""), (2, 200, True, "")]
    assert all(isinstance(attempt["latency_ms"], int) for attempt in webhook["attempts"])
    assert detail["delivery_status"]["webhook_url"]["status"] == "succeeded"


def test_detail_records_an_attempt_that_got_no_answer(
    test_client: APIClient, merchant: Merchant, webhook_settings, record_payout_event
) -> None:
    event = record_payout_event(merchant)
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, WEBHOOK_URL, body=requests.ConnectionError("connection refused"))
        webhook_delivery_attempt(delivery_id=event.deliveries.get().pk)

    [delivery] = data(test_client.get(detail_url(event)))["deliveries"]

    [attempt] = delivery["attempts"]
    assert (attempt["status_code"], attempt["succeeded"]) == (None, False)
    assert attempt["error"].startswith("connection error")
    assert delivery["last_error"] == attempt["error"]


def test_detail_queries_are_bounded(
    test_client: APIClient,
    merchant: Merchant,
    webhook_settings,
    django_assert_num_queries,
) -> None:
    event = paid_collection_event(merchant)
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, CALLBACK_URL, status=500)
        mock.add(responses.POST, WEBHOOK_URL, status=200)
        for delivery in event.deliveries.all():
            webhook_delivery_attempt(delivery_id=delivery.pk)

    # the key, the event, its deliveries, their attempts
    with django_assert_num_queries(4):
        response = test_client.get(detail_url(event))

    assert [len(d["attempts"]) for d in data(response)["deliveries"]] == [1, 1]


@pytest.mark.parametrize(
    "event_id",
    ["evt_000000000000000000000000", "evt_", "EVT_ABC", "12", "evt_" + "a" * 300, "évt_1"],
)
def test_an_unknown_event_id_is_a_404(test_client: APIClient, event_id: str) -> None:
    response = test_client.get(detail_url(event_id))

    assert response.status_code == 404
    assert response.json() == NOT_FOUND


def test_another_merchants_event_is_a_404(test_client: APIClient, record_payout_event) -> None:
    other = merchant_create(name="Bola Foods", email="bola@example.com").merchant
    theirs = record_payout_event(other)

    assert test_client.get(detail_url(theirs)).json() == NOT_FOUND


def test_the_other_modes_event_is_a_404(
    test_client: APIClient, live_client: APIClient, merchant: Merchant, record_payout_event
) -> None:
    live_event = record_payout_event(merchant, mode=Mode.LIVE)

    assert test_client.get(detail_url(live_event)).json() == NOT_FOUND
    assert live_client.get(detail_url(live_event)).status_code == 200


# --- resend ---------------------------------------------------------------------------------------


def test_resend_is_a_new_delivery_of_the_same_event_enqueued_on_commit(
    test_client: APIClient,
    merchant: Merchant,
    webhook_settings,
    record_payout_event,
    enqueued: list[int],
    django_capture_on_commit_callbacks,
) -> None:
    event = record_payout_event(merchant)
    original = event.deliveries.get()
    body_before = event.body

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = test_client.post(resend_url(event))
    assert enqueued == []  # nothing is sent before the transaction commits
    for callback in callbacks:
        callback()

    assert response.status_code == 202
    assert response.json()["message"] == "Event queued for redelivery"
    resent = event.deliveries.exclude(pk=original.pk).get()
    assert enqueued == [resent.pk]
    assert (resent.target, resent.url, resent.resend_of_id) == (
        DeliveryTarget.WEBHOOK_URL,
        WEBHOOK_URL,
        original.pk,
    )
    assert (resent.status, resent.attempt_count) == (DeliveryStatus.PENDING, 0)
    event.refresh_from_db()
    assert event.body == body_before
    detail = data(response)
    assert detail["id"] == event.event_id and detail["body"] == body_before
    assert [(d["id"], d["resend_of"]) for d in detail["deliveries"]] == [
        (original.pk, None),
        (resent.pk, original.pk),
    ]
    assert detail["delivery_status"]["webhook_url"]["status"] == "pending"


def test_a_resent_delivery_sends_the_same_bytes_with_the_same_id(
    resend, merchant: Merchant, webhook_settings, record_payout_event, enqueued
) -> None:
    event = record_payout_event(merchant)
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, WEBHOOK_URL, status=200)
        webhook_delivery_attempt(delivery_id=event.deliveries.get().pk)
        resend(event)
        [resent_id] = enqueued
        webhook_delivery_attempt(delivery_id=resent_id)
        first, second = (call.request for call in mock.calls)

    assert first.body == second.body == event.body_bytes
    assert first.headers["X-Webhook-Event-Id"] == second.headers["X-Webhook-Event-Id"]
    assert first.headers["X-Webhook-Signature"] == second.headers["X-Webhook-Signature"]


def test_resend_goes_to_the_current_webhook_url(
    resend, merchant: Merchant, webhook_settings, record_payout_event, enqueued
) -> None:
    event = record_payout_event(merchant)
    original = event.deliveries.get()
    WebhookSettings.objects.filter(pk=webhook_settings.pk).update(url=NEW_WEBHOOK_URL)

    response = resend(event)

    assert response.status_code == 202
    resent = WebhookDelivery.objects.get(pk__in=enqueued)
    assert (resent.url, resent.resend_of_id) == (NEW_WEBHOOK_URL, original.pk)
    assert data(response)["deliveries"][-1]["url"] == NEW_WEBHOOK_URL


def test_resending_a_collection_event_also_goes_to_its_callback_url(
    resend, merchant: Merchant, webhook_settings, enqueued
) -> None:
    event = paid_collection_event(merchant)
    originals = {delivery.target: delivery.pk for delivery in event.deliveries.all()}

    response = resend(event)

    assert response.status_code == 202
    resent = WebhookDelivery.objects.filter(pk__in=enqueued)
    assert {(d.target, d.url, d.resend_of_id) for d in resent} == {
        (DeliveryTarget.CALLBACK_URL, CALLBACK_URL, originals[DeliveryTarget.CALLBACK_URL]),
        (DeliveryTarget.WEBHOOK_URL, WEBHOOK_URL, originals[DeliveryTarget.WEBHOOK_URL]),
    }


def test_resend_without_a_webhook_url_is_a_409_and_sends_nothing(
    resend, merchant: Merchant, record_payout_event, enqueued
) -> None:
    event = record_payout_event(merchant)  # no webhook settings: never delivered anywhere
    WebhookSettingsFactory(merchant=merchant, mode=Mode.TEST, url="")  # a secret, no URL

    response = resend(event)

    assert response.status_code == 409
    assert response.json() == {
        "status": False,
        "message": "No webhook URL is configured for test mode: set one in your webhook "
        "settings, then resend the event",
        "data": None,
        "statusCode": 409,
    }
    assert not event.deliveries.exists()
    assert enqueued == []


def test_resend_of_another_merchants_event_is_a_404_and_sends_nothing(
    resend, record_payout_event, enqueued
) -> None:
    other_account: MerchantCreated = merchant_create(name="Bola Foods", email="bola@example.com")
    WebhookSettingsFactory(merchant=other_account.merchant, mode=Mode.TEST, url=WEBHOOK_URL)
    theirs = record_payout_event(other_account.merchant)

    response = resend(theirs)

    assert response.json() == NOT_FOUND
    assert theirs.deliveries.count() == 1
    assert enqueued == []


def test_resend_of_the_other_modes_event_is_a_404(
    resend, merchant: Merchant, record_payout_event, enqueued
) -> None:
    WebhookSettingsFactory(merchant=merchant, mode=Mode.LIVE, url=WEBHOOK_URL)
    live_event = record_payout_event(merchant, mode=Mode.LIVE)

    assert resend(live_event).json() == NOT_FOUND
    assert enqueued == []


def test_resend_is_rate_limited_per_key(
    resend,
    test_client: APIClient,
    merchant: Merchant,
    webhook_settings,
    record_payout_event,
    enqueued,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(SecretKeyRateThrottle, "THROTTLE_RATES", {"event_resend": "2/min"})
    event = record_payout_event(merchant)

    answers = [resend(event) for _ in range(3)]

    assert [response.status_code for response in answers] == [202, 202, 429]
    assert answers[2].has_header("Retry-After")
    assert event.deliveries.count() == 3
    assert len(enqueued) == 2
    assert test_client.get(detail_url(event)).status_code == 200  # reads are not limited by it


def test_the_resend_rate_has_a_default() -> None:
    assert "event_resend" in SecretKeyRateThrottle.THROTTLE_RATES


# --- authentication -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", EVENTS_URL),
        ("get", detail_url("evt_000000000000000000000000")),
        ("post", resend_url("evt_000000000000000000000000")),
    ],
)
@pytest.mark.parametrize("authorization", [None, "Bearer sk_test_unknown", "Basic abc"])
def test_every_events_route_needs_a_valid_key(
    api_client: APIClient, method: str, path: str, authorization: str | None
) -> None:
    if authorization:
        api_client.credentials(HTTP_AUTHORIZATION=authorization)

    response = getattr(api_client, method)(path)

    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED
