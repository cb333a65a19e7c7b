"""Events: exactly one per payment_status change, in the same database transaction, serialized
once; deliveries to the callback URL and the merchant's webhook URL, enqueued on commit."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from collections_app.events import transaction_event_record
from collections_app.models import PaymentStatus
from collections_app.services import transaction_confirm, transaction_expire
from merchants.models import Merchant, Mode
from payouts.events import payout_event_emit
from tests.collections_app.conftest import WEBHOOK_URL
from tests.collections_app.factories import CollectionTransactionFactory
from tests.merchants.factories import WebhookSettingsFactory
from webhooks.models import DeliveryStatus, DeliveryTarget, Event, EventType, WebhookDelivery

pytestmark = pytest.mark.django_db


def confirm(txn, outcome: str = PaymentStatus.PAID):  # type: ignore[no-untyped-def]
    return transaction_confirm(collection=txn, outcome=outcome, gateway_reference="SBX_1")


@pytest.mark.parametrize(
    ("outcome", "event_type"),
    [
        (PaymentStatus.PAID, "transaction.paid"),
        (PaymentStatus.FAILED, "transaction.failed"),
        (PaymentStatus.CANCELLED, "transaction.cancelled"),
    ],
)
def test_each_confirmed_outcome_records_one_event(outcome: str, event_type: str) -> None:
    txn = CollectionTransactionFactory()
    confirm(txn, outcome)
    confirm(txn, PaymentStatus.PAID)  # late: not applied, no second event
    event = Event.objects.get()
    assert (event.event_type, event.transaction_id, event.reference) == (
        event_type,
        txn.pk,
        txn.reference,
    )
    assert (event.merchant_id, event.mode) == (txn.merchant_id, txn.mode)


def test_expiry_records_transaction_expired() -> None:
    txn = CollectionTransactionFactory(expires_at=timezone.now() - timedelta(seconds=1))
    assert transaction_expire(transaction_id=txn.pk) is True
    assert Event.objects.get().event_type == "transaction.expired"


def test_event_ids_are_unique_and_prefixed() -> None:
    for _ in range(5):
        confirm(CollectionTransactionFactory())
    ids = list(Event.objects.values_list("event_id", flat=True))
    assert len(set(ids)) == 5
    assert all(event_id.startswith("evt_") and len(event_id) == 28 for event_id in ids)


def test_event_is_rolled_back_with_the_status_change() -> None:
    txn = CollectionTransactionFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        confirm(txn)
        assert Event.objects.count() == 1
        raise RuntimeError("the surrounding transaction fails")
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PENDING
    assert not Event.objects.exists()
    assert not WebhookDelivery.objects.exists()


def test_event_body_is_the_documented_payload() -> None:
    txn = CollectionTransactionFactory(client_reference="order-77", meta_data={"k": "v"})
    confirm(txn)
    txn.refresh_from_db()
    event = Event.objects.get()
    body = json.loads(event.body)
    assert set(body) == {"id", "event", "created_at", "data"}
    assert body["id"] == event.event_id
    assert body["event"] == "transaction.paid"
    data = body["data"]
    assert data["reference"] == txn.reference
    assert data["client_reference"] == "order-77"
    assert data["payment_status"] == "paid"
    assert data["amount"] == "7000.00"
    assert data["transaction_fee"] == "205.00"
    assert data["amount_paid"] == "7205.00"
    assert data["channel"] == "card"
    assert data["currency"] == "NGN"
    assert data["mode"] == "test"
    assert data["gateway_reference"] == "SBX_1"
    assert data["paid_at"] is not None
    assert data["meta_data"] == {"k": "v"}
    assert data["customer"] == {
        "id": txn.customer_id,
        "customer_tag": txn.customer.customer_tag,
        "email": txn.customer.email,
        "first_name": "Ada",
        "last_name": "Obi",
        "phone_number": "08012345678",
    }
    assert data["payment_item"] == {"id": txn.payment_item_id, "name": txn.payment_item.name}
    assert data["business"]["business_name"] == txn.business.business_name
    assert event.body_bytes == event.body.encode("utf-8")
    assert b" " not in event.body_bytes.split(b'"data"')[0]  # compact separators


def test_failed_event_has_no_paid_fields() -> None:
    txn = CollectionTransactionFactory()
    confirm(txn, PaymentStatus.FAILED)
    data = json.loads(Event.objects.get().body)["data"]
    assert (data["payment_status"], data["paid_at"], data["amount_paid"]) == (
        "failed",
        None,
        "0.00",
    )


def test_deliveries_go_to_the_callback_and_the_webhook_url(
    merchant: Merchant, webhook_settings
) -> None:  # type: ignore[no-untyped-def]
    txn = CollectionTransactionFactory(merchant=merchant)
    confirm(txn)
    deliveries = {d.target: d for d in WebhookDelivery.objects.all()}
    assert set(deliveries) == {DeliveryTarget.CALLBACK_URL, DeliveryTarget.WEBHOOK_URL}
    assert deliveries[DeliveryTarget.CALLBACK_URL].url == txn.callback_url
    assert deliveries[DeliveryTarget.WEBHOOK_URL].url == WEBHOOK_URL
    for delivery in deliveries.values():
        assert delivery.status == DeliveryStatus.PENDING
        assert delivery.attempt_count == 0
        assert delivery.next_attempt_at == delivery.event.created_at
        assert delivery.give_up_at == delivery.event.created_at + timedelta(hours=72)


def test_no_webhook_settings_means_only_the_callback() -> None:
    confirm(CollectionTransactionFactory())
    assert list(WebhookDelivery.objects.values_list("target", flat=True)) == ["callback_url"]


def test_webhook_settings_of_the_other_mode_are_not_used(merchant: Merchant) -> None:
    WebhookSettingsFactory(merchant=merchant, mode=Mode.LIVE, url="https://live.example.com/h")
    confirm(CollectionTransactionFactory(merchant=merchant))
    assert WebhookDelivery.objects.count() == 1


def test_same_url_for_callback_and_webhook_is_delivered_once(merchant: Merchant) -> None:
    WebhookSettingsFactory(merchant=merchant, url="https://merchant.example.com/callback")
    confirm(CollectionTransactionFactory(merchant=merchant))
    assert WebhookDelivery.objects.count() == 1


def test_deliveries_are_enqueued_only_on_commit(
    merchant: Merchant, webhook_settings, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from webhooks import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.webhook_delivery_send_task, "delay", sent.append)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        confirm(CollectionTransactionFactory(merchant=merchant))
    assert sent == []
    assert len(callbacks) == 1
    callbacks[0]()
    assert sorted(sent) == sorted(WebhookDelivery.objects.values_list("pk", flat=True))


def test_a_broken_broker_does_not_undo_the_payment(
    merchant: Merchant, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Enqueueing is best effort (robust on_commit): the sweeper picks the delivery up."""
    from webhooks import tasks

    def broken(delivery_id: int) -> None:
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.webhook_delivery_send_task, "delay", broken)
    txn = CollectionTransactionFactory(merchant=merchant)
    with django_capture_on_commit_callbacks(execute=True):
        confirm(txn)
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PAID
    assert WebhookDelivery.objects.get().status == DeliveryStatus.PENDING


