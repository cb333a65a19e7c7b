"""Hermitage-style isolation tests of the money core at the database's default isolation level
(READ COMMITTED on PostgreSQL).

Each test runs two sessions, A and B: two threads, each with its own database connection, and
orders their steps explicitly. A is paused inside the real service, between two of its
statements, by a gate on a function the service calls (see ``conftest.py``); B then runs into
the row lock A holds, and the test checks that B is really waiting (still running after a short
wait and its backend waiting for a lock in ``pg_stat_activity``) before it lets A
commit. The assertions are about money: nothing reserved, captured, released or credited twice
or lost, and each wallet's balances equal to the sums of its ledger deltas.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

import payouts.services.create
import payouts.services.dispatch
import payouts.services.requery
import payouts.services.settle
import wallets.services
from core.exceptions import ConflictError
from merchants.models import Mode
from merchants.services import MerchantCreated, merchant_create
from payouts.models import Payout, PayoutResolution, PayoutStatus, SandboxTransfer
from payouts.providers.sandbox import ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL
from payouts.services import (
    IDEMPOTENCY_CONFLICT_MESSAGE,
    PayoutCreateResult,
    dispatch_claim_timeout,
    payout_create,
    payout_dispatch,
    payout_requery,
    payout_resolve_manually,
    payouts_dispatch_stuck,
)
from tests.payouts.helpers import GOOD_ACCOUNT, GTB_CODE, fund_wallet
from wallets.exceptions import FundingReferenceConflictError, InsufficientBalanceError
from wallets.models import FundingTransfer, LedgerEntry, LedgerEntryType, Wallet
from wallets.selectors import WalletTotals, payout_fee_calculate, wallet_get, wallet_totals
from wallets.services import funding_receive, wallet_fund
from webhooks.models import Event, EventType

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

D = Decimal
AMOUNT = D("1000.00")
FUNDING_REFERENCE = "NIP-000000111"


# --- Helpers -------------------------------------------------------------------------------------


def total_debit(amount: Decimal) -> Decimal:
    return amount + payout_fee_calculate(amount=amount)


def wallet_of(account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=account.merchant, mode=Mode.TEST)


def creating(
    account: MerchantCreated,
    *,
    key: str,
    amount: Decimal = AMOUNT,
    account_number: str = GOOD_ACCOUNT,
) -> Callable[[], PayoutCreateResult]:
    """A session's work: one test-mode payout create through the service."""
    return lambda: payout_create(
        merchant=account.merchant,
        mode=Mode.TEST,
        account_number=account_number,
        bank_code=GTB_CODE,
        amount=amount,
        idempotency_key=key,
        narration="Invoice 42",
    )


def assert_ledger_explains(wallet: Wallet) -> WalletTotals:
    """No lost update: the balances equal the sums of the ledger deltas, and available +
    reserved + captured equals what was funded."""
    totals = wallet_totals(wallet=wallet)
    assert totals.available == totals.ledger_available
    assert totals.reserved == totals.ledger_reserved
    assert totals.available + totals.reserved + totals.captured == totals.funded
    return totals


def entries(wallet: Wallet, entry_type: str) -> list[LedgerEntry]:
    return list(LedgerEntry.objects.filter(wallet=wallet, entry_type=entry_type).order_by("id"))


def settlement_entry_types(payout: Payout) -> list[str]:
    return list(
        LedgerEntry.objects.filter(payout_id=payout.pk)
        .exclude(entry_type=LedgerEntryType.PAYOUT_RESERVE)
        .order_by("id")
        .values_list("entry_type", flat=True)
    )


