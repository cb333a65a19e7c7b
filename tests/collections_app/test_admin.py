"""Collections back office: transactions are read-only; the fee schedule is editable; the
event and delivery log is read-only with filters and a resend action."""

from __future__ import annotations

import pytest
from django.test import Client

from collections_app.models import CollectionTransaction, PaymentStatus
from tests.collections_app.factories import CollectionTransactionFactory
from webhooks.models import DeliveryStatus, Event, WebhookDelivery, WebhookDeliveryAttempt

pytestmark = pytest.mark.django_db


def test_transaction_list_and_detail_render(admin_client: Client) -> None:
    txn = CollectionTransactionFactory()
    listing = admin_client.get("/admin/collections_app/collectiontransaction/")
    assert listing.status_code == 200
    assert txn.reference in listing.content.decode()
    detail = admin_client.get(f"/admin/collections_app/collectiontransaction/{txn.pk}/change/")
    assert detail.status_code == 200
    assert txn.request_fingerprint not in detail.content.decode()


def test_transactions_cannot_be_changed_in_admin(admin_client: Client) -> None:
    txn = CollectionTransactionFactory()
    response = admin_client.post(
        f"/admin/collections_app/collectiontransaction/{txn.pk}/change/",
        {"payment_status": "paid"},
    )
    assert response.status_code == 403
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PENDING
    assert admin_client.get("/admin/collections_app/collectiontransaction/add/").status_code == 403
    assert CollectionTransaction.objects.count() == 1


def test_fee_schedule_admin_renders(admin_client: Client, fee_schedule) -> None:
    response = admin_client.get(
        f"/admin/collections_app/collectionfeeschedule/{fee_schedule.pk}/change/"
    )
    assert response.status_code == 200


# --- events and deliveries ---------------------------------------------------------------------


def _paid_event(**factory_kwargs):  # type: ignore[no-untyped-def]
    from collections_app.services import transaction_confirm

    txn = CollectionTransactionFactory(**factory_kwargs)
    transaction_confirm(collection=txn, outcome=PaymentStatus.PAID)
    return Event.objects.get(transaction=txn)


def _record_attempt(delivery: WebhookDelivery, status_code: int | None, error: str = "") -> None:
    WebhookDeliveryAttempt.objects.create(
        delivery=delivery,
        attempt_number=delivery.attempt_count + 1,
        url=delivery.url,
        status_code=status_code,
        latency_ms=12,
        error=error,
        succeeded=status_code is not None and 200 <= status_code < 300,
    )
    delivery.attempt_count += 1
    delivery.last_status_code = status_code
    delivery.save()


def test_event_log_lists_filters_and_shows_the_payload(admin_client: Client) -> None:
    event = _paid_event()
    other = _paid_event()
    url = "/admin/webhooks/event/"
    listing = admin_client.get(url)
    assert listing.status_code == 200
    assert event.event_id in listing.content.decode()
    by_merchant = admin_client.get(url, {"merchant__id__exact": event.merchant_id}).content.decode()
    assert event.event_id in by_merchant and other.event_id not in by_merchant
    by_type = admin_client.get(url, {"event_type": "transaction.failed"}).content.decode()
    assert event.event_id not in by_type
    day = event.created_at
    by_date = admin_client.get(
        url, {"created_at__year": day.year, "created_at__month": day.month}
    ).content.decode()
    assert event.event_id in by_date
    detail = admin_client.get(f"{url}{event.pk}/change/").content.decode()
    assert event.reference in detail
    assert "&quot;transaction.paid&quot;" in detail
    assert admin_client.get(f"{url}add/").status_code == 403


def test_event_log_has_no_n_plus_one(admin_client: Client, django_assert_max_num_queries) -> None:
    _paid_event()
    admin_client.get("/admin/webhooks/event/")
    for _ in range(5):
        _paid_event()
    with django_assert_max_num_queries(12):
        assert admin_client.get("/admin/webhooks/event/").status_code == 200
    with django_assert_max_num_queries(12):
        assert admin_client.get("/admin/webhooks/webhookdelivery/").status_code == 200
    with django_assert_max_num_queries(12):
        assert admin_client.get("/admin/webhooks/webhookdeliveryattempt/").status_code == 200


def test_delivery_and_attempt_logs_filter_by_status_code(admin_client: Client) -> None:
    ok = WebhookDelivery.objects.get(event=_paid_event())
    broken = WebhookDelivery.objects.get(event=_paid_event())
    _record_attempt(ok, 200)
    _record_attempt(broken, None, error="timeout: read timed out")
    _record_attempt(broken, 503)
    deliveries = "/admin/webhooks/webhookdelivery/"
    five = admin_client.get(deliveries, {"last_status_code_class": "5xx"}).content.decode()
    assert broken.event.event_id in five and ok.event.event_id not in five
    attempts = "/admin/webhooks/webhookdeliveryattempt/"
    two = admin_client.get(attempts, {"status_code_class": "2xx"}).content.decode()
    assert ok.event.event_id in two and broken.event.event_id not in two
    none = admin_client.get(attempts, {"status_code_class": "none"}).content.decode()
    assert "timeout: read timed out" in none and ok.event.event_id not in none
    by_type = admin_client.get(
        attempts, {"delivery__event__event_type": "transaction.paid"}
    ).content.decode()
    assert ok.event.event_id in by_type
    detail = admin_client.get(f"{deliveries}{broken.pk}/change/").content.decode()
    assert "timeout: read timed out" in detail
    response = admin_client.post(f"{deliveries}{broken.pk}/change/", {"status": "succeeded"})
    assert response.status_code == 403


def test_resend_action_on_a_delivery(admin_client: Client) -> None:
    delivery = WebhookDelivery.objects.get(event=_paid_event())
    _record_attempt(delivery, 500)
    response = admin_client.post(
        "/admin/webhooks/webhookdelivery/",
        {"action": "resend", "_selected_action": [delivery.pk]},
        follow=True,
    )
    assert response.status_code == 200
    assert "Queued 1 new delivery chain" in response.content.decode()
    resent = WebhookDelivery.objects.get(resend_of=delivery)
    assert (resent.event_id, resent.url, resent.status, resent.attempt_count) == (
        delivery.event_id,
        delivery.url,
        DeliveryStatus.PENDING,
        0,
    )


def test_resend_action_on_events(admin_client: Client) -> None:
    first, second = _paid_event(), _paid_event()
    admin_client.post(
        "/admin/webhooks/event/",
        {"action": "resend", "_selected_action": [first.pk, second.pk]},
    )
    assert WebhookDelivery.objects.filter(resend_of__isnull=False).count() == 2
    assert set(
        WebhookDelivery.objects.filter(resend_of__isnull=False).values_list("event_id", flat=True)
    ) == {first.pk, second.pk}