def test_record_ignores_a_pending_status() -> None:
    txn = CollectionTransactionFactory()
    assert transaction_event_record(collection=txn, previous_status="pending") is None
    assert not Event.objects.exists()


@pytest.mark.parametrize("status", [PaymentStatus.FAILED, PaymentStatus.PAID])
def test_record_ignores_a_status_that_did_not_change(status: str) -> None:
    paid_at = timezone.now() if status == PaymentStatus.PAID else None
    txn = CollectionTransactionFactory(payment_status=status, paid_at=paid_at)
    assert transaction_event_record(collection=txn, previous_status=status) is None
    assert not Event.objects.exists()


def test_a_declined_card_with_attempts_left_records_no_event() -> None:
    txn = CollectionTransactionFactory()
    result = transaction_confirm(collection=txn, outcome=PaymentStatus.FAILED, attempt_limit=2)
    assert result.attempts_left == 1
    assert not Event.objects.exists()
    assert not WebhookDelivery.objects.exists()
    transaction_confirm(collection=txn, outcome=PaymentStatus.FAILED, attempt_limit=2)
    assert Event.objects.get().event_type == "transaction.failed"


# --- payouts -----------------------------------------------------------------------------------


@pytest.fixture
def payout_factory():  # type: ignore[no-untyped-def]
    factories = pytest.importorskip("tests.payouts.factories")
    return factories.PayoutFactory


@pytest.fixture
def test_wallet(merchant_account):  # type: ignore[no-untyped-def]
    from wallets.selectors import wallet_get

    return wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)


@pytest.mark.parametrize(
    ("status", "event_type"),
    [("successful", "payout.successful"), ("failed", "payout.failed")],
)
def test_final_payout_records_one_event_for_the_webhook_url(
    payout_factory, test_wallet, webhook_settings, status: str, event_type: str
) -> None:  # type: ignore[no-untyped-def]
    payout = payout_factory(
        wallet=test_wallet,
        status=status,
        completed_at=timezone.now(),
        error_message="Account closed" if status == "failed" else None,
        amount=Decimal("1500.00"),
        fee_amount=Decimal("10.00"),
        total_debit_amount=Decimal("1510.00"),
    )
    payout_event_emit(payout=payout)
    payout_event_emit(payout=payout)  # twice: still one event
    event = Event.objects.get()
    assert (event.event_type, event.payout_id, event.reference) == (
        event_type,
        payout.pk,
        payout.internal_reference,
    )
    assert event.transaction_id is None
    data = json.loads(event.body)["data"]
    assert data["id"] == payout.pk
    assert data["internal_reference"] == payout.internal_reference
    assert data["status"] == status
    assert (data["amount"], data["fee_amount"], data["total_debit_amount"]) == (
        "1500.00",
        "10.00",
        "1510.00",
    )
    assert data["beneficiary"] == {
        "account_number": "0123456789",
        "account_name": "ADEYEMI TUNDE",
        "bank_code": "058",
        "bank_name": "Guaranty Trust Bank",
    }
    assert data["error_message"] == ("Account closed" if status == "failed" else None)
    assert data["completed_at"] is not None
    delivery = WebhookDelivery.objects.get()
    assert (delivery.target, delivery.url) == (DeliveryTarget.WEBHOOK_URL, WEBHOOK_URL)


def test_pending_payout_records_nothing(payout_factory, test_wallet, webhook_settings) -> None:  # type: ignore[no-untyped-def]
    payout_event_emit(payout=payout_factory(wallet=test_wallet, status="reserved"))
    assert not Event.objects.exists()


def test_payout_event_without_a_webhook_url_has_no_delivery(payout_factory, test_wallet) -> None:  # type: ignore[no-untyped-def]
    payout = payout_factory(wallet=test_wallet, status="successful", completed_at=timezone.now())
    payout_event_emit(payout=payout)
    assert Event.objects.get().event_type == EventType.PAYOUT_SUCCESSFUL
    assert not WebhookDelivery.objects.exists()
