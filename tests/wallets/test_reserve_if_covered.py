"""``wallet_reserve_if_covered``: a payout create's reservation as one conditional ``UPDATE …
RETURNING`` and its ledger entry, writing what ``wallet_reserve`` writes and refusing what it
refuses."""

from __future__ import annotations

import json
from decimal import Decimal
from itertools import count

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.exceptions import ApplicationError, NotFoundError
from core.money import MAX_AMOUNT
from tests.wallets.factories import WalletFactory
from tests.wallets.writers import wallet_reserve
from wallets.exceptions import (
    INSUFFICIENT_BALANCE_MESSAGE,
    WALLET_INACTIVE_MESSAGE,
    InsufficientBalanceError,
    WalletInactiveError,
)
from wallets.models import LedgerEntry, LedgerEntryType, Wallet, WalletStatus
from wallets.selectors import ledger_snapshot_mismatch_count, wallet_totals
from wallets.services import (
    wallet_alerts_set,
    wallet_fund,
    wallet_lock,
    wallet_reserve_if_covered,
    wallet_status_set,
)
from webhooks.models import Event, EventType

pytestmark = pytest.mark.django_db

D = Decimal
_references = count(1)


def _funded(wallet: Wallet, amount: str) -> Wallet:
    wallet_fund(wallet_id=wallet.pk, amount=D(amount), reference=f"ATOMIC-F{next(_references)}")
    wallet.refresh_from_db()
    return wallet


def _reserve(wallet: Wallet, amount: str | Decimal, payout_id: int | None = None) -> LedgerEntry:
    with transaction.atomic():
        return wallet_reserve_if_covered(
            wallet_id=wallet.pk,
            amount=D(amount),
            reference=f"po_atomic_{next(_references)}",
            payout_id=payout_id,
        )


def _state(wallet: Wallet) -> tuple:
    """Everything a refused reservation must leave as it was."""
    row = Wallet.objects.values_list(
        "available_balance", "reserved_balance", "low_balance_alerted", "updated_at"
    ).get(pk=wallet.pk)
    return (*row, LedgerEntry.objects.filter(wallet_id=wallet.pk).count())


def _balance_low_alerts(wallet: Wallet) -> list[dict]:
    events = Event.objects.filter(
        event_type=EventType.WALLET_BALANCE_LOW, reference=wallet.static_account_number
    ).order_by("id")
    return [json.loads(event.body)["data"] for event in events]


def test_moves_the_amount_from_available_to_reserved_with_one_entry(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "3000.00")

    entry = _reserve(wallet, "1000.10", payout_id=42)

    wallet.refresh_from_db()
    assert (wallet.available_balance, wallet.reserved_balance) == (D("1999.90"), D("1000.10"))
    stored = LedgerEntry.objects.get(pk=entry.pk)
    assert (stored.entry_type, stored.amount, stored.fee_amount) == (
        LedgerEntryType.PAYOUT_RESERVE,
        D("1000.10"),
        D("0.00"),
    )
    assert (stored.available_delta, stored.reserved_delta) == (D("-1000.10"), D("1000.10"))
    assert (stored.available_balance_after, stored.reserved_balance_after) == (
        D("1999.90"),
        D("1000.10"),
    )
    assert (stored.reference, stored.payout_id) == (entry.reference, 42)
    assert wallet_totals(wallet=wallet).balanced


def test_writes_what_wallet_reserve_writes(test_wallet: Wallet, live_wallet: Wallet) -> None:
    locked_first = _funded(test_wallet, "5000.00")
    updated_at_once = _funded(live_wallet, "5000.00")
    for n, amount in enumerate(["700.00", "1200.50", "0.01"], start=1):
        with transaction.atomic():
            wallet_reserve(
                wallet=wallet_lock(wallet_id=locked_first.pk),
                amount=D(amount),
                reference=f"po_same_{n}",
                payout_id=n,
            )
            wallet_reserve_if_covered(
                wallet_id=updated_at_once.pk,
                amount=D(amount),
                reference=f"po_same_{n}",
                payout_id=n,
            )

    def written(wallet: Wallet) -> list[tuple]:
        return list(
            LedgerEntry.objects.filter(wallet=wallet, payout_id__isnull=False)
            .order_by("id")
            .values_list(
                "entry_type",
                "amount",
                "fee_amount",
                "available_delta",
                "reserved_delta",
                "available_balance_after",
                "reserved_balance_after",
                "reference",
                "payout_id",
                "description",
            )
        )

    assert written(locked_first) == written(updated_at_once)
    locked_first.refresh_from_db()
    updated_at_once.refresh_from_db()
    assert (locked_first.available_balance, locked_first.reserved_balance) == (
        updated_at_once.available_balance,
        updated_at_once.reserved_balance,
    )


