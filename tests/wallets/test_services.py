from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from core.exceptions import ApplicationError, NotFoundError
from merchants.models import Mode
from merchants.services import merchant_create
from tests.wallets.factories import FundingTransferFactory
from tests.wallets.writers import wallet_capture, wallet_release, wallet_reserve
from wallets.exceptions import (
    FundingReferenceConflictError,
    InsufficientBalanceError,
    InsufficientReservedBalanceError,
    WalletInactiveError,
)
from wallets.fee_tiers import fee_tiers_validate
from wallets.models import FundingTransfer, LedgerEntry, LedgerEntryType, WalletStatus
from wallets.selectors import wallet_get, wallet_totals
from wallets.services import (
    funding_receive,
    wallet_fund,
    wallet_lock,
    wallet_status_set,
)

pytestmark = pytest.mark.django_db

D = Decimal


def _reserve(wallet, amount: str, reference: str = "PAYOUT-1", payout_id: int | None = None):
    with transaction.atomic():
        locked = wallet_lock(wallet_id=wallet.pk)
        return wallet_reserve(
            wallet=locked, amount=D(amount), reference=reference, payout_id=payout_id
        )


def test_wallet_lock_outside_atomic_block_is_refused(test_wallet) -> None:
    with pytest.raises(RuntimeError, match="inside transaction.atomic"):
        wallet_lock(wallet_id=test_wallet.pk)