def assert_settled_once(payout: Payout, *, status: str, funded: Decimal) -> Payout:
    """The payout is final with ``status``; exactly one of capture (``payout_debit``) or release
    (``payout_reversal``) happened, one event was recorded, nothing is left reserved."""
    final = Payout.objects.get(pk=payout.pk)
    assert final.status == status
    assert final.completed_at is not None
    if status == PayoutStatus.SUCCESSFUL:
        expected_entry, expected_event = LedgerEntryType.PAYOUT_DEBIT, EventType.PAYOUT_SUCCESSFUL
    else:
        expected_entry, expected_event = LedgerEntryType.PAYOUT_REVERSAL, EventType.PAYOUT_FAILED
    assert settlement_entry_types(final) == [expected_entry]
    events = Event.objects.filter(payout_id=final.pk).values_list("event_type", flat=True)
    assert list(events) == [expected_event]
    totals = assert_ledger_explains(final.wallet)
    assert totals.reserved == D("0.00")
    captured = final.total_debit_amount if status == PayoutStatus.SUCCESSFUL else D("0.00")
    assert totals.captured == captured
    assert totals.available == funded - captured
    return final


# --- 1. Two reserves on one wallet ---------------------------------------------------------------


def _second_reserve_waits_for_the_first(interleaving, account: MerchantCreated):
    """A inserts its payout and reserves (the conditional update locks the wallet row); B
    (another idempotency key) inserts its own payout and its reservation's update waits for
    the row lock A holds; then A commits, and B's update checks the balance A left."""
    first = interleaving.session("A", creating(account, key="reserve-A"))
    second = interleaving.session("B", creating(account, key="reserve-B"))
    first_holds_lock = interleaving.pause_after(
        payouts.services.create, "wallet_reserve_if_covered", session=first
    )
    second_at_lock = interleaving.reach(
        payouts.services.create, "wallet_reserve_if_covered", session=second
    )

    first.start()
    first_holds_lock.wait()  # A: payout inserted, reserved, wallet row locked, not committed
    second.start()
    second_at_lock.wait()  # B: passed the unlocked balance check, its payout inserted
    interleaving.assert_blocked(second, on="the wallet row lock held by A")
    first_holds_lock.release()  # A commits; B's update then sees the fresh row
    return first.value(), second


def test_second_reserve_waits_for_the_wallet_lock_and_never_over_reserves(
    merchant_account, interleaving
) -> None:
    wallet = wallet_of(merchant_account)
    each = total_debit(AMOUNT)
    funded = each * 2 - D("0.01")  # each payout fits alone, the two together do not
    fund_wallet(wallet, str(funded))

    created, second = _second_reserve_waits_for_the_first(interleaving, merchant_account)

    assert created.duplicate is False
    refusal = second.failure()
    assert isinstance(refusal, InsufficientBalanceError), repr(refusal)
    assert refusal.status == 400
    # B's payout insert was rolled back with its failed reserve.
    assert list(Payout.objects.filter(wallet=wallet).values_list("pk", flat=True)) == [
        created.payout.pk
    ]
    reserves = entries(wallet, LedgerEntryType.PAYOUT_RESERVE)
    assert [entry.payout_id for entry in reserves] == [created.payout.pk]
    totals = assert_ledger_explains(wallet)
    assert totals.reserved == each
    assert totals.available == funded - each
    assert totals.funded == funded


def test_second_reserve_waits_for_the_wallet_lock_and_both_fit_without_a_lost_update(
    merchant_account, interleaving
) -> None:
    wallet = wallet_of(merchant_account)
    funded = total_debit(AMOUNT) * 2  # exactly enough for both
    fund_wallet(wallet, str(funded))

    created, second = _second_reserve_waits_for_the_first(interleaving, merchant_account)
    also_created = second.value()

    assert created.duplicate is False and also_created.duplicate is False
    assert created.payout.pk != also_created.payout.pk
    both = created.payout.total_debit_amount + also_created.payout.total_debit_amount
    assert len(entries(wallet, LedgerEntryType.PAYOUT_RESERVE)) == 2
    totals = assert_ledger_explains(wallet)
    assert totals.reserved == both
    assert totals.available == funded - both == D("0.00")


# --- 2. Two creates with one idempotency key -----------------------------------------------------


