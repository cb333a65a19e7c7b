"""refunds.services: where a refund's money comes from, the limits, idempotency, the provider's
answers and where a failed refund's money goes back."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.utils import timezone

from collections_app.models import CollectionTransaction, PaymentStatus
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from merchants.models import Merchant, Mode
from refunds import services
from refunds.models import Refund, RefundStatus
from refunds.providers.base import RefundOutcome, RefundResult
from refunds.services import (
    IDEMPOTENCY_CONFLICT_MESSAGE,
    refund_answer_apply,
    refund_create,
    refund_send,
    refunds_check_due,
)
from settlements.models import PlatformAccount, PlatformLedgerEntry
from settlements.platform_ledger import platform_balances
from tests.collections_app.factories import CollectionTransactionFactory
from tests.refunds.factories import collection_settle, paid_collection, wallet_of
from wallets.exceptions import INSUFFICIENT_BALANCE_MESSAGE
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.services import wallet_fund
from webhooks.models import Event, EventType

pytestmark = pytest.mark.django_db

ZERO = Decimal("0.00")


def create(merchant: Merchant, collection: CollectionTransaction, **overrides):  # type: ignore[no-untyped-def]
    arguments = {
        "merchant": merchant,
        "mode": collection.mode,
        "transaction_reference": collection.reference,
        "amount": None,
        "reason": "",
        "idempotency_key": "refund-1",
        "initiated_by": "test",
    }
    arguments.update(overrides)
    return refund_create(**arguments)


def fund(merchant: Merchant, amount: str, mode: str = Mode.TEST) -> None:
    wallet_fund(
        wallet_id=wallet_of(merchant, mode).pk, amount=Decimal(amount), reference=f"fund-{amount}"
    )


def owed(merchant: Merchant, mode: str = Mode.TEST) -> Decimal:
    return platform_balances(mode=mode, merchant_id=merchant.pk)[PlatformAccount.OWED_MERCHANTS]


def equation_holds(mode: str = Mode.TEST) -> bool:
    return platform_balances(mode=mode).equation_holds


# --- Where the money comes from ----------------------------------------------------------------


def test_partial_refund_of_an_unsettled_collection_is_deducted_from_what_is_owed(
    merchant: Merchant,
) -> None:
    collection = paid_collection(merchant=merchant)
    assert owed(merchant) == Decimal("7000.00")

    result = create(merchant, collection, amount=Decimal("2000.00"), reason="one item back")

    refund = result.refund
    assert result.duplicate is False
    assert refund.status == RefundStatus.PENDING
    assert refund.amount == Decimal("2000.00")
    assert refund.deducted_from_settlement == Decimal("2000.00")
    assert refund.debited_from_wallet == ZERO
    assert refund.fee_returned == ZERO
    assert refund.reason == "one item back"
    collection.refresh_from_db()
    assert collection.amount_refunded == Decimal("2000.00")
    assert owed(merchant) == Decimal("5000.00")
    balances = platform_balances(mode=Mode.TEST)
    assert balances[PlatformAccount.REFUNDS_PENDING] == Decimal("2000.00")
    assert balances.equation_holds
    assert not LedgerEntry.objects.filter(entry_type=LedgerEntryType.REFUND).exists()


def test_full_refund_of_an_unsettled_collection_takes_the_fee_part_from_the_wallet(
    merchant: Merchant,
) -> None:
    collection = paid_collection(merchant=merchant)
    fund(merchant, "500.00")

    refund = create(merchant, collection).refund

    assert refund.amount == Decimal("7205.00")
    assert refund.deducted_from_settlement == Decimal("7000.00")
    assert refund.debited_from_wallet == Decimal("205.00")
    assert wallet_of(merchant).available_balance == Decimal("295.00")
    entry = LedgerEntry.objects.get(entry_type=LedgerEntryType.REFUND)
    assert entry.amount == Decimal("205.00")
    assert entry.reference == refund.refund_id
    assert equation_holds()


def test_refund_of_a_settled_collection_debits_the_wallet(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)
    collection_settle(collection)
    assert wallet_of(merchant).available_balance == Decimal("7000.00")

    refund = create(merchant, collection, amount=Decimal("3000.00")).refund

    assert refund.deducted_from_settlement == ZERO
    assert refund.debited_from_wallet == Decimal("3000.00")
    assert wallet_of(merchant).available_balance == Decimal("4000.00")
    balances = platform_balances(mode=Mode.TEST)
    assert balances[PlatformAccount.MERCHANT_CREDITS] == Decimal("4000.00")
    assert balances.equation_holds


def test_settled_refund_beyond_the_wallet_balance_is_refused_and_changes_nothing(
    merchant: Merchant,
) -> None:
    collection = paid_collection(merchant=merchant)
    collection_settle(collection)
    entries_before = PlatformLedgerEntry.objects.count()

    with pytest.raises(ApplicationError) as raised:
        create(merchant, collection, amount=Decimal("7100.00"))

    assert raised.value.status == 400
    assert raised.value.message == INSUFFICIENT_BALANCE_MESSAGE
    assert not Refund.objects.exists()
    collection.refresh_from_db()
    assert collection.amount_refunded == ZERO
    assert wallet_of(merchant).available_balance == Decimal("7000.00")
    assert PlatformLedgerEntry.objects.count() == entries_before
    assert not Event.objects.filter(event_type=EventType.REFUND_PENDING).exists()


def test_fee_is_returned_in_proportion_when_the_setting_is_on(merchant: Merchant, settings) -> None:  # type: ignore[no-untyped-def]
    settings.COLLECTION_REFUND_RETURNS_FEE = True
    collection = paid_collection(merchant=merchant)

    first = create(merchant, collection, amount=Decimal("3602.50"), idempotency_key="a").refund
    second = create(merchant, collection, idempotency_key="b").refund

    # 205.00 * 3602.50 / 7205.00 = 102.50; the last refund takes what is left of the fee.
    assert first.fee_returned == Decimal("102.50")
    assert first.deducted_from_settlement == Decimal("3500.00")
    assert second.fee_returned == Decimal("102.50")
    assert second.deducted_from_settlement == Decimal("3500.00")
    assert second.debited_from_wallet == ZERO
    balances = platform_balances(mode=Mode.TEST)
    assert balances[PlatformAccount.FEES] == ZERO
    assert balances.equation_holds


# --- Limits ------------------------------------------------------------------------------------


def test_partial_then_the_rest_then_a_third_is_refused(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)
    fund(merchant, "205.00")
    create(merchant, collection, amount=Decimal("2000.00"), idempotency_key="first")
    rest = create(merchant, collection, idempotency_key="second").refund
    assert rest.amount == Decimal("5205.00")

    with pytest.raises(ApplicationError) as raised:
        create(merchant, collection, amount=Decimal("0.01"), idempotency_key="third")

    assert raised.value.message == "amount: exceeds the refundable amount 0.00"
    with pytest.raises(ApplicationError) as again:
        create(merchant, collection, idempotency_key="fourth")
    assert again.value.message.startswith("transaction_reference:")
    assert Refund.objects.count() == 2
    assert equation_holds()


def test_amount_above_what_is_left_names_the_refundable_amount(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)
    create(merchant, collection, amount=Decimal("7000.00"), idempotency_key="a")

    with pytest.raises(ApplicationError) as raised:
        create(merchant, collection, amount=Decimal("205.01"), idempotency_key="b")

    assert raised.value.status == 400
    assert raised.value.message == "amount: exceeds the refundable amount 205.00"


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        (Decimal("0"), "amount: must be greater than zero"),
        (Decimal("-5"), "amount: must be greater than zero"),
        (Decimal("1.005"), "amount: must have at most two decimal places"),
        (Decimal("1000000000000.01"), "amount: must not exceed 1000000000000.00"),
    ],
)
def test_amounts_break_the_payout_amount_rules_are_refused(
    merchant: Merchant, amount: Decimal, message: str
) -> None:
    collection = paid_collection(merchant=merchant)

    with pytest.raises(ApplicationError) as raised:
        create(merchant, collection, amount=amount)

    assert raised.value.message == message
    assert not Refund.objects.exists()


def test_unknown_reference_is_not_found(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)

    with pytest.raises(NotFoundError) as raised:
        create(merchant, collection, transaction_reference="TXN_NOPE")

    assert raised.value.message == "Transaction not found"


def test_another_merchants_collection_is_not_found(merchant: Merchant) -> None:
    other = paid_collection(merchant=CollectionTransactionFactory().merchant)

    with pytest.raises(NotFoundError):
        create(merchant, other)

    other.refresh_from_db()
    assert other.amount_refunded == ZERO
    assert not Refund.objects.exists()


def test_the_other_modes_collection_is_not_found(merchant: Merchant) -> None:
    live = paid_collection(merchant=merchant, mode=Mode.LIVE)

    with pytest.raises(NotFoundError):
        create(merchant, live, mode=Mode.TEST)

    assert not Refund.objects.exists()


@pytest.mark.parametrize(
    "status", [PaymentStatus.PENDING, PaymentStatus.FAILED, PaymentStatus.EXPIRED]
)
def test_a_collection_that_is_not_paid_is_refused(merchant: Merchant, status: str) -> None:
    collection = CollectionTransactionFactory(merchant=merchant, payment_status=status)

    with pytest.raises(ApplicationError) as raised:
        create(merchant, collection)

    assert raised.value.status == 400
    assert raised.value.message == (
        f"transaction_reference: only a paid transaction can be refunded (this one is {status})"
    )
    assert not Refund.objects.exists()


# --- Idempotency -------------------------------------------------------------------------------


def test_same_key_and_parameters_replay_the_refund(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)
    first = create(merchant, collection, amount=Decimal("100"), reason="x")

    again = create(merchant, collection, amount=Decimal("100.00"), reason="x")

    assert again.duplicate is True
    assert again.refund.pk == first.refund.pk
    assert Refund.objects.count() == 1
    collection.refresh_from_db()
    assert collection.amount_refunded == Decimal("100.00")


def test_same_key_other_parameters_is_a_conflict(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)
    create(merchant, collection, amount=Decimal("100"))

    with pytest.raises(ConflictError) as raised:
        create(merchant, collection, amount=Decimal("101"))

    assert raised.value.message == IDEMPOTENCY_CONFLICT_MESSAGE
    assert Refund.objects.count() == 1


def test_create_records_refund_pending_and_queues_the_send(
    merchant: Merchant, django_capture_on_commit_callbacks, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    queued: list[int] = []
    monkeypatch.setattr(
        services, "refund_send_enqueue", lambda *, refund_id: queued.append(refund_id)
    )
    collection = paid_collection(merchant=merchant)

    with django_capture_on_commit_callbacks(execute=True):
        refund = create(merchant, collection, amount=Decimal("10.00"), reason="why").refund

    assert queued == [refund.pk]
    event = Event.objects.get(event_type=EventType.REFUND_PENDING)
    assert event.reference == refund.refund_id
    data = __import__("json").loads(event.body)["data"]
    assert data["refund_id"] == refund.refund_id
    assert data["transaction_reference"] == collection.reference
    assert data["amount"] == "10.00"
    assert data["fee_returned"] == "0.00"
    assert data["reason"] == "why"
    assert data["status"] == "pending"
    assert data["processed_at"] is None
    assert data["failure_reason"] is None


# --- Provider answers --------------------------------------------------------------------------


def test_sandbox_processes_a_normal_refund_at_once(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)
    refund = create(merchant, collection, amount=Decimal("100.00")).refund

    sent = refund_send(refund_id=refund.pk)

    assert sent is not None
    assert sent.status == RefundStatus.PROCESSED
    assert sent.processed_at is not None
    assert sent.provider_reference == f"sbx_{refund.refund_id}"
    balances = platform_balances(mode=Mode.TEST)
    assert balances[PlatformAccount.REFUNDS] == Decimal("100.00")
    assert balances[PlatformAccount.REFUNDS_PENDING] == ZERO
    assert balances.equation_holds
    assert Event.objects.filter(event_type=EventType.REFUND_PROCESSED).count() == 1
    # Idempotent: a final refund is left alone.
    assert refund_send(refund_id=refund.pk).status == RefundStatus.PROCESSED  # type: ignore[union-attr]
    assert Event.objects.filter(event_type=EventType.REFUND_PROCESSED).count() == 1


def test_failed_unsettled_refund_gives_back_what_is_owed_and_the_wallet_part(
    merchant: Merchant,
) -> None:
    collection = paid_collection(merchant=merchant)
    fund(merchant, "300.00")
    refund = create(merchant, collection, amount=Decimal("7100.13")).refund
    assert refund.deducted_from_settlement == Decimal("7000.00")
    assert refund.debited_from_wallet == Decimal("100.13")

    failed = refund_send(refund_id=refund.pk)

    assert failed is not None
    assert failed.status == RefundStatus.FAILED
    assert failed.failure_reason
    assert owed(merchant) == Decimal("7000.00")
    assert wallet_of(merchant).available_balance == Decimal("300.00")
    reversal = LedgerEntry.objects.get(entry_type=LedgerEntryType.REFUND_REVERSAL)
    assert reversal.amount == Decimal("100.13")
    collection.refresh_from_db()
    assert collection.amount_refunded == ZERO
    assert platform_balances(mode=Mode.TEST)[PlatformAccount.REFUNDS_PENDING] == ZERO
    assert equation_holds()
    event = Event.objects.get(event_type=EventType.REFUND_FAILED)
    assert __import__("json").loads(event.body)["data"]["failure_reason"] == failed.failure_reason


def test_failed_settled_refund_credits_the_wallet_back(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)
    collection_settle(collection)
    refund = create(merchant, collection, amount=Decimal("1000.13")).refund
    assert wallet_of(merchant).available_balance == Decimal("5999.87")

    refund_send(refund_id=refund.pk)

    assert wallet_of(merchant).available_balance == Decimal("7000.00")
    assert platform_balances(mode=Mode.TEST)[PlatformAccount.MERCHANT_CREDITS] == Decimal("7000.00")
    assert equation_holds()


def test_failed_refund_whose_deduction_a_settlement_took_goes_back_to_the_wallet(
    merchant: Merchant,
) -> None:
    collection = paid_collection(merchant=merchant)
    refund = create(merchant, collection, amount=Decimal("1000.14")).refund
    assert refund_send(refund_id=refund.pk).status == RefundStatus.PENDING  # type: ignore[union-attr]
    # A settlement deducts the refund (as the engine does: net = 7000 - 1000.14).
    settlement = collection_settle(collection)

    refund.refresh_from_db()
    refund.next_check_at = None
    refund.save(update_fields=["next_check_at"])
    failed = refund_send(refund_id=refund.pk)

    assert failed is not None and failed.status == RefundStatus.FAILED
    assert failed.settlement_id == settlement.pk
    assert wallet_of(merchant).available_balance == Decimal("7000.00")
    assert owed(merchant) == ZERO
    assert equation_holds()


def test_pending_answer_waits_with_backoff_then_the_requery_processes(
    merchant: Merchant,
) -> None:
    collection = paid_collection(merchant=merchant)
    refund = create(merchant, collection, amount=Decimal("50.15")).refund

    pending = refund_send(refund_id=refund.pk)
    assert pending is not None and pending.status == RefundStatus.PENDING
    assert pending.check_count == 1
    assert pending.next_check_at is not None and pending.next_check_at > pending.created_at
    assert refunds_check_due().due == 0

    processed = refund_send(refund_id=refund.pk)

    assert processed is not None and processed.status == RefundStatus.PROCESSED
    assert equation_holds()


def test_unknown_answer_keeps_the_refund_pending_and_looks_for_it_before_sending_again(
    merchant: Merchant, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant)
    refund = create(merchant, collection, amount=Decimal("20.00")).refund
    calls: list[str] = []

    class Flaky:
        name = "sandbox"

        def send(self, request):  # type: ignore[no-untyped-def]
            calls.append("send")
            if len(calls) == 1:
                return RefundResult(outcome=RefundOutcome.UNKNOWN, message="timeout")
            return RefundResult(outcome=RefundOutcome.PROCESSED, provider_reference="ps_1")

        def find(self, request):  # type: ignore[no-untyped-def]
            calls.append("find")
            return RefundResult(outcome=RefundOutcome.NOT_FOUND)

        def fetch(self, request, *, provider_reference):  # type: ignore[no-untyped-def]
            raise AssertionError("not acknowledged: nothing to fetch")

    monkeypatch.setattr(services, "refund_provider_get", lambda name: Flaky())
    first = refund_send(refund_id=refund.pk)
    assert first is not None and first.status == RefundStatus.PENDING
    assert first.sent_at is not None

    Refund.objects.filter(pk=refund.pk).update(next_check_at=None)
    second = refund_send(refund_id=refund.pk)

    assert calls == ["send", "find", "send"]
    assert second is not None and second.status == RefundStatus.PROCESSED
    assert second.provider_reference == "ps_1"


def test_a_claimed_send_is_not_sent_twice(merchant: Merchant, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant)
    refund = create(merchant, collection, amount=Decimal("20.00")).refund
    assert services._send_claim(refund=refund, now=refund.created_at)

    untouched = refund_send(refund_id=refund.pk)

    assert untouched is not None and untouched.status == RefundStatus.PENDING
    assert untouched.provider_responses == []


def test_answer_for_a_final_refund_changes_nothing(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)
    refund = create(merchant, collection, amount=Decimal("20.00")).refund
    refund_send(refund_id=refund.pk)

    again = refund_answer_apply(
        refund_id=refund.pk, result=RefundResult(outcome=RefundOutcome.FAILED, message="late")
    )

    assert again.status == RefundStatus.PROCESSED
    collection.refresh_from_db()
    assert collection.amount_refunded == Decimal("20.00")


def test_sweeper_queues_refunds_due(merchant: Merchant, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    queued: list[int] = []
    monkeypatch.setattr(
        services, "refund_send_enqueue", lambda *, refund_id: queued.append(refund_id) or True
    )
    collection = paid_collection(merchant=merchant)
    refund = create(merchant, collection, amount=Decimal("20.00")).refund
    assert refunds_check_due().due == 0  # its own send, queued at creation, comes first
    lease_later = timezone.now() + timedelta(seconds=settings.REFUND_SEND_LEASE_SECONDS + 1)

    report = refunds_check_due(now=lease_later)

    assert report.due == 1
    assert queued == [refund.pk]


def test_failed_refund_can_be_refunded_again(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)
    refund = create(merchant, collection, amount=Decimal("1000.13"), idempotency_key="a").refund
    refund_send(refund_id=refund.pk)

    again = create(merchant, collection, amount=Decimal("7000.00"), idempotency_key="b").refund

    assert again.status == RefundStatus.PENDING
    collection.refresh_from_db()
    assert collection.amount_refunded == Decimal("7000.00")