def test_each_snapshot_is_the_running_sum_of_the_deltas(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "10000.00")
    for amount in ["1.00", "2500.55", "0.01", "7000.00"]:
        _reserve(wallet, amount)
    _funded(wallet, "250.00")
    _reserve(wallet, "748.44")

    assert ledger_snapshot_mismatch_count() == 0
    last = LedgerEntry.objects.filter(wallet=wallet).order_by("-id").first()
    wallet.refresh_from_db()
    assert (
        (last.available_balance_after, last.reserved_balance_after)
        == (
            wallet.available_balance,
            wallet.reserved_balance,
        )
        == (D("0.00"), D("10250.00"))
    )


def test_balances_beyond_a_floats_integers_stay_exact(test_wallet: Wallet) -> None:
    """Integer kobo both ways, on either backend: 9,100,000,000,000,001 kobo is past 2**53, where
    a float can no longer hold every integer, and comes back to the kobo."""
    wallet = test_wallet
    for _ in range(91):
        _funded(wallet, str(MAX_AMOUNT))
    _funded(wallet, "0.02")

    entry = _reserve(wallet, "0.01")

    expected = (D("91000000000000.01"), D("0.01"))
    assert (entry.available_balance_after, entry.reserved_balance_after) == expected
    stored = LedgerEntry.objects.get(pk=entry.pk)
    assert (stored.available_balance_after, stored.reserved_balance_after) == expected
    wallet.refresh_from_db()
    assert (wallet.available_balance, wallet.reserved_balance) == expected
    assert wallet.available_balance.as_tuple().exponent == -2


def test_refuses_more_than_the_available_balance_and_changes_nothing(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "100.00")
    before = _state(wallet)

    with pytest.raises(InsufficientBalanceError) as refused:
        _reserve(wallet, "100.01")

    assert (refused.value.message, refused.value.status) == (INSUFFICIENT_BALANCE_MESSAGE, 400)
    assert _state(wallet) == before


def test_reserves_the_whole_available_balance(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "100.00")
    _reserve(wallet, "100.00")
    wallet.refresh_from_db()
    assert (wallet.available_balance, wallet.reserved_balance) == (D("0.00"), D("100.00"))


def test_refuses_an_inactive_wallet_and_changes_nothing(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "100.00")
    wallet_status_set(wallet_id=wallet.pk, status=WalletStatus.INACTIVE)
    before = _state(wallet)

    with pytest.raises(WalletInactiveError) as refused:
        _reserve(wallet, "10.00")

    assert (refused.value.message, refused.value.status) == (WALLET_INACTIVE_MESSAGE, 400)
    assert _state(wallet) == before


def test_an_inactive_wallet_is_refused_as_inactive_even_when_the_amount_is_too_large(
    test_wallet: Wallet,
) -> None:
    wallet = _funded(test_wallet, "100.00")
    wallet_status_set(wallet_id=wallet.pk, status=WalletStatus.INACTIVE)
    with pytest.raises(WalletInactiveError):
        _reserve(wallet, "500.00")


def test_an_unknown_wallet_is_not_found(db: None) -> None:
    with pytest.raises(NotFoundError, match="Wallet not found"), transaction.atomic():
        wallet_reserve_if_covered(wallet_id=999_999_999, amount=D("1.00"), reference="po_none")


@pytest.mark.parametrize(
    ("amount", "error"),
    [
        (D("0.00"), ApplicationError),
        (D("-1.00"), ApplicationError),
        (D("1.001"), ApplicationError),
        (MAX_AMOUNT + D("0.01"), ApplicationError),
        (1, TypeError),
    ],
)
def test_refuses_an_amount_that_is_not_a_positive_two_place_decimal(
    test_wallet: Wallet, amount: object, error: type[Exception]
) -> None:
    wallet = _funded(test_wallet, "100.00")
    before = _state(wallet)
    with pytest.raises(error), transaction.atomic():
        wallet_reserve_if_covered(wallet_id=wallet.pk, amount=amount, reference="po_bad")
    assert _state(wallet) == before