def _second_create_inserts_while_the_first_is_open(
    interleaving, account: MerchantCreated, *, second_amount: Decimal
):
    """A inserts its payout and pauses with its transaction open (wallet locked); B, with the
    same key, misses A's uncommitted row on its fast path and inserts its own, which waits on
    the unique index (wallet, idempotency key) until A commits."""
    first = interleaving.session("A", creating(account, key="one-key"))
    second = interleaving.session("B", creating(account, key="one-key", amount=second_amount))
    first_open = interleaving.pause_after(
        payouts.services.create, "wallet_reserve_if_covered", session=first
    )
    second_inserting = interleaving.reach(payouts.services.create, "_payout_insert", session=second)

    first.start()
    first_open.wait()  # A: payout row inserted, not committed
    second.start()
    second_inserting.wait()  # B: the replay fast path found nothing
    interleaving.assert_blocked(second, on="A's uncommitted payout with the same key")
    first_open.release()
    return first.value(), second


def test_same_key_insert_while_the_first_is_open_answers_as_its_replay(
    merchant_account, interleaving
) -> None:
    wallet = wallet_of(merchant_account)
    fund_wallet(wallet, "10000.00")

    created, second = _second_create_inserts_while_the_first_is_open(
        interleaving, merchant_account, second_amount=AMOUNT
    )
    replay = second.value()

    assert created.duplicate is False
    assert replay.duplicate is True
    assert replay.payout.pk == created.payout.pk
    assert Payout.objects.filter(wallet=wallet, idempotency_key="one-key").count() == 1
    reserves = entries(wallet, LedgerEntryType.PAYOUT_RESERVE)
    assert [entry.payout_id for entry in reserves] == [created.payout.pk]
    totals = assert_ledger_explains(wallet)
    assert totals.reserved == created.payout.total_debit_amount


def test_same_key_with_other_parameters_while_the_first_is_open_is_a_conflict(
    merchant_account, interleaving
) -> None:
    wallet = wallet_of(merchant_account)
    fund_wallet(wallet, "10000.00")  # enough for either: only the key decides

    created, second = _second_create_inserts_while_the_first_is_open(
        interleaving, merchant_account, second_amount=D("2000.00")
    )
    conflict = second.failure()

    assert isinstance(conflict, ConflictError), repr(conflict)
    assert conflict.status == 409
    assert conflict.message == IDEMPOTENCY_CONFLICT_MESSAGE
    rows = Payout.objects.filter(wallet=wallet).values_list("pk", "amount")
    assert list(rows) == [(created.payout.pk, AMOUNT)]
    assert len(entries(wallet, LedgerEntryType.PAYOUT_RESERVE)) == 1
    totals = assert_ledger_explains(wallet)
    assert totals.reserved == created.payout.total_debit_amount


# --- 3. Requery against manual resolution --------------------------------------------------------


AMBIGUOUS_FUNDING = D("5000.00")


@pytest.fixture
def ambiguous_payout(merchant_account) -> Payout:
    """A committed payout whose dispatch ended ``ambiguous``; the sandbox answers any requery
    with ``successful``."""
    fund_wallet(wallet_of(merchant_account), str(AMBIGUOUS_FUNDING))
    created = creating(
        merchant_account, key="ambiguous", account_number=ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL
    )()
    payout = payout_dispatch(payout_id=created.payout.pk)
    assert payout is not None and payout.status == PayoutStatus.AMBIGUOUS
    return payout


@pytest.fixture
def finance_user(db):
    return get_user_model().objects.create_user(username="finance", password="pw-12345678")


def resolving_as_failed(payout: Payout, user) -> Callable[[], PayoutResolution]:
    return lambda: payout_resolve_manually(
        payout_id=payout.pk,
        to_status=PayoutStatus.FAILED,
        reason="Bank statement shows no credit to the beneficiary",
        resolved_by=user,
    )


