"""transaction_initialize, customer_upsert, the payment_status state machine and expiry."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from decimal import Decimal
from itertools import product
from typing import Any

import pytest
from django.db import transaction
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from collections_app import services
from collections_app.checkout import CardSummary, checkout_cancel, checkout_card_pay
from collections_app.models import (
    Channel,
    CollectionTransaction,
    ConfirmationSource,
    Customer,
    PaymentStatus,
    TransactionAttempt,
)
from collections_app.services import (
    CustomerInfo,
    SubaccountAmount,
    customer_upsert,
    transaction_confirm,
    transaction_expire,
    transaction_initialize,
    transactions_expire_due,
)
from collections_app.state_machine import (
    ALLOWED_TRANSITIONS,
    IllegalTransitionError,
    transition_allowed,
)
from core.exceptions import ApplicationError, ConflictError
from merchants.models import Merchant, Mode
from payment_items.models import CatalogueStatus, PaymentItem
from tests.collections_app.conftest import CALLBACK_URL
from tests.collections_app.factories import CollectionTransactionFactory, CustomerFactory
from tests.collections_app.helpers import paystack_mock_initialize
from tests.payment_items.factories import (
    PaymentItemFactory,
    SubaccountFactory,
    TransactionSplitFactory,
    TransactionSplitShareFactory,
)
from webhooks.models import Event, WebhookDelivery

pytestmark = pytest.mark.django_db

ALL_STATUSES = list(PaymentStatus)
TERMINAL = [s for s in ALL_STATUSES if s != PaymentStatus.PENDING]
OUTCOMES = [PaymentStatus.PAID, PaymentStatus.FAILED, PaymentStatus.CANCELLED]
DECLINED_CARD_META = {"card": {"brand": "visa", "last4": "0002"}}
ADA = CustomerInfo(
    email="ada.obi@example.com", phone_number="08031234567", first_name="Ada", last_name="Obi"
)


def initialize(merchant: Merchant, item: PaymentItem, **overrides: Any):  # type: ignore[no-untyped-def]
    arguments: dict[str, Any] = {
        "merchant": merchant,
        "mode": Mode.TEST,
        "payment_item_id": item.pk,
        "transaction_reference": "order-1",
        "channel": Channel.CARD,
        "amount": Decimal("7000.00"),
        "customer_info": ADA,
        "callback_url": CALLBACK_URL,
        "subaccounts": None,
    }
    arguments.update(overrides)
    return transaction_initialize(**arguments)


# --- initialize --------------------------------------------------------------------------------


def test_initialize_creates_a_pending_card_transaction(
    merchant: Merchant, fixed_item: PaymentItem, settings
) -> None:
    result = initialize(merchant, fixed_item)
    created = result.transaction
    assert result.created is True
    assert re.fullmatch(r"TXN_[A-Z0-9]{20}", created.reference)
    assert created.payment_status == PaymentStatus.PENDING
    assert created.amount == Decimal("7000.00")
    assert created.transaction_fee == Decimal("205.00")
    assert created.amount_to_be_paid == Decimal("7205.00")
    assert created.amount_paid == Decimal("0.00")
    assert created.client_reference == "order-1"
    assert created.business_id == fixed_item.business_id
    assert created.authorization_url == f"{settings.CHECKOUT_BASE_URL}/checkout/{created.reference}"
    assert created.virtual_account_number is None
    assert created.meta_data is None
    assert created.paid_at is None
    assert created.gateway_used is None
    assert created.no_of_attempts == 0


def test_bank_channel_gets_a_checkout_url(merchant: Merchant, fixed_item: PaymentItem) -> None:
    created = initialize(merchant, fixed_item, channel=Channel.BANK).transaction
    assert created.authorization_url.endswith(f"/checkout/{created.reference}")


def test_bank_transfer_gets_a_virtual_account_and_no_url(
    merchant: Merchant, fixed_item: PaymentItem, settings
) -> None:
    created = initialize(merchant, fixed_item, channel=Channel.BANK_TRANSFER).transaction
    assert created.authorization_url is None
    assert re.fullmatch(r"[1-9][0-9]{9}", created.virtual_account_number)
    assert created.virtual_bank_name == settings.COLLECTION_VIRTUAL_ACCOUNT_BANK_NAME
    assert created.virtual_account_name == fixed_item.business.business_name
    assert created.meta_data == {
        "payment_instructions": {
            "account_number": created.virtual_account_number,
            "bank_name": created.virtual_bank_name,
            "account_name": created.virtual_account_name,
            "amount": "7205.00",
        }
    }


def test_each_bank_transfer_gets_its_own_account(
    merchant: Merchant, fixed_item: PaymentItem
) -> None:
    first = initialize(merchant, fixed_item, channel=Channel.BANK_TRANSFER).transaction
    second = initialize(
        merchant, fixed_item, channel=Channel.BANK_TRANSFER, transaction_reference="order-2"
    ).transaction
    assert first.virtual_account_number != second.virtual_account_number


def test_expiry_window_comes_from_the_setting(
    merchant: Merchant, fixed_item: PaymentItem, settings
) -> None:
    settings.COLLECTION_TRANSACTION_EXPIRY_HOURS = 2
    created = initialize(merchant, fixed_item).transaction
    assert created.expires_at - created.initiation_time == timedelta(hours=2)


def test_default_expiry_is_24_hours(merchant: Merchant, fixed_item: PaymentItem) -> None:
    created = initialize(merchant, fixed_item).transaction
    assert created.expires_at - created.initiation_time == timedelta(hours=24)


def test_fixed_item_amount_must_match(merchant: Merchant, fixed_item: PaymentItem) -> None:
    with pytest.raises(ApplicationError, match="^Payment amount does not match$"):
        initialize(merchant, fixed_item, amount=Decimal("6999.99"))
    assert not CollectionTransaction.objects.exists()


def test_variable_item_accepts_any_positive_amount(
    merchant: Merchant, variable_item: PaymentItem
) -> None:
    created = initialize(merchant, variable_item, amount=Decimal("123.45")).transaction
    assert created.amount == Decimal("123.45")
    assert created.transaction_fee == Decimal("1.85")  # 1.851750 half-up


@pytest.mark.parametrize("case", ["missing", "inactive", "deleted", "other_merchant", "live"])
def test_item_must_be_the_merchants_active_item(
    merchant: Merchant, fee_schedule, case: str
) -> None:
    item = {
        "missing": lambda: PaymentItemFactory.build(pk=99999999),
        "inactive": lambda: PaymentItemFactory(merchant=merchant, status=CatalogueStatus.INACTIVE),
        "deleted": lambda: PaymentItemFactory(merchant=merchant, is_deleted=True),
        "other_merchant": lambda: PaymentItemFactory(),
        "live": lambda: PaymentItemFactory(merchant=merchant, mode=Mode.LIVE),
    }[case]()
    with pytest.raises(ApplicationError, match="^Payment item not found$") as caught:
        initialize(merchant, item)
    assert caught.value.status == 400


def test_unsafe_callback_is_refused_before_anything_is_written(
    merchant: Merchant, fixed_item: PaymentItem
) -> None:
    with pytest.raises(ApplicationError, match=r"^callback_url: must not point to a private"):
        initialize(merchant, fixed_item, callback_url="https://intranet.example.com/cb")
    assert not CollectionTransaction.objects.exists()
    assert not Customer.objects.exists()


# --- splits ------------------------------------------------------------------------------------


def test_item_split_configuration_is_applied(merchant: Merchant, fee_schedule) -> None:
    split = TransactionSplitFactory(merchant=merchant)
    first = TransactionSplitShareFactory(split=split, share=Decimal("10"))
    second = TransactionSplitShareFactory(split=split, share=Decimal("2.5"))
    item = PaymentItemFactory(merchant=merchant, transaction_split=split)
    created = initialize(merchant, item).transaction
    entries = [(e.subaccount_id, e.share) for e in created.split_entries.order_by("id")]
    assert entries == [
        (first.subaccount_id, Decimal("700.00")),
        (second.subaccount_id, Decimal("175.00")),
    ]
    assert created.transaction_split_code == split.transaction_split_code


def test_inactive_split_is_not_applied(merchant: Merchant, fee_schedule) -> None:
    split = TransactionSplitFactory(merchant=merchant, is_active=False)
    TransactionSplitShareFactory(split=split)
    item = PaymentItemFactory(merchant=merchant, transaction_split=split)
    created = initialize(merchant, item).transaction
    assert not created.split_entries.exists()
    assert created.transaction_split_code == ""


def test_subaccount_override_replaces_the_split(merchant: Merchant, fee_schedule) -> None:
    split = TransactionSplitFactory(merchant=merchant)
    TransactionSplitShareFactory(split=split)
    item = PaymentItemFactory(merchant=merchant, transaction_split=split)
    first, second = SubaccountFactory(merchant=merchant), SubaccountFactory(merchant=merchant)
    created = initialize(
        merchant,
        item,
        subaccounts=[
            SubaccountAmount(account_code=first.account_code, amount=4000),
            SubaccountAmount(account_code=second.account_code, amount=3000),
        ],
    ).transaction
    entries = [(e.subaccount_id, e.share) for e in created.split_entries.order_by("id")]
    assert entries == [(first.pk, Decimal("4000")), (second.pk, Decimal("3000"))]
    assert created.transaction_split_code == ""


@pytest.mark.parametrize(
    ("owner", "message"),
    [
        ("other_merchant", "unknown account_code"),
        ("live", "unknown account_code"),
        ("inactive", "unknown account_code"),
    ],
)
def test_subaccounts_must_be_the_merchants_active_ones(
    merchant: Merchant, fixed_item: PaymentItem, owner: str, message: str
) -> None:
    subaccount = {
        "other_merchant": lambda: SubaccountFactory(),
        "live": lambda: SubaccountFactory(merchant=merchant, mode=Mode.LIVE),
        "inactive": lambda: SubaccountFactory(merchant=merchant, is_active=False),
    }[owner]()
    with pytest.raises(
        ApplicationError, match=f"^subaccounts: {message} {subaccount.account_code}"
    ):
        initialize(
            merchant,
            fixed_item,
            subaccounts=[SubaccountAmount(account_code=subaccount.account_code, amount=7000)],
        )


def test_subaccount_amounts_must_sum_to_the_amount(
    merchant: Merchant, fixed_item: PaymentItem
) -> None:
    subaccount = SubaccountFactory(merchant=merchant)
    with pytest.raises(ApplicationError, match="must sum to the transaction amount 7000.00"):
        initialize(
            merchant,
            fixed_item,
            subaccounts=[SubaccountAmount(account_code=subaccount.account_code, amount=6999)],
        )


def test_subaccount_codes_must_not_repeat(merchant: Merchant, fixed_item: PaymentItem) -> None:
    code = SubaccountFactory(merchant=merchant).account_code
    with pytest.raises(ApplicationError, match="duplicate account_code"):
        initialize(
            merchant,
            fixed_item,
            subaccounts=[
                SubaccountAmount(account_code=code, amount=3500),
                SubaccountAmount(account_code=code, amount=3500),
            ],
        )


# --- idempotency -------------------------------------------------------------------------------


def test_identical_repeat_returns_the_original(merchant: Merchant, fixed_item: PaymentItem) -> None:
    first = initialize(merchant, fixed_item)
    again = initialize(merchant, fixed_item)
    assert again.created is False
    assert again.transaction.pk == first.transaction.pk
    assert CollectionTransaction.objects.count() == 1


def test_identical_repeat_ignores_email_case(merchant: Merchant, fixed_item: PaymentItem) -> None:
    first = initialize(merchant, fixed_item)
    upper = CustomerInfo(
        email="ADA.OBI@example.com",
        phone_number=ADA.phone_number,
        first_name=ADA.first_name,
        last_name=ADA.last_name,
    )
    assert initialize(merchant, fixed_item, customer_info=upper).transaction == first.transaction


def test_identical_repeat_works_after_the_item_is_deactivated(
    merchant: Merchant, fixed_item: PaymentItem
) -> None:
    first = initialize(merchant, fixed_item)
    fixed_item.status = CatalogueStatus.INACTIVE
    fixed_item.save()
    assert initialize(merchant, fixed_item).transaction == first.transaction


@pytest.mark.parametrize(
    "change",
    [
        {"channel": Channel.BANK},
        {"callback_url": "https://shop.example.org/cb"},
        {"customer_info": CustomerInfo("other@example.com", "08031234567", "Ada", "Obi")},
        {"customer_info": CustomerInfo("ada.obi@example.com", "08031234567", "Adaeze", "Obi")},
    ],
)
def test_reused_reference_with_a_different_request_is_409(
    merchant: Merchant, fixed_item: PaymentItem, change: dict[str, Any]
) -> None:
    initialize(merchant, fixed_item)
    with pytest.raises(ConflictError, match="already been used"):
        initialize(merchant, fixed_item, **change)
    assert CollectionTransaction.objects.count() == 1


def test_reused_reference_for_another_item_is_409(
    merchant: Merchant, fixed_item: PaymentItem, variable_item: PaymentItem
) -> None:
    initialize(merchant, fixed_item)
    with pytest.raises(ConflictError):
        initialize(merchant, variable_item)


def test_references_are_scoped_to_merchant_and_mode(
    merchant: Merchant, fixed_item: PaymentItem, paystack
) -> None:
    paystack_mock_initialize(paystack)
    live_item = PaymentItemFactory(merchant=merchant, mode=Mode.LIVE)
    other_item = PaymentItemFactory()
    first = initialize(merchant, fixed_item)
    live = initialize(merchant, live_item, mode=Mode.LIVE)
    other = initialize(other_item.merchant, other_item)
    assert len({first.transaction.pk, live.transaction.pk, other.transaction.pk}) == 3
    assert live.created and other.created


# --- customers ---------------------------------------------------------------------------------


def test_customer_is_created_with_a_tag(merchant: Merchant) -> None:
    customer = customer_upsert(merchant=merchant, mode=Mode.TEST, customer_info=ADA)
    assert re.fullmatch(r"CUS_[a-z0-9]{16}", customer.customer_tag)
    assert (customer.email, customer.first_name, customer.last_name) == (
        "ada.obi@example.com",
        "Ada",
        "Obi",
    )


def test_customer_is_reused_by_email_in_any_case_and_updated(merchant: Merchant) -> None:
    first = customer_upsert(merchant=merchant, mode=Mode.TEST, customer_info=ADA)
    again = customer_upsert(
        merchant=merchant,
        mode=Mode.TEST,
        customer_info=CustomerInfo("Ada.Obi@EXAMPLE.com", "+2348099999999", "Adaeze", "Obi-Eze"),
    )
    assert again.pk == first.pk
    assert again.customer_tag == first.customer_tag
    again.refresh_from_db()
    assert (again.phone_number, again.first_name, again.last_name) == (
        "+2348099999999",
        "Adaeze",
        "Obi-Eze",
    )
    assert Customer.objects.count() == 1


def test_customers_are_separate_per_mode_and_merchant(merchant: Merchant) -> None:
    other = CustomerFactory(email=ADA.email).merchant
    test_customer = customer_upsert(merchant=merchant, mode=Mode.TEST, customer_info=ADA)
    live_customer = customer_upsert(merchant=merchant, mode=Mode.LIVE, customer_info=ADA)
    other_customer = customer_upsert(merchant=other, mode=Mode.TEST, customer_info=ADA)
    assert len({test_customer.pk, live_customer.pk, other_customer.pk}) == 3


def test_two_transactions_share_the_customer(merchant: Merchant, fixed_item: PaymentItem) -> None:
    first = initialize(merchant, fixed_item).transaction
    second = initialize(merchant, fixed_item, transaction_reference="order-2").transaction
    assert first.customer_id == second.customer_id


# --- state machine -----------------------------------------------------------------------------


@pytest.mark.parametrize(("from_status", "to_status"), list(product(ALL_STATUSES, ALL_STATUSES)))
def test_allowed_transitions_for_every_pair(from_status: str, to_status: str) -> None:
    expected = from_status == PaymentStatus.PENDING and to_status != PaymentStatus.PENDING
    assert transition_allowed(from_status=from_status, to_status=to_status) is expected


def test_every_status_has_an_entry_in_the_map() -> None:
    assert set(ALLOWED_TRANSITIONS) == set(ALL_STATUSES)


@pytest.mark.parametrize(("from_status", "to_status"), list(product(ALL_STATUSES, ALL_STATUSES)))
def test_status_transition_applies_only_allowed_pairs(from_status: str, to_status: str) -> None:
    paid_at = timezone.now() if from_status == PaymentStatus.PAID else None
    txn = CollectionTransactionFactory(payment_status=from_status, paid_at=paid_at)
    now = timezone.now()
    changes = (
        {"paid_at": now, "amount_paid": txn.amount_to_be_paid}
        if to_status == PaymentStatus.PAID
        else None
    )
    if transition_allowed(from_status=from_status, to_status=to_status):
        services._status_transition(collection=txn, to_status=to_status, now=now, changes=changes)
        txn.refresh_from_db()
        assert txn.payment_status == to_status
        assert txn.status_changed_at == now
    else:
        with pytest.raises(IllegalTransitionError):
            services._status_transition(
                collection=txn, to_status=to_status, now=now, changes=changes
            )
        txn.refresh_from_db()
        assert txn.payment_status == from_status


@pytest.fixture
def status_changes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str]]:
    """Records every call of the status-change hook (it still runs)."""
    calls: list[tuple[str, str, str]] = []
    original = services.transaction_status_changed

    def recording(*, collection: CollectionTransaction, previous_status: str) -> None:
        calls.append((collection.reference, previous_status, collection.payment_status))
        original(collection=collection, previous_status=previous_status)

    monkeypatch.setattr(services, "transaction_status_changed", recording)
    return calls


def test_paid_confirmation_sets_the_payment_fields(status_changes) -> None:
    txn = CollectionTransactionFactory()
    result = transaction_confirm(
        collection=txn,
        outcome=PaymentStatus.PAID,
        gateway_reference="SBX_1",
        gateway_used="sandbox",
        source=ConfirmationSource.TEST_HELPER,
    )
    assert result.applied is True
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PAID
    assert txn.paid_at is not None
    assert txn.amount_paid == Decimal("7205.00")
    assert txn.gateway_reference == "SBX_1"
    assert txn.gateway_used == "sandbox"
    assert txn.no_of_attempts == 1
    attempt = TransactionAttempt.objects.get(transaction=txn)
    assert (attempt.outcome, attempt.applied, attempt.status_before) == ("paid", True, "pending")
    assert status_changes == [(txn.reference, "pending", "paid")]


@pytest.mark.parametrize("outcome", [PaymentStatus.FAILED, PaymentStatus.CANCELLED])
def test_unsuccessful_confirmation_leaves_paid_fields_empty(outcome: str, status_changes) -> None:
    txn = CollectionTransactionFactory()
    result = transaction_confirm(collection=txn, outcome=outcome, gateway_reference="SBX_2")
    assert result.applied is True
    txn.refresh_from_db()
    assert txn.payment_status == outcome
    assert txn.paid_at is None
    assert txn.amount_paid == Decimal("0.00")
    assert txn.gateway_reference == "SBX_2"
    assert status_changes == [(txn.reference, "pending", outcome)]


@pytest.mark.parametrize(("status", "outcome"), list(product(TERMINAL, OUTCOMES)))
def test_late_confirmation_is_recorded_not_applied(
    status: str, outcome: str, status_changes
) -> None:
    paid_at = timezone.now() - timedelta(minutes=5) if status == PaymentStatus.PAID else None
    txn = CollectionTransactionFactory(
        payment_status=status, paid_at=paid_at, gateway_reference="FIRST", no_of_attempts=1
    )
    result = transaction_confirm(
        collection=txn, outcome=outcome, gateway_reference="LATE", source="provider_webhook"
    )
    assert result.applied is False
    txn.refresh_from_db()
    assert txn.payment_status == status
    assert txn.paid_at == paid_at
    assert txn.gateway_reference == "FIRST"
    assert txn.no_of_attempts == 2
    attempt = TransactionAttempt.objects.get(transaction=txn)
    assert attempt.applied is False
    assert attempt.status_before == status
    assert attempt.gateway_reference == "LATE"
    assert attempt.note == f"transaction was already {status}"
    assert status_changes == []


def test_paid_with_a_wrong_amount_is_not_applied() -> None:
    txn = CollectionTransactionFactory()
    result = transaction_confirm(
        collection=txn, outcome=PaymentStatus.PAID, amount_paid=Decimal("7000.00")
    )
    assert result.applied is False
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PENDING
    assert "does not match" in result.attempt.note


def test_paid_with_the_right_amount_is_applied() -> None:
    txn = CollectionTransactionFactory()
    result = transaction_confirm(
        collection=txn, outcome=PaymentStatus.PAID, amount_paid=Decimal("7205.00")
    )
    assert result.applied is True


def test_confirmation_meta_data_is_merged() -> None:
    txn = CollectionTransactionFactory(meta_data={"a": 1})
    transaction_confirm(
        collection=txn, outcome=PaymentStatus.PAID, meta_data={"card": {"last4": "4081"}}
    )
    txn.refresh_from_db()
    assert txn.meta_data == {"a": 1, "card": {"last4": "4081"}}


@pytest.mark.parametrize("outcome", ["pending", "expired", "refunded", ""])
def test_confirmation_outcome_must_be_paid_failed_or_cancelled(outcome: str) -> None:
    txn = CollectionTransactionFactory()
    with pytest.raises(ApplicationError, match="outcome must be one of"):
        transaction_confirm(collection=txn, outcome=outcome)
    assert not TransactionAttempt.objects.exists()


# --- declined cards and the attempt limit ------------------------------------------------------


def decline(txn: CollectionTransaction, *, attempt_limit: int | None = 3):  # type: ignore[no-untyped-def]
    return transaction_confirm(
        collection=txn,
        outcome=PaymentStatus.FAILED,
        gateway_reference="SBX_DECLINED",
        source=ConfirmationSource.CHECKOUT,
        meta_data=DECLINED_CARD_META,
        attempt_limit=attempt_limit,
    )


def test_decline_below_the_limit_leaves_the_transaction_pending(
    status_changes, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    txn = CollectionTransactionFactory()
    with django_capture_on_commit_callbacks() as enqueued:
        result = decline(txn)
    assert (result.applied, result.attempts_left) == (False, 2)
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PENDING
    assert txn.no_of_attempts == 1
    assert txn.status_changed_at is None
    assert (txn.gateway_reference, txn.meta_data) == (None, None)
    attempt = TransactionAttempt.objects.get(transaction=txn)
    assert (attempt.outcome, attempt.applied, attempt.status_before) == (
        "failed",
        False,
        "pending",
    )
    assert attempt.meta == DECLINED_CARD_META
    assert attempt.gateway_reference == "SBX_DECLINED"
    assert "attempt 1 of 3" in attempt.note
    assert status_changes == []
    assert not Event.objects.exists()
    assert not WebhookDelivery.objects.exists()
    assert enqueued == []


def test_the_decline_that_reaches_the_limit_fails_with_its_event(status_changes) -> None:
    txn = CollectionTransactionFactory()
    assert [decline(txn).attempts_left for _ in range(2)] == [2, 1]
    result = decline(txn)
    assert (result.applied, result.attempts_left) == (True, None)
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.FAILED
    assert txn.no_of_attempts == 3
    assert txn.meta_data == DECLINED_CARD_META
    assert txn.amount_paid == Decimal("0.00")
    assert status_changes == [(txn.reference, "pending", "failed")]
    assert list(Event.objects.values_list("event_type", flat=True)) == ["transaction.failed"]


def test_a_decline_once_the_count_is_past_a_lowered_limit_fails() -> None:
    txn = CollectionTransactionFactory(no_of_attempts=4)
    assert decline(txn, attempt_limit=3).applied is True
    txn.refresh_from_db()
    assert (txn.payment_status, txn.no_of_attempts) == (PaymentStatus.FAILED, 5)


def test_decline_then_a_good_card_pays_once_with_exact_amounts(status_changes) -> None:
    txn = CollectionTransactionFactory()
    decline(txn)
    result = transaction_confirm(
        collection=txn,
        outcome=PaymentStatus.PAID,
        gateway_reference="SBX_PAID",
        source=ConfirmationSource.CHECKOUT,
        meta_data={"card": {"brand": "visa", "last4": "4081"}},
        attempt_limit=3,
    )
    assert (result.applied, result.attempts_left) == (True, None)
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PAID
    assert txn.no_of_attempts == 2
    assert txn.amount_paid == Decimal("7205.00")
    assert txn.gateway_reference == "SBX_PAID"
    assert txn.meta_data == {"card": {"brand": "visa", "last4": "4081"}}
    assert status_changes == [(txn.reference, "pending", "paid")]
    event = Event.objects.get()
    assert event.event_type == "transaction.paid"
    body = json.loads(event.body_bytes)["data"]
    assert (body["amount"], body["transaction_fee"], body["amount_to_be_paid"]) == (
        "7000.00",
        "205.00",
        "7205.00",
    )
    assert body["amount_paid"] == "7205.00"


def test_without_an_attempt_limit_a_failed_outcome_fails_at_once() -> None:
    """The test helper and live verification report a final failure, not a card to retry."""
    txn = CollectionTransactionFactory()
    result = decline(txn, attempt_limit=None)
    assert (result.applied, result.attempts_left) == (True, None)
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.FAILED


@pytest.mark.parametrize("status", TERMINAL)
def test_a_decline_on_a_final_transaction_is_late_not_retryable(status: str) -> None:
    paid_at = timezone.now() if status == PaymentStatus.PAID else None
    txn = CollectionTransactionFactory(payment_status=status, paid_at=paid_at)
    result = decline(txn)
    assert (result.applied, result.attempts_left) == (False, None)
    assert result.attempt.note == f"transaction was already {status}"
    txn.refresh_from_db()
    assert txn.payment_status == status
    assert not Event.objects.exists()


CARD_STEPS = st.lists(st.sampled_from(["decline", "pay", "cancel"]), max_size=8)


@hypothesis_settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(limit=st.integers(min_value=1, max_value=4), steps=CARD_STEPS)
def test_card_outcome_sequences_keep_status_attempts_and_events_consistent(
    limit: int, steps: list[str]
) -> None:
    """A model: pending until a payment, a cancellation or the decline that brings the
    attempts to the limit; then final for good, with exactly one event, and every later
    attempt recorded but not applied."""
    card = CardSummary(brand="visa", last4="0002")
    with transaction.atomic(), override_settings(COLLECTION_CARD_ATTEMPT_LIMIT=limit):
        txn = CollectionTransactionFactory()
        expected = PaymentStatus.PENDING
        for number, step in enumerate(steps, start=1):
            if step == "cancel":
                result = checkout_cancel(collection=txn)
            else:
                outcome = PaymentStatus.PAID if step == "pay" else PaymentStatus.FAILED
                result = checkout_card_pay(collection=txn, outcome=outcome, card=card)
            was_pending = expected == PaymentStatus.PENDING
            if was_pending and step == "pay":
                expected = PaymentStatus.PAID
            elif was_pending and step == "cancel":
                expected = PaymentStatus.CANCELLED
            elif was_pending and step == "decline" and number >= limit:
                expected = PaymentStatus.FAILED
            retry = was_pending and expected == PaymentStatus.PENDING
            assert result.attempts_left == (limit - number if retry else None)
            assert result.applied is (was_pending and not retry)
            txn.refresh_from_db()
            assert txn.payment_status == expected
            assert txn.no_of_attempts == number
            events = list(
                Event.objects.filter(transaction=txn).values_list("event_type", flat=True)
            )
            final = expected != PaymentStatus.PENDING
            assert events == ([f"transaction.{expected}"] if final else [])
        attempts = TransactionAttempt.objects.filter(transaction=txn)
        assert attempts.count() == len(steps)
        assert attempts.filter(applied=True).count() == (
            0 if expected == PaymentStatus.PENDING else 1
        )
        paid = expected == PaymentStatus.PAID
        assert txn.amount_paid == (Decimal("7205.00") if paid else Decimal("0.00"))
        assert (txn.paid_at is not None) is paid
        transaction.set_rollback(True)


# --- expiry ------------------------------------------------------------------------------------


def test_due_pending_transaction_expires(status_changes) -> None:
    txn = CollectionTransactionFactory(expires_at=timezone.now() - timedelta(seconds=1))
    assert transaction_expire(transaction_id=txn.pk) is True
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.EXPIRED
    assert status_changes == [(txn.reference, "pending", "expired")]


def test_pending_transaction_before_expiry_stays() -> None:
    txn = CollectionTransactionFactory()
    assert transaction_expire(transaction_id=txn.pk) is False
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PENDING


@pytest.mark.parametrize("status", TERMINAL)
def test_terminal_transaction_never_expires(status: str) -> None:
    paid_at = timezone.now() if status == PaymentStatus.PAID else None
    txn = CollectionTransactionFactory(
        payment_status=status, paid_at=paid_at, expires_at=timezone.now() - timedelta(days=1)
    )
    assert transaction_expire(transaction_id=txn.pk) is False
    txn.refresh_from_db()
    assert txn.payment_status == status


def test_expire_due_sweeps_only_due_pending_transactions() -> None:
    past = timezone.now() - timedelta(hours=1)
    due = CollectionTransactionFactory.create_batch(3, expires_at=past)
    fresh = CollectionTransactionFactory()
    paid = CollectionTransactionFactory(
        payment_status=PaymentStatus.PAID, paid_at=past, expires_at=past
    )
    progress: list[tuple[int, int]] = []
    summary = transactions_expire_due(
        batch_size=2, on_progress=lambda d, t: progress.append((d, t))
    )
    assert (summary.due, summary.expired) == (3, 3)
    assert progress == [(2, 3), (3, 3)]
    statuses = dict(CollectionTransaction.objects.values_list("pk", "payment_status"))
    assert {statuses[t.pk] for t in due} == {PaymentStatus.EXPIRED}
    assert statuses[fresh.pk] == PaymentStatus.PENDING
    assert statuses[paid.pk] == PaymentStatus.PAID
    assert transactions_expire_due().expired == 0  # a second run changes nothing


def test_payment_after_expiry_is_recorded_not_applied() -> None:
    txn = CollectionTransactionFactory(expires_at=timezone.now() - timedelta(minutes=1))
    transactions_expire_due()
    result = transaction_confirm(collection=txn, outcome=PaymentStatus.PAID)
    assert result.applied is False
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.EXPIRED
    assert txn.paid_at is None
