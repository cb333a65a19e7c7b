"""Payout services: create (idempotent, reserved in one step), dispatch, requery, manual
resolution. After every money-moving scenario the wallet still balances against its ledger."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from core.exceptions import ApplicationError, ConflictError, ServiceUnavailableError
from merchants.models import Mode
from payouts import tasks as payout_tasks
from payouts.models import Payout, PayoutResolution, PayoutStatus, SandboxTransfer
from payouts.rules import ONLY_NGN_MESSAGE
from payouts.services import (
    IDEMPOTENCY_CONFLICT_MESSAGE,
    NOT_ELIGIBLE_MESSAGE,
    internal_reference_generate,
    payout_dispatch,
    payout_fingerprint,
    payout_requery,
    payout_resolve_manually,
)
from payouts.state_machine import IllegalTransitionError
from tests.payouts.helpers import assert_wallet_balanced, dispatch_claim, fund_wallet, reload
from wallets.exceptions import InsufficientBalanceError, WalletInactiveError
from wallets.models import LedgerEntry, LedgerEntryType, WalletStatus
from wallets.providers.sandbox import sandbox_account_name
from wallets.selectors import BANK_ID_MISMATCH_MESSAGE, bank_get_by_code
from wallets.selectors import BANK_NOT_RESOLVED_MESSAGE as BANK_UNRESOLVED_MESSAGE
from wallets.services import wallet_status_set

pytestmark = pytest.mark.django_db

FAILED_ACCOUNT = "1000000001"
AMBIGUOUS_THEN_OK_ACCOUNT = "1000000002"
ALWAYS_AMBIGUOUS_ACCOUNT = "1000000003"


def entries(payout: Payout, entry_type: str | None = None) -> list[LedgerEntry]:
    queryset = LedgerEntry.objects.filter(payout_id=payout.pk).order_by("id")
    if entry_type:
        queryset = queryset.filter(entry_type=entry_type)
    return list(queryset)


# --- Create ---------------------------------------------------------------------------------


def test_create_reserves_amount_plus_fee_in_one_step(funded_wallet, create_payout) -> None:
    result = create_payout(amount=Decimal("1000.00"))
    payout = result.payout
    funded_wallet.refresh_from_db()
    assert result.duplicate is False
    assert payout.status == PayoutStatus.RESERVED
    assert (payout.amount, payout.fee_amount, payout.total_debit_amount) == (
        Decimal("1000.00"),
        Decimal("10.00"),
        Decimal("1010.00"),
    )
    assert funded_wallet.available_balance == Decimal("98990.00")
    assert funded_wallet.reserved_balance == Decimal("1010.00")
    [reserve] = entries(payout)
    assert reserve.entry_type == LedgerEntryType.PAYOUT_RESERVE
    assert reserve.amount == Decimal("1010.00")
    assert reserve.reference == payout.internal_reference
    assert_wallet_balanced(funded_wallet)


def test_create_takes_account_name_from_name_enquiry(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number="0123456789").payout
    assert payout.account_name == sandbox_account_name("0123456789")
    assert payout.bank_name == "Guaranty Trust Bank"
    assert payout.bank_id == bank_get_by_code(bank_code="058").pk


def test_create_records_mode_merchant_and_provider(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    assert payout.mode == Mode.TEST
    assert payout.merchant_id == funded_wallet.merchant_id
    assert payout.wallet_id == funded_wallet.pk
    assert payout.provider_name == "sandbox"


def test_create_wakes_the_batch_dispatcher_after_commit(
    funded_wallet, create_payout, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        create_payout()
    assert callbacks == [payout_tasks.payout_dispatch_wake]


def test_fee_tiers_apply(funded_wallet, create_payout) -> None:
    payout = create_payout(amount=Decimal("20000.00")).payout
    assert payout.fee_amount == Decimal("25.00")
    assert payout.total_debit_amount == Decimal("20025.00")


def test_balance_must_cover_amount_plus_fee(test_wallet, create_payout) -> None:
    fund_wallet(test_wallet, "1009.99")
    with pytest.raises(InsufficientBalanceError):
        create_payout(amount=Decimal("1000.00"))
    assert Payout.objects.count() == 0
    assert not LedgerEntry.objects.filter(entry_type=LedgerEntryType.PAYOUT_RESERVE).exists()


def test_balance_exactly_amount_plus_fee_is_enough(test_wallet, create_payout) -> None:
    fund_wallet(test_wallet, "1010.00")
    create_payout(amount=Decimal("1000.00"))
    test_wallet.refresh_from_db()
    assert test_wallet.available_balance == Decimal("0.00")
    assert_wallet_balanced(test_wallet)


def test_inactive_wallet_is_refused(funded_wallet, create_payout) -> None:
    wallet_status_set(wallet_id=funded_wallet.pk, status=WalletStatus.INACTIVE)
    with pytest.raises(WalletInactiveError) as raised:
        create_payout()
    assert raised.value.message == "merchant wallet is not active"
    assert Payout.objects.count() == 0


def test_create_uses_the_wallet_the_caller_read_and_checks_it_is_the_merchants_of_the_mode(
    funded_wallet, live_wallet, create_payout, django_assert_num_queries
) -> None:
    create_payout(wallet=funded_wallet)  # warm the memos
    # the key check, savepoint, insert, reserve, ledger entry, release: no wallet read
    with django_assert_num_queries(6):
        payout = create_payout(wallet=funded_wallet).payout
    assert payout.wallet_id == funded_wallet.pk
    with pytest.raises(ValueError, match="the merchant's wallet of this mode"):
        create_payout(wallet=live_wallet)
    assert Payout.objects.filter(wallet=live_wallet).count() == 0


def test_only_ngn(funded_wallet, create_payout) -> None:
    with pytest.raises(ApplicationError) as raised:
        create_payout(currency="USD")
    assert raised.value.message == ONLY_NGN_MESSAGE


def test_unsupported_bank(funded_wallet, create_payout) -> None:
    with pytest.raises(ApplicationError) as raised:
        create_payout(bank_code="999")
    assert raised.value.message == BANK_UNRESOLVED_MESSAGE


def test_inactive_bank_is_unsupported(funded_wallet, create_payout) -> None:
    with pytest.raises(ApplicationError) as raised:
        create_payout(bank_code="030")  # Heritage Bank: licence revoked, inactive
    assert raised.value.message == BANK_UNRESOLVED_MESSAGE


def test_bank_id_must_agree_with_bank_code(funded_wallet, create_payout) -> None:
    other_bank = bank_get_by_code(bank_code="044")
    with pytest.raises(ApplicationError) as raised:
        create_payout(bank_code="058", bank_id=other_bank.pk)
    assert raised.value.message == BANK_ID_MISMATCH_MESSAGE


def test_matching_bank_id_is_accepted(funded_wallet, create_payout) -> None:
    bank = bank_get_by_code(bank_code="058")
    assert create_payout(bank_code="058", bank_id=bank.pk).payout.bank_id == bank.pk


def test_unresolvable_account_name_reserves_nothing(funded_wallet, create_payout) -> None:
    with pytest.raises(ApplicationError) as raised:
        create_payout(account_number="0000000000")
    assert raised.value.message == "Beneficiary account name could not be resolved"
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")


def test_name_enquiry_unavailable_is_503(funded_wallet, create_payout) -> None:
    with pytest.raises(ServiceUnavailableError):
        create_payout(account_number="0000000009")
    assert Payout.objects.count() == 0


def test_internal_reference_is_unique_and_provider_safe() -> None:
    references = {internal_reference_generate() for _ in range(200)}
    assert len(references) == 200
    sample = references.pop()
    assert sample.startswith("po_")
    assert sample == sample.lower()
    assert set(sample) <= set("po_0123456789abcdef")


# --- Idempotency ----------------------------------------------------------------------------


def test_replay_returns_the_original_and_reserves_once(funded_wallet, create_payout) -> None:
    first = create_payout(idempotency_key="order-1")
    second = create_payout(idempotency_key="order-1")
    assert second.duplicate is True
    assert second.payout.pk == first.payout.pk
    assert Payout.objects.count() == 1
    assert len(entries(first.payout, LedgerEntryType.PAYOUT_RESERVE)) == 1
    assert_wallet_balanced(funded_wallet)


def test_amount_100_equals_100_00(funded_wallet, create_payout) -> None:
    first = create_payout(idempotency_key="order-2", amount=Decimal("100"))
    second = create_payout(idempotency_key="order-2", amount=Decimal("100.00"))
    assert second.duplicate is True
    assert second.payout.pk == first.payout.pk


def test_same_key_different_parameters_conflicts(funded_wallet, create_payout) -> None:
    create_payout(idempotency_key="order-3", amount=Decimal("100.00"))
    with pytest.raises(ConflictError) as raised:
        create_payout(idempotency_key="order-3", amount=Decimal("100.01"))
    assert raised.value.message == IDEMPOTENCY_CONFLICT_MESSAGE
    assert raised.value.status == 409
    assert Payout.objects.count() == 1


def test_replay_is_answered_even_when_balance_is_gone(test_wallet, create_payout) -> None:
    fund_wallet(test_wallet, "1010.00")
    first = create_payout(idempotency_key="order-4")
    assert create_payout(idempotency_key="order-4").payout.pk == first.payout.pk


def test_keys_are_scoped_to_the_wallet(funded_wallet, live_mode, create_payout) -> None:
    test_payout = create_payout(idempotency_key="shared").payout
    live_payout = create_payout(idempotency_key="shared", mode=Mode.LIVE).payout
    assert test_payout.pk != live_payout.pk
    assert live_payout.wallet_id == live_mode.pk


@pytest.mark.parametrize(
    "change",
    [
        {"account_number": "0123456788"},
        {"bank_code": "044"},
        {"bank_id": 1},
        {"amount": Decimal("10.01")},
        {"currency": "USD"},
        {"narration": "other"},
    ],
)
def test_fingerprint_changes_with_every_parameter(change: dict) -> None:
    base = {
        "account_number": "0123456789",
        "bank_code": "058",
        "bank_id": None,
        "amount": Decimal("10"),
        "currency": "NGN",
        "narration": None,
    }
    assert payout_fingerprint(**base) != payout_fingerprint(**{**base, **change})


def test_fingerprint_normalises_amount_and_empty_narration() -> None:
    base = {"account_number": "0123456789", "bank_code": "058", "bank_id": None, "currency": "NGN"}
    assert payout_fingerprint(**base, amount=Decimal("100"), narration="") == payout_fingerprint(
        **base, amount=Decimal("100.00"), narration=None
    )


# --- Dispatch -------------------------------------------------------------------------------


def test_dispatch_success_captures_amount_and_fee(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    dispatched = payout_dispatch(payout_id=payout.pk)
    assert dispatched.status == PayoutStatus.SUCCESSFUL
    assert dispatched.completed_at is not None
    assert dispatched.dispatch_attempts == 1
    assert dispatched.provider_reference.startswith("TRF_sbx_")
    assert dispatched.provider_responses[0]["operation"] == "sandbox.initiate_transfer"
    [debit] = entries(payout, LedgerEntryType.PAYOUT_DEBIT)
    assert (debit.amount, debit.fee_amount) == (Decimal("1000.00"), Decimal("10.00"))
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")
    assert funded_wallet.available_balance == Decimal("98990.00")
    assert_wallet_balanced(funded_wallet)


def test_dispatch_failure_releases_funds(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number=FAILED_ACCOUNT).payout
    failed = payout_dispatch(payout_id=payout.pk)
    assert failed.status == PayoutStatus.FAILED
    assert failed.error_message == "Transfer reversed by the beneficiary bank (sandbox)"
    assert failed.completed_at is not None
    [reversal] = entries(payout, LedgerEntryType.PAYOUT_REVERSAL)
    assert reversal.amount == Decimal("1010.00")
    funded_wallet.refresh_from_db()
    assert funded_wallet.available_balance == Decimal("100000.00")
    assert funded_wallet.reserved_balance == Decimal("0.00")
    assert_wallet_balanced(funded_wallet)


def test_dispatch_timeout_is_ambiguous_and_keeps_funds_reserved(
    funded_wallet, create_payout
) -> None:
    payout = create_payout(account_number=AMBIGUOUS_THEN_OK_ACCOUNT).payout
    ambiguous = payout_dispatch(payout_id=payout.pk)
    assert ambiguous.status == PayoutStatus.AMBIGUOUS
    assert ambiguous.completed_at is None
    assert ambiguous.ambiguous_since is not None
    first_requery = ambiguous.next_requery_at - ambiguous.ambiguous_since
    assert timedelta(seconds=60) <= first_requery <= timedelta(seconds=90)
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("1010.00")
    assert entries(payout, LedgerEntryType.PAYOUT_DEBIT) == []
    assert entries(payout, LedgerEntryType.PAYOUT_REVERSAL) == []
    assert_wallet_balanced(funded_wallet)


def test_dispatch_is_idempotent(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    payout_dispatch(payout_id=payout.pk)
    assert payout_dispatch(payout_id=payout.pk) is None
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    assert len(entries(payout, LedgerEntryType.PAYOUT_DEBIT)) == 1


def test_dispatch_of_missing_payout_does_nothing(db) -> None:
    assert payout_dispatch(payout_id=987654) is None


def test_dispatch_skips_a_payout_being_dispatched(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    assert dispatch_claim(payout_id=payout.pk) is not None
    assert payout_dispatch(payout_id=payout.pk) is None
    assert reload(payout).status == PayoutStatus.PROCESSING
    assert not SandboxTransfer.objects.exists()


def test_stale_claim_is_retaken_without_sending_twice(funded_wallet, create_payout) -> None:
    """The worker sent the transfer and died before recording it: the next attempt asks the
    provider by reference and settles from its answer, without a second transfer."""
    from payouts.providers.sandbox import SandboxProvider
    from payouts.services import transfer_request

    payout = create_payout().payout
    claim = dispatch_claim(payout_id=payout.pk)
    SandboxProvider().initiate_transfer(transfer_request(claim.payout))  # then the crash
    Payout.objects.filter(pk=payout.pk).update(
        dispatch_claimed_at=timezone.now() - timedelta(minutes=10)
    )
    settled = payout_dispatch(payout_id=payout.pk)
    assert settled.status == PayoutStatus.SUCCESSFUL
    assert settled.dispatch_attempts == 2
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    assert len(entries(payout, LedgerEntryType.PAYOUT_DEBIT)) == 1
    assert_wallet_balanced(funded_wallet)


def test_stale_claim_never_sent_is_sent_once(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    dispatch_claim(payout_id=payout.pk)
    Payout.objects.filter(pk=payout.pk).update(
        dispatch_claimed_at=timezone.now() - timedelta(minutes=10)
    )
    assert payout_dispatch(payout_id=payout.pk).status == PayoutStatus.SUCCESSFUL
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1


# --- Requery --------------------------------------------------------------------------------


def test_requery_resolves_ambiguous_to_successful(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number=AMBIGUOUS_THEN_OK_ACCOUNT).payout
    payout_dispatch(payout_id=payout.pk)
    resolved = payout_requery(payout=reload(payout))
    assert resolved.status == PayoutStatus.SUCCESSFUL
    assert resolved.requery_count == 1
    assert resolved.next_requery_at is None
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    assert len(entries(payout, LedgerEntryType.PAYOUT_DEBIT)) == 1
    assert_wallet_balanced(funded_wallet)


def test_requery_inconclusive_stays_ambiguous_with_backoff(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number=ALWAYS_AMBIGUOUS_ACCOUNT).payout
    payout_dispatch(payout_id=payout.pk)
    before = timezone.now()
    first = payout_requery(payout=reload(payout))
    second = payout_requery(payout=reload(payout))
    assert first.status == second.status == PayoutStatus.AMBIGUOUS
    assert second.requery_count == 2
    assert first.next_requery_at >= before + timedelta(minutes=3)
    assert second.next_requery_at >= before + timedelta(minutes=10)
    assert second.ambiguous_since == first.ambiguous_since
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("1010.00")
    assert_wallet_balanced(funded_wallet)


def test_the_schedules_last_step_repeats(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number=ALWAYS_AMBIGUOUS_ACCOUNT).payout
    payout_dispatch(payout_id=payout.pk)
    Payout.objects.filter(pk=payout.pk).update(requery_count=30)
    before = timezone.now()
    requeried = payout_requery(payout=reload(payout))
    assert before + timedelta(hours=1) <= requeried.next_requery_at
    assert requeried.next_requery_at <= before + timedelta(hours=1, seconds=5)


@pytest.mark.parametrize("account_number", ["0123456789", FAILED_ACCOUNT])
def test_requery_of_final_payout_conflicts(funded_wallet, create_payout, account_number) -> None:
    payout = create_payout(account_number=account_number).payout
    payout_dispatch(payout_id=payout.pk)
    with pytest.raises(ConflictError) as raised:
        payout_requery(payout=reload(payout))
    assert raised.value.message == NOT_ELIGIBLE_MESSAGE


def test_requery_of_reserved_payout_queues_dispatch_without_provider_call(
    funded_wallet, create_payout, django_capture_on_commit_callbacks
) -> None:
    payout = create_payout().payout
    with django_capture_on_commit_callbacks() as callbacks:
        requeried = payout_requery(payout=reload(payout))
    assert requeried.status == PayoutStatus.RESERVED
    assert len(callbacks) == 1
    assert not SandboxTransfer.objects.exists()


def test_requery_of_payout_being_dispatched_changes_nothing(
    funded_wallet, create_payout, django_capture_on_commit_callbacks
) -> None:
    payout = create_payout().payout
    dispatch_claim(payout_id=payout.pk)
    with django_capture_on_commit_callbacks() as callbacks:
        requeried = payout_requery(payout=reload(payout))
    assert requeried.status == PayoutStatus.PROCESSING
    assert callbacks == []


# --- Manual resolution ----------------------------------------------------------------------


@pytest.fixture
def staff_user(db):
    return get_user_model().objects.create_user(username="finance", password="pw-12345678")


@pytest.fixture
def ambiguous_payout(funded_wallet, create_payout) -> Payout:
    payout = create_payout(account_number=ALWAYS_AMBIGUOUS_ACCOUNT).payout
    payout_dispatch(payout_id=payout.pk)
    return reload(payout)


def test_manual_success_captures_and_records_who_why(
    funded_wallet, ambiguous_payout, staff_user
) -> None:
    resolution = payout_resolve_manually(
        payout_id=ambiguous_payout.pk,
        to_status=PayoutStatus.SUCCESSFUL,
        reason="Provider confirmed by email ticket 8812",
        resolved_by=staff_user,
    )
    payout = reload(ambiguous_payout)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.completed_at is not None
    assert (resolution.from_status, resolution.to_status) == ("ambiguous", "successful")
    assert resolution.resolved_by == staff_user
    assert resolution.reason == "Provider confirmed by email ticket 8812"
    assert resolution.created_at is not None
    assert len(entries(payout, LedgerEntryType.PAYOUT_DEBIT)) == 1
    assert_wallet_balanced(funded_wallet)


def test_manual_failure_releases(funded_wallet, ambiguous_payout, staff_user) -> None:
    payout_resolve_manually(
        payout_id=ambiguous_payout.pk,
        to_status=PayoutStatus.FAILED,
        reason="Beneficiary bank confirmed no credit",
        resolved_by=staff_user,
    )
    payout = reload(ambiguous_payout)
    assert payout.status == PayoutStatus.FAILED
    assert payout.error_message == "Transfer failed"  # the internal reason stays internal
    funded_wallet.refresh_from_db()
    assert funded_wallet.available_balance == Decimal("100000.00")
    assert_wallet_balanced(funded_wallet)


@pytest.mark.parametrize("reason", ["", "   ", "ok"])
def test_manual_resolution_needs_a_written_reason(ambiguous_payout, staff_user, reason) -> None:
    with pytest.raises(ApplicationError):
        payout_resolve_manually(
            payout_id=ambiguous_payout.pk,
            to_status=PayoutStatus.SUCCESSFUL,
            reason=reason,
            resolved_by=staff_user,
        )
    assert reload(ambiguous_payout).status == PayoutStatus.AMBIGUOUS
    assert not PayoutResolution.objects.exists()


@pytest.mark.parametrize("to_status", [PayoutStatus.DISPATCHED, PayoutStatus.RESERVED, "paid"])
def test_manual_resolution_only_to_final(ambiguous_payout, staff_user, to_status) -> None:
    with pytest.raises(ApplicationError):
        payout_resolve_manually(
            payout_id=ambiguous_payout.pk,
            to_status=to_status,
            reason="A sufficiently long reason",
            resolved_by=staff_user,
        )


def test_manual_resolution_only_for_ambiguous(funded_wallet, create_payout, staff_user) -> None:
    payout = create_payout().payout
    with pytest.raises(ConflictError):
        payout_resolve_manually(
            payout_id=payout.pk,
            to_status=PayoutStatus.FAILED,
            reason="A sufficiently long reason",
            resolved_by=staff_user,
        )
    assert reload(payout).status == PayoutStatus.RESERVED


def test_resolved_payout_cannot_be_resolved_again(ambiguous_payout, staff_user) -> None:
    payout_resolve_manually(
        payout_id=ambiguous_payout.pk,
        to_status=PayoutStatus.SUCCESSFUL,
        reason="Provider confirmed by phone",
        resolved_by=staff_user,
    )
    with pytest.raises(ConflictError):
        payout_resolve_manually(
            payout_id=ambiguous_payout.pk,
            to_status=PayoutStatus.FAILED,
            reason="Changed my mind entirely",
            resolved_by=staff_user,
        )
    assert PayoutResolution.objects.count() == 1


def test_state_machine_guards_the_services(funded_wallet, create_payout) -> None:
    """A successful payout cannot be failed by a late provider answer."""
    from payouts.services import PayoutFinalEffects, payout_fail

    payout = create_payout().payout
    payout_dispatch(payout_id=payout.pk)
    with pytest.raises(IllegalTransitionError):
        payout_fail(
            reload(payout), now=timezone.now(), message="late", effects=PayoutFinalEffects()
        )