def test_requery_settling_first_makes_the_manual_resolution_a_conflict(
    ambiguous_payout, finance_user, interleaving
) -> None:
    requery = interleaving.session("A", lambda: payout_requery(payout=ambiguous_payout))
    manual = interleaving.session("B", resolving_as_failed(ambiguous_payout, finance_user))
    requery_captured = interleaving.pause_after(
        payouts.services.settle, "wallet_reservations_settle", session=requery
    )

    requery.start()
    requery_captured.wait()  # A: payout row locked, successful, funds captured, not committed
    manual.start()
    manual.begun.wait()
    interleaving.assert_blocked(manual, on="the payout row lock held by the requery")
    requery_captured.release()

    assert requery.value().status == PayoutStatus.SUCCESSFUL
    refusal = manual.failure()
    # A clear 409 the API renders in its envelope, not an unexpected (500-type) exception.
    assert isinstance(refusal, ConflictError), repr(refusal)
    assert refusal.status == 409
    assert "ambiguous" in refusal.message
    assert not PayoutResolution.objects.filter(payout=ambiguous_payout).exists()
    assert_settled_once(ambiguous_payout, status=PayoutStatus.SUCCESSFUL, funded=AMBIGUOUS_FUNDING)


def test_manual_resolution_first_makes_the_requery_a_no_op(
    ambiguous_payout, finance_user, interleaving
) -> None:
    requery = interleaving.session("A", lambda: payout_requery(payout=ambiguous_payout))
    manual = interleaving.session("B", resolving_as_failed(ambiguous_payout, finance_user))
    manual_released = interleaving.pause_after(
        payouts.services.settle, "wallet_reservations_settle", session=manual
    )
    requery_applying = interleaving.reach(
        payouts.services.requery, "payout_requery_apply", session=requery
    )

    manual.start()
    manual_released.wait()  # B: payout row locked, failed, funds released, not committed
    requery.start()
    requery_applying.wait()  # A: the provider answered "successful" for the ambiguous payout
    interleaving.assert_blocked(requery, on="the payout row lock held by the manual resolution")
    manual_released.release()

    resolution = manual.value()
    assert resolution.to_status == PayoutStatus.FAILED
    answered = requery.value()  # no exception: the requery answers with the settled payout
    assert answered.status == PayoutStatus.FAILED
    assert PayoutResolution.objects.filter(payout=ambiguous_payout).count() == 1
    final = assert_settled_once(
        ambiguous_payout, status=PayoutStatus.FAILED, funded=AMBIGUOUS_FUNDING
    )
    # The late provider answer is kept for audit, and changed nothing.
    operations = [exchange["operation"] for exchange in final.provider_responses]
    assert operations[-1] == "sandbox.verify_transfer"


# --- 4. Two fundings with one provider reference -------------------------------------------------


def _second_funding_waits_for_the_first(interleaving, wallet: Wallet, *, second_amount: Decimal):
    """A (``wallet_fund``) locks the wallet and pauses before looking for the reference; B
    (``funding_receive``, the webhook path, same reference) waits for that lock until A has
    credited and committed."""
    first = interleaving.session(
        "A",
        lambda: wallet_fund(wallet_id=wallet.pk, amount=D("2500.00"), reference=FUNDING_REFERENCE),
    )
    second = interleaving.session(
        "B",
        lambda: funding_receive(
            account_number=wallet.static_account_number,
            amount=second_amount,
            reference=FUNDING_REFERENCE,
        ),
    )
    first_holds_lock = interleaving.pause_after(wallets.services, "wallet_lock", session=first)
    second_at_lock = interleaving.reach(wallets.services, "wallet_lock", session=second)

    first.start()
    first_holds_lock.wait()
    second.start()
    second.begun.wait()
    interleaving.assert_blocked(second, on="the wallet lock held by A")
    assert second_at_lock.reached  # B waits inside wallet_lock, on the row
    first_holds_lock.release()
    return first.value(), second


def test_two_fundings_with_one_reference_credit_once(merchant_account, interleaving) -> None:
    wallet = wallet_of(merchant_account)

    credited, second = _second_funding_waits_for_the_first(
        interleaving, wallet, second_amount=D("2500.00")
    )
    replay = second.value()

    assert credited.duplicate is False
    assert replay.duplicate is True
    assert replay.funding_transfer.pk == credited.funding_transfer.pk
    assert FundingTransfer.objects.filter(provider_reference=FUNDING_REFERENCE).count() == 1
    assert len(entries(wallet, LedgerEntryType.FUNDING)) == 1
    totals = assert_ledger_explains(wallet)
    assert totals.funded == totals.available == D("2500.00")