def test_wallet_reserve_outside_atomic_block_is_refused(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    with pytest.raises(RuntimeError, match="inside transaction.atomic"):
        wallet_reserve(wallet=test_wallet, amount=D("1.00"), reference="P")


def test_wallet_lock_unknown_wallet_is_not_found(db) -> None:
    with pytest.raises(NotFoundError), transaction.atomic():
        wallet_lock(wallet_id=999_999_999)


def test_funding_credits_available_balance_and_writes_one_entry(test_wallet) -> None:
    result = wallet_fund(wallet_id=test_wallet.pk, amount=D("2500.50"), reference="PRV-1")
    test_wallet.refresh_from_db()
    assert result.duplicate is False
    assert test_wallet.available_balance == D("2500.50")
    entry = result.ledger_entry
    assert entry.entry_type == LedgerEntryType.FUNDING
    assert (entry.amount, entry.available_delta, entry.reserved_delta) == (
        D("2500.50"),
        D("2500.50"),
        D("0.00"),
    )
    assert (entry.available_balance_after, entry.reserved_balance_after) == (
        D("2500.50"),
        D("0.00"),
    )
    assert entry.reference == "PRV-1"


def test_funding_replay_credits_once(test_wallet) -> None:
    first = wallet_fund(wallet_id=test_wallet.pk, amount=D("10.00"), reference="PRV-2")
    replay = wallet_fund(wallet_id=test_wallet.pk, amount=D("10.00"), reference="PRV-2")
    test_wallet.refresh_from_db()
    assert replay.duplicate is True
    assert replay.funding_transfer.pk == first.funding_transfer.pk
    assert test_wallet.available_balance == D("10.00")
    assert LedgerEntry.objects.filter(wallet=test_wallet).count() == 1


def test_funding_reference_reused_for_other_amount_is_a_conflict(test_wallet) -> None:
    wallet_fund(wallet_id=test_wallet.pk, amount=D("10.00"), reference="PRV-3")
    with pytest.raises(FundingReferenceConflictError):
        wallet_fund(wallet_id=test_wallet.pk, amount=D("11.00"), reference="PRV-3")
    test_wallet.refresh_from_db()
    assert test_wallet.available_balance == D("10.00")


def test_funding_reference_reused_for_other_live_wallet_is_a_conflict(live_wallet) -> None:
    other = merchant_create(name="Other Shop", email="other@example.com").merchant
    other_live = wallet_get(merchant=other, mode=Mode.LIVE)
    wallet_fund(wallet_id=other_live.pk, amount=D("10.00"), reference="PRV-4")
    with pytest.raises(FundingReferenceConflictError):
        wallet_fund(wallet_id=live_wallet.pk, amount=D("10.00"), reference="PRV-4")
    live_wallet.refresh_from_db()
    assert live_wallet.available_balance == D("0.00")


def test_funding_an_inactive_wallet_still_credits_it(test_wallet) -> None:
    wallet_status_set(wallet_id=test_wallet.pk, status=WalletStatus.INACTIVE)
    wallet_fund(wallet_id=test_wallet.pk, amount=D("10.00"), reference="PRV-5")
    test_wallet.refresh_from_db()
    assert test_wallet.available_balance == D("10.00")


@pytest.mark.parametrize("amount", ["0.00", "-1.00", "0.001"])
def test_funding_rejects_non_positive_or_sub_kobo_amounts(test_wallet, amount: str) -> None:
    with pytest.raises(ApplicationError):
        wallet_fund(wallet_id=test_wallet.pk, amount=D(amount), reference="PRV-6")
    assert not FundingTransfer.objects.exists()


def test_funding_receive_credits_the_wallet_owning_the_account(test_wallet, live_wallet) -> None:
    funding_receive(
        account_number=live_wallet.static_account_number, amount=D("75.00"), reference="PRV-7"
    )
    live_wallet.refresh_from_db()
    test_wallet.refresh_from_db()
    assert live_wallet.available_balance == D("75.00")
    assert test_wallet.available_balance == D("0.00")
    transfer = FundingTransfer.objects.get(provider_reference="PRV-7")
    assert transfer.receiving_account_number == live_wallet.static_account_number


def test_funding_receive_unknown_account_is_not_found(db) -> None:
    with pytest.raises(NotFoundError):
        funding_receive(account_number="1000000000", amount=D("1.00"), reference="PRV-8")
    assert not FundingTransfer.objects.exists()


# --- references per mode ---------------------------------------------------------------------


def test_one_reference_credits_a_test_wallet_and_a_live_wallet_independently(
    test_wallet, live_wallet
) -> None:
    test_credit = wallet_fund(wallet_id=test_wallet.pk, amount=D("5.00"), reference="REF-1")
    live_credit = wallet_fund(wallet_id=live_wallet.pk, amount=D("7.00"), reference="REF-1")
    assert (test_credit.duplicate, live_credit.duplicate) == (False, False)
    assert test_credit.funding_transfer.mode == Mode.TEST
    assert live_credit.funding_transfer.mode == Mode.LIVE
    test_wallet.refresh_from_db()
    live_wallet.refresh_from_db()
    assert (test_wallet.available_balance, live_wallet.available_balance) == (D("5.00"), D("7.00"))


def test_a_live_reference_replayed_after_a_test_one_is_still_idempotent(
    test_wallet, live_wallet
) -> None:
    wallet_fund(wallet_id=test_wallet.pk, amount=D("5.00"), reference="REF-2")
    wallet_fund(wallet_id=live_wallet.pk, amount=D("7.00"), reference="REF-2")
    replay = wallet_fund(wallet_id=live_wallet.pk, amount=D("7.00"), reference="REF-2")
    assert replay.duplicate is True
    assert replay.funding_transfer.wallet_id == live_wallet.pk
    with pytest.raises(FundingReferenceConflictError):
        wallet_fund(wallet_id=live_wallet.pk, amount=D("8.00"), reference="REF-2")


def test_two_merchants_test_wallets_each_credit_the_same_reference(test_wallet) -> None:
    other = merchant_create(name="Other Shop", email="other@example.com").merchant
    other_wallet = wallet_get(merchant=other, mode=Mode.TEST)
    mine = wallet_fund(wallet_id=test_wallet.pk, amount=D("5.00"), reference="REF-3")
    theirs = wallet_fund(wallet_id=other_wallet.pk, amount=D("9.00"), reference="REF-3")
    assert (mine.duplicate, theirs.duplicate) == (False, False)
    assert FundingTransfer.objects.filter(provider_reference="REF-3").count() == 2


def test_two_live_wallets_never_both_credit_one_reference(live_wallet) -> None:
    other = merchant_create(name="Other Shop", email="other@example.com").merchant
    other_live = wallet_get(merchant=other, mode=Mode.LIVE)
    wallet_fund(wallet_id=live_wallet.pk, amount=D("5.00"), reference="REF-4")
    with pytest.raises(FundingReferenceConflictError):
        wallet_fund(wallet_id=other_live.pk, amount=D("5.00"), reference="REF-4")
    other_live.refresh_from_db()
    assert other_live.available_balance == D("0.00")
    assert FundingTransfer.objects.filter(provider_reference="REF-4").count() == 1


def test_the_database_refuses_a_second_live_funding_with_one_reference(live_wallet) -> None:
    other = merchant_create(name="Other Shop", email="other@example.com").merchant
    other_live = wallet_get(merchant=other, mode=Mode.LIVE)
    wallet_fund(wallet_id=live_wallet.pk, amount=D("5.00"), reference="REF-5")
    with pytest.raises(IntegrityError), transaction.atomic():
        FundingTransferFactory(wallet=other_live, provider_reference="REF-5")


def test_the_database_refuses_one_reference_twice_in_a_test_wallet(test_wallet) -> None:
    FundingTransferFactory(wallet=test_wallet, provider_reference="REF-6")
    with pytest.raises(IntegrityError), transaction.atomic():
        FundingTransferFactory(wallet=test_wallet, provider_reference="REF-6")


def test_reserve_moves_total_debit_from_available_to_reserved(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    entry = _reserve(test_wallet, "60.00", reference="PAYOUT-9", payout_id=9)
    test_wallet.refresh_from_db()
    assert (test_wallet.available_balance, test_wallet.reserved_balance) == (D("40.00"), D("60.00"))
    assert entry.entry_type == LedgerEntryType.PAYOUT_RESERVE
    assert (entry.available_delta, entry.reserved_delta) == (D("-60.00"), D("60.00"))
    assert (entry.payout_id, entry.reference) == (9, "PAYOUT-9")


def test_reserve_exactly_the_available_balance_succeeds(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    _reserve(test_wallet, "100.00")
    test_wallet.refresh_from_db()
    assert test_wallet.available_balance == D("0.00")


def test_reserve_more_than_available_is_refused_and_changes_nothing(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    with pytest.raises(InsufficientBalanceError, match="insufficient available wallet balance"):
        _reserve(test_wallet, "100.01")
    test_wallet.refresh_from_db()
    assert (test_wallet.available_balance, test_wallet.reserved_balance) == (D("100.00"), D("0"))
    assert LedgerEntry.objects.filter(wallet=test_wallet).count() == 1


def test_reserve_on_inactive_wallet_is_refused(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    wallet_status_set(wallet_id=test_wallet.pk, status=WalletStatus.INACTIVE)
    with pytest.raises(WalletInactiveError, match="merchant wallet is not active"):
        _reserve(test_wallet, "1.00")
    test_wallet.refresh_from_db()
    assert test_wallet.reserved_balance == D("0.00")


def test_capture_records_amount_and_fee_in_one_debit_entry(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    _reserve(test_wallet, "60.00")
    entry = wallet_capture(
        wallet_id=test_wallet.pk,
        amount=D("50.00"),
        fee_amount=D("10.00"),
        reference="PAYOUT-1",
        payout_id=1,
    )
    test_wallet.refresh_from_db()
    assert (test_wallet.available_balance, test_wallet.reserved_balance) == (D("40.00"), D("0.00"))
    assert entry.entry_type == LedgerEntryType.PAYOUT_DEBIT
    assert (entry.amount, entry.fee_amount) == (D("50.00"), D("10.00"))
    assert (entry.available_delta, entry.reserved_delta) == (D("0.00"), D("-60.00"))
    totals = wallet_totals(wallet=test_wallet)
    assert totals.captured == D("60.00")
    assert totals.balanced


def test_capture_more_than_reserved_is_refused(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    _reserve(test_wallet, "20.00")
    with pytest.raises(InsufficientReservedBalanceError):
        wallet_capture(
            wallet_id=test_wallet.pk, amount=D("15.00"), fee_amount=D("10.00"), reference="P"
        )
    test_wallet.refresh_from_db()
    assert test_wallet.reserved_balance == D("20.00")


def test_release_returns_total_debit_to_available(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    _reserve(test_wallet, "60.00")
    entry = wallet_release(wallet_id=test_wallet.pk, amount=D("60.00"), reference="PAYOUT-1")
    test_wallet.refresh_from_db()
    assert (test_wallet.available_balance, test_wallet.reserved_balance) == (D("100.00"), D("0"))
    assert entry.entry_type == LedgerEntryType.PAYOUT_REVERSAL
    assert (entry.available_delta, entry.reserved_delta) == (D("60.00"), D("-60.00"))


def test_release_more_than_reserved_is_refused(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    _reserve(test_wallet, "10.00")
    with pytest.raises(InsufficientReservedBalanceError):
        wallet_release(wallet_id=test_wallet.pk, amount=D("10.01"), reference="P")


def test_release_and_capture_work_on_an_inactive_wallet(test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    _reserve(test_wallet, "30.00", reference="A")
    _reserve(test_wallet, "30.00", reference="B")
    wallet_status_set(wallet_id=test_wallet.pk, status=WalletStatus.INACTIVE)
    wallet_capture(
        wallet_id=test_wallet.pk, amount=D("20.00"), fee_amount=D("10.00"), reference="A"
    )
    wallet_release(wallet_id=test_wallet.pk, amount=D("30.00"), reference="B")
    test_wallet.refresh_from_db()
    assert (test_wallet.available_balance, test_wallet.reserved_balance) == (D("70.00"), D("0.00"))


def test_wallet_status_set_rejects_unknown_status(test_wallet) -> None:
    with pytest.raises(ApplicationError):
        wallet_status_set(wallet_id=test_wallet.pk, status="frozen")


def test_totals_reflect_a_mixed_history(test_wallet, fund) -> None:
    fund(test_wallet, "1000.00")
    _reserve(test_wallet, "110.00", reference="A")
    _reserve(test_wallet, "225.00", reference="B")
    wallet_capture(
        wallet_id=test_wallet.pk, amount=D("100.00"), fee_amount=D("10.00"), reference="A"
    )
    wallet_release(wallet_id=test_wallet.pk, amount=D("225.00"), reference="B")
    totals = wallet_totals(wallet=test_wallet)
    assert totals.funded == D("1000.00")
    assert totals.captured == D("110.00")
    assert totals.available == D("890.00")
    assert totals.reserved == D("0.00")
    assert totals.available + totals.reserved + totals.captured == totals.funded
    assert (totals.ledger_available, totals.ledger_reserved) == (D("890.00"), D("0.00"))


def test_totals_count_collection_credits_and_refund_debits(test_wallet, fund) -> None:
    from django.db import transaction

    from wallets.services import wallet_collection_credit, wallet_refund_debit

    fund(test_wallet, "100.00")
    with transaction.atomic():
        wallet = wallet_lock(wallet_id=test_wallet.pk)
        wallet_collection_credit(
            wallet=wallet, entry_type=LedgerEntryType.SETTLEMENT, amount=D("700.00"), reference="S"
        )
        wallet_refund_debit(wallet=wallet, amount=D("300.00"), reference="R")
        wallet_collection_credit(
            wallet=wallet,
            entry_type=LedgerEntryType.REFUND_REVERSAL,
            amount=D("120.00"),
            reference="R",
        )
    totals = wallet_totals(wallet=test_wallet)
    assert (totals.funded, totals.credited, totals.refunded) == (
        D("100.00"),
        D("820.00"),
        D("300.00"),
    )
    assert totals.available == D("620.00")
    assert totals.balanced
    # A balance that moved without its entry is caught.
    type(test_wallet).objects.filter(pk=test_wallet.pk).update(available_balance=D("621.00"))
    assert not wallet_totals(wallet=test_wallet).balanced


def test_test_and_live_wallets_are_independent(test_wallet, live_wallet, fund) -> None:
    fund(test_wallet, "10.00")
    live_wallet.refresh_from_db()
    assert live_wallet.mode == Mode.LIVE
    assert live_wallet.available_balance == D("0.00")


# --- Limits ------------------------------------------------------------------------------------


def _wallet_near_the_limit(wallet, *, headroom: Decimal):
    """A wallet whose balance is ``headroom`` short of the limit (its ledger is not the point)."""
    from core.money import MAX_WALLET_BALANCE
    from wallets.models import Wallet

    Wallet.objects.filter(pk=wallet.pk).update(available_balance=MAX_WALLET_BALANCE - headroom)
    wallet.refresh_from_db()
    return wallet


def test_funding_past_the_wallet_limit_is_a_400_and_the_wallet_stays_usable(test_wallet) -> None:
    from core.money import MAX_WALLET_BALANCE
    from wallets.exceptions import WalletBalanceLimitError

    wallet = _wallet_near_the_limit(test_wallet, headroom=Decimal("1.00"))
    with pytest.raises(WalletBalanceLimitError) as refused:
        wallet_fund(wallet_id=wallet.pk, amount=Decimal("1.01"), reference="OVER-1")
    assert refused.value.status == 400
    assert refused.value.message.startswith("amount: the wallet balance would exceed its limit")
    wallet.refresh_from_db()
    assert wallet.available_balance == MAX_WALLET_BALANCE - Decimal("1.00")
    assert not FundingTransfer.objects.filter(provider_reference="OVER-1").exists()

    wallet_fund(wallet_id=wallet.pk, amount=Decimal("1.00"), reference="UP-TO-THE-LIMIT")
    with transaction.atomic():
        locked = wallet_lock(wallet_id=wallet.pk)
        wallet_reserve(wallet=locked, amount=Decimal("999999999999.99"), reference="STILL-OK")
    wallet.refresh_from_db()
    assert wallet.available_balance + wallet.reserved_balance == MAX_WALLET_BALANCE


def test_one_amount_above_the_limit_is_refused_by_every_balance_service(test_wallet) -> None:
    with pytest.raises(ApplicationError, match="amount: must not exceed 1000000000000.00"):
        wallet_fund(wallet_id=test_wallet.pk, amount=Decimal("1000000000000.01"), reference="X")
    with pytest.raises(ApplicationError, match="amount: must not exceed"), transaction.atomic():
        locked = wallet_lock(wallet_id=test_wallet.pk)
        wallet_reserve(wallet=locked, amount=Decimal("1000000000000.01"), reference="Y")


# --- fee_tiers_validate ----------------------------------------------------------------------


def test_fee_tiers_validate_accepts_contiguous_tiers_in_any_order() -> None:
    fee_tiers_validate(
        tiers=[(D("5000.01"), D("50000.00")), (D("0.01"), D("5000.00")), (D("50000.01"), None)]
    )


def test_fee_tiers_validate_needs_a_tier() -> None:
    with pytest.raises(ApplicationError, match=r"^A fee schedule needs at least one tier\.$"):
        fee_tiers_validate(tiers=[])


def test_fee_tiers_validate_needs_the_first_tier_at_one_kobo() -> None:
    with pytest.raises(ApplicationError, match=r"^The first tier must start at 0\.01\.$"):
        fee_tiers_validate(tiers=[(D("1.00"), None)])


def test_fee_tiers_validate_refuses_an_open_ended_tier_before_the_last() -> None:
    with pytest.raises(
        ApplicationError, match=r"^Only the last tier may be open-ended \(tier from 0\.01\)\.$"
    ):
        fee_tiers_validate(tiers=[(D("0.01"), None), (D("100.00"), None)])


def test_fee_tiers_validate_refuses_a_gap() -> None:
    with pytest.raises(ApplicationError) as raised:
        fee_tiers_validate(tiers=[(D("0.01"), D("100.00")), (D("100.02"), None)])
    assert raised.value.message == (
        "Tiers must be contiguous: after 100.00 the next tier starts at 100.01, not 100.02."
    )
    assert raised.value.status == 400


def test_fee_tiers_validate_refuses_an_overlap() -> None:
    with pytest.raises(ApplicationError) as raised:
        fee_tiers_validate(tiers=[(D("0.01"), D("100.00")), (D("50.00"), None)])
    assert raised.value.message == (
        "Tiers must be contiguous: after 100.00 the next tier starts at 100.01, not 50.00."
    )