def test_needs_the_callers_transaction(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "100.00")
    with pytest.raises(RuntimeError, match="inside transaction.atomic"):
        wallet_reserve_if_covered(wallet_id=wallet.pk, amount=D("1.00"), reference="po_x")


def test_one_update_and_the_entry_when_the_alert_does_not_flip(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "1000.00")
    wallet_alerts_set(wallet_id=wallet.pk, low_balance_threshold=D("100.00"))
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        wallet_reserve_if_covered(wallet_id=wallet.pk, amount=D("900.00"), reference="po_q")
    statements = [query["sql"].split(" ")[0:3] for query in queries.captured_queries]
    assert [s for s in statements if s[0] in ("UPDATE", "INSERT", "SELECT")] == [
        ["UPDATE", '"wallets_wallet"', "SET"],
        ["INSERT", "INTO", '"wallets_ledgerentry"'],
    ]


# --- the low-balance alert --------------------------------------------------------------------


def test_a_crossing_of_the_threshold_is_alerted_once(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "10000.00")
    wallet_alerts_set(wallet_id=wallet.pk, low_balance_threshold=D("5000.00"))

    _reserve(wallet, "3000.00")  # 7000.00: above
    assert _balance_low_alerts(wallet) == []
    crossing = _reserve(wallet, "3000.00")  # 4000.00: below
    _reserve(wallet, "1000.00")  # 3000.00: still below, already alerted

    [alert] = _balance_low_alerts(wallet)
    assert alert["available_balance"] == "4000.00"
    assert alert["reserved_balance"] == "6000.00"
    assert alert["low_balance_threshold"] == "5000.00"
    assert alert["ledger_entry"]["id"] == crossing.pk
    wallet.refresh_from_db()
    assert wallet.low_balance_alerted is True


def test_the_flag_is_saved_only_by_the_crossing(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "1000.00")
    wallet_alerts_set(wallet_id=wallet.pk, low_balance_threshold=D("500.00"))
    with CaptureQueriesContext(connection) as crossing:
        _reserve(wallet, "600.00")
    with CaptureQueriesContext(connection) as below:
        _reserve(wallet, "100.00")

    def flag_updates(queries: CaptureQueriesContext) -> list[str]:
        return [
            query["sql"]
            for query in queries.captured_queries
            if query["sql"].startswith('UPDATE "wallets_wallet"')
            and '"low_balance_alerted" =' in query["sql"]
        ]

    assert len(flag_updates(crossing)) == 1
    assert flag_updates(below) == []


def test_an_alerted_wallet_back_at_the_threshold_is_re_armed_as_by_any_write(
    test_wallet: Wallet,
) -> None:
    """The alert's rule is ``_ledger_entry_build``'s: an alerted wallet the reservation leaves at
    or above the threshold is re-armed (only reachable if the flag was set by hand)."""
    wallet = _funded(test_wallet, "1000.00")
    wallet_alerts_set(wallet_id=wallet.pk, low_balance_threshold=D("500.00"))
    Wallet.objects.filter(pk=wallet.pk).update(low_balance_alerted=True)

    _reserve(wallet, "100.00")

    wallet.refresh_from_db()
    assert wallet.low_balance_alerted is False
    assert _balance_low_alerts(wallet) == []


def test_without_a_threshold_nothing_is_alerted(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "1000.00")
    _reserve(wallet, "999.99")
    wallet.refresh_from_db()
    assert wallet.low_balance_alerted is False
    assert _balance_low_alerts(wallet) == []


def test_a_rolled_back_reservation_leaves_no_alert(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "1000.00")
    wallet_alerts_set(wallet_id=wallet.pk, low_balance_threshold=D("500.00"))
    before = _state(wallet)
    with pytest.raises(RuntimeError, match="payout insert failed"), transaction.atomic():
        wallet_reserve_if_covered(wallet_id=wallet.pk, amount=D("600.00"), reference="po_rb")
        raise RuntimeError("payout insert failed")
    assert _state(wallet) == before
    assert _balance_low_alerts(wallet) == []


# --- generated sequences ----------------------------------------------------------------------