def test_concurrent_funding_with_one_reference_and_another_amount_is_a_conflict(
    merchant_account, interleaving
) -> None:
    wallet = wallet_of(merchant_account)

    credited, second = _second_funding_waits_for_the_first(
        interleaving, wallet, second_amount=D("3000.00")
    )
    conflict = second.failure()

    assert credited.duplicate is False
    assert isinstance(conflict, FundingReferenceConflictError), repr(conflict)
    assert conflict.status == 409
    assert FundingTransfer.objects.filter(provider_reference=FUNDING_REFERENCE).count() == 1
    assert len(entries(wallet, LedgerEntryType.FUNDING)) == 1
    totals = assert_ledger_explains(wallet)
    assert totals.funded == totals.available == D("2500.00")


def test_one_reference_funding_two_wallets_at_once_credits_only_the_first(
    merchant_account, interleaving
) -> None:
    """Different wallets take different locks, so only the unique reference meets them: A has
    credited its wallet and inserted the funding row, not committed; B credits the other wallet
    in a savepoint and inserts the same reference, which waits on the unique index. When A
    commits, B's savepoint (credit included) rolls back and B is a conflict."""
    wallet = wallet_get(merchant=merchant_account.merchant, mode=Mode.LIVE)
    other_merchant = merchant_create(name="Other Shop", email="other@example.com").merchant
    other = wallet_get(merchant=other_merchant, mode=Mode.LIVE)
    first = interleaving.session(
        "A",
        lambda: wallet_fund(wallet_id=wallet.pk, amount=D("2500.00"), reference=FUNDING_REFERENCE),
    )
    second = interleaving.session(
        "B",
        lambda: wallet_fund(wallet_id=other.pk, amount=D("2500.00"), reference=FUNDING_REFERENCE),
    )
    first_inserted = interleaving.pause_after(wallets.services, "FundingResult", session=first)

    first.start()
    first_inserted.wait()  # A: wallet credited, funding row inserted, not committed
    second.start()
    second.begun.wait()
    interleaving.assert_blocked(second, on="A's uncommitted funding row with the same reference")
    first_inserted.release()

    assert first.value().duplicate is False
    conflict = second.failure()
    assert isinstance(conflict, FundingReferenceConflictError), repr(conflict)
    transfers = FundingTransfer.objects.filter(provider_reference=FUNDING_REFERENCE)
    assert list(transfers.values_list("wallet_id", flat=True)) == [wallet.pk]
    assert assert_ledger_explains(wallet).available == D("2500.00")
    assert entries(other, LedgerEntryType.FUNDING) == []
    other_totals = assert_ledger_explains(other)
    assert other_totals.funded == other_totals.available == D("0.00")


# --- 5. Dispatch claim against the dispatch_stuck sweeper ----------------------------------------


DISPATCH_FUNDING = D("5000.00")


@pytest.fixture
def reserved_payout(merchant_account) -> Payout:
    fund_wallet(wallet_of(merchant_account), str(DISPATCH_FUNDING))
    payout = creating(merchant_account, key="to-dispatch")().payout
    assert payout.status == PayoutStatus.RESERVED
    return payout


def _first_dispatcher_claims_and_stalls(interleaving, payout: Payout, clock):
    """A claims the payout (``reserved → processing``, committed) and stalls before its
    provider call for longer than the claim timeout."""
    first = interleaving.session("A", lambda: payout_dispatch(payout_id=payout.pk))
    first_claimed = interleaving.pause_after(
        payouts.services.dispatch, "payouts_dispatch_claim", session=first
    )
    first.start()
    first_claimed.wait()
    claimed = Payout.objects.get(pk=payout.pk)
    assert (claimed.status, claimed.dispatch_attempts) == (PayoutStatus.PROCESSING, 1)
    assert not SandboxTransfer.objects.filter(reference=payout.internal_reference).exists()
    assert payouts_dispatch_stuck().selected == 0  # a live claim is left alone
    clock.advance(dispatch_claim_timeout() + timedelta(seconds=1))
    return first, first_claimed


def assert_dispatched_once(payout: Payout) -> SandboxTransfer:
    """One transfer at the provider for the payout's reference, settled once, balances exact."""
    transfers = list(SandboxTransfer.objects.filter(reference=payout.internal_reference))
    assert len(transfers) == 1
    final = assert_settled_once(payout, status=PayoutStatus.SUCCESSFUL, funded=DISPATCH_FUNDING)
    assert final.dispatch_attempts == 2
    assert final.provider_reference == transfers[0].transfer_code
    return transfers[0]


def test_sweeper_retaking_a_stalled_claim_settles_the_payout_once(
    reserved_payout, interleaving, clock
) -> None:
    """The sweeper retakes A's stale claim (marked ``verify_before_send``), finds no transfer
    at the provider, sends it and settles the payout; then A wakes up and makes its provider
    call. A's answer is kept for audit only: the payout is not settled twice."""
    first, first_claimed = _first_dispatcher_claims_and_stalls(interleaving, reserved_payout, clock)
    sweeper = interleaving.session("B", lambda: payouts_dispatch_stuck())
    sweeper.start()
    report = sweeper.value()
    assert report.selected == 1
    assert report.outcomes == {PayoutStatus.SUCCESSFUL: 1}
    first_claimed.release()
    assert first.value().status == PayoutStatus.SUCCESSFUL

    transfer = assert_dispatched_once(reserved_payout)
    operations = [
        exchange["operation"]
        for exchange in Payout.objects.get(pk=reserved_payout.pk).provider_responses
    ]
    assert operations == [
        "sandbox.initiate_transfer",  # the sweeper's, after its verify found nothing
        "sandbox.initiate_transfer",  # A's late call, answered as the same transfer
    ]
    # A dispatcher that stalls between its claim and its provider call for longer than the
    # claim timeout still makes its call: no check between the claim and the send can close
    # that window, since the stall may come after the check. One transfer per payout rests
    # here on the provider refusing a second transfer with the same reference (Paystack and
    # the sandbox both do); the simulator covers every crash the service must survive alone.
    assert transfer.initiate_count == 2


def test_stalled_dispatcher_sending_after_the_sweeper_retook_its_claim_is_verified_not_resent(
    reserved_payout, interleaving, clock
) -> None:
    """The sweeper retakes A's stale claim and pauses; A wakes up, sends, and its answer is
    refused because its claim is gone; the sweeper, told to verify before sending, finds A's
    transfer at the provider and settles the payout from it without sending again."""
    first, first_claimed = _first_dispatcher_claims_and_stalls(interleaving, reserved_payout, clock)
    sweeper = interleaving.session("B", lambda: payouts_dispatch_stuck())
    sweeper_claimed = interleaving.pause_after(
        payouts.services.dispatch, "payouts_dispatch_claim", session=sweeper
    )
    sweeper.start()
    sweeper_claimed.wait()
    retaken = Payout.objects.get(pk=reserved_payout.pk)
    assert (retaken.dispatch_attempts, retaken.verify_before_send) == (2, True)

    first_claimed.release()
    stale = first.value()  # A's answer arrives for attempt 1: kept, not applied
    assert stale.status == PayoutStatus.PROCESSING
    sweeper_claimed.release()
    report = sweeper.value()
    assert report.outcomes == {PayoutStatus.SUCCESSFUL: 1}

    transfer = assert_dispatched_once(reserved_payout)
    assert transfer.initiate_count == 1
    operations = [
        exchange["operation"]
        for exchange in Payout.objects.get(pk=reserved_payout.pk).provider_responses
    ]
    assert operations == [
        "sandbox.initiate_transfer",  # A's, kept for audit when its claim was found gone
        "sandbox.verify_transfer",  # the sweeper's, which settled the payout
    ]
    assert transfer.query_count == 1