# Amounts in kobo up to 400.00 against an opening of at most 1,000.00: many are refused.
kobo_amounts = st.integers(min_value=1, max_value=40_000).map(lambda kobo: D(kobo).scaleb(-2))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    opening=st.integers(min_value=0, max_value=100_000).map(lambda kobo: D(kobo).scaleb(-2)),
    amounts=st.lists(kobo_amounts, max_size=20),
)
def test_random_reservations_never_overdraw_and_each_accepted_one_has_one_entry(
    opening: Decimal, amounts: list[Decimal]
) -> None:
    with transaction.atomic():
        wallet = WalletFactory()
        if opening:
            _funded(wallet, str(opening))
        available, reserved = opening, D("0.00")
        accepted: list[int] = []
        for amount in amounts:
            try:
                entry = _reserve(wallet, amount, payout_id=len(accepted) + 1)
            except InsufficientBalanceError:
                assert amount > available
                continue
            assert amount <= available
            available, reserved = available - amount, reserved + amount
            assert (entry.available_balance_after, entry.reserved_balance_after) == (
                available,
                reserved,
            )
            accepted.append(entry.pk)

        wallet.refresh_from_db()
        assert (wallet.available_balance, wallet.reserved_balance) == (available, reserved)
        assert wallet.available_balance >= 0
        reserves = LedgerEntry.objects.filter(
            wallet=wallet, entry_type=LedgerEntryType.PAYOUT_RESERVE
        ).order_by("id")
        assert [entry.pk for entry in reserves] == accepted
        assert [entry.payout_id for entry in reserves] == list(range(1, len(accepted) + 1))
        assert ledger_snapshot_mismatch_count() == 0
        assert wallet_totals(wallet=wallet).balanced
        transaction.set_rollback(True)


def _lock_then_reserve(wallet: Wallet, amount: Decimal, reference: str) -> LedgerEntry:
    with transaction.atomic():
        return wallet_reserve(
            wallet=wallet_lock(wallet_id=wallet.pk), amount=amount, reference=reference
        )


def _reserve_at_once(wallet: Wallet, amount: Decimal, reference: str) -> LedgerEntry:
    with transaction.atomic():
        return wallet_reserve_if_covered(wallet_id=wallet.pk, amount=amount, reference=reference)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    opening=kobo_amounts,
    threshold=st.none() | kobo_amounts,
    operations=st.lists(st.tuples(st.sampled_from(["fund", "reserve"]), kobo_amounts), max_size=15),
)
def test_any_sequence_writes_and_alerts_as_wallet_reserve_does(
    opening: Decimal, threshold: Decimal | None, operations: list[tuple[str, Decimal]]
) -> None:
    """Two wallets, the same fundings and reservations: one reserved after locking the row, the
    other with the conditional update. Same refusals, same entries, same alerts."""
    with transaction.atomic():
        wallets = {_lock_then_reserve: WalletFactory(), _reserve_at_once: WalletFactory()}
        for wallet in wallets.values():
            _funded(wallet, str(opening))
            if threshold is not None:
                wallet_alerts_set(wallet_id=wallet.pk, low_balance_threshold=threshold)
        for step, (operation, amount) in enumerate(operations):
            refused = {}
            for reserve, wallet in wallets.items():
                if operation == "fund":
                    _funded(wallet, str(amount))
                    continue
                try:
                    reserve(wallet, amount, f"po_step_{step}")
                except InsufficientBalanceError:
                    refused[reserve] = True
                else:
                    refused[reserve] = False
            assert len(set(refused.values())) <= 1

        def written(wallet: Wallet) -> list[tuple]:
            return list(
                LedgerEntry.objects.filter(wallet=wallet)
                .order_by("id")
                .values_list(
                    "entry_type",
                    "amount",
                    "available_delta",
                    "reserved_delta",
                    "available_balance_after",
                    "reserved_balance_after",
                )
            )

        def alerts(wallet: Wallet) -> list[tuple]:
            return [
                (
                    alert["available_balance"],
                    alert["ledger_entry"] and alert["ledger_entry"]["amount"],
                )
                for alert in _balance_low_alerts(wallet)
            ]

        locked_first, at_once = wallets.values()
        assert written(locked_first) == written(at_once)
        assert alerts(locked_first) == alerts(at_once)
        flags = Wallet.objects.filter(pk__in=[w.pk for w in wallets.values()]).values_list(
            "low_balance_alerted", flat=True
        )
        assert len(set(flags)) == 1
        transaction.set_rollback(True)
