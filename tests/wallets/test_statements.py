"""The daily settlement statement (``wallets.statements``): Lagos days, every movement, the rules
of a range, and generated ledgers whose statements must reconcile to the kobo."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_DOWN, Decimal
from itertools import count
from unittest import mock

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.dates import local_date, local_day_start, local_today
from tests.wallets.factories import WalletFactory
from tests.wallets.writers import wallet_capture, wallet_release, wallet_reserve
from wallets import statements
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from wallets.services import (
    wallet_fund,
    wallet_lock,
    wallet_return,
)
from wallets.statements import (
    STATEMENT_MAX_DAYS,
    STATEMENT_MOVEMENT_BY_ENTRY_TYPE,
    StatementBalances,
    StatementMovement,
    StatementMovements,
    StatementMovementTotal,
    StatementRangeError,
    WalletStatement,
    wallet_statement,
)

pytestmark = pytest.mark.django_db

_references = count(1)
LAGOS_DAY = date(2026, 3, 10)


def _lagos(day: date, hour: int, minute: int = 0) -> datetime:
    return local_day_start(day) + timedelta(hours=hour, minutes=minute)


@contextmanager
def _at(instant: datetime) -> Iterator[None]:
    """Ledger entries written inside get ``instant`` as ``created_at`` (``auto_now_add``)."""
    with mock.patch("django.utils.timezone.now", return_value=instant):
        yield


def _fund(wallet: Wallet, amount: Decimal, instant: datetime) -> LedgerEntry:
    with _at(instant):
        return wallet_fund(
            wallet_id=wallet.pk, amount=amount, reference=f"STMT-F{next(_references)}"
        ).ledger_entry


def _reserve(wallet: Wallet, amount: Decimal, instant: datetime) -> LedgerEntry:
    with _at(instant), transaction.atomic():
        locked = wallet_lock(wallet_id=wallet.pk)
        return wallet_reserve(wallet=locked, amount=amount, reference=f"STMT-P{next(_references)}")


def _capture(wallet: Wallet, principal: Decimal, fee: Decimal, instant: datetime) -> LedgerEntry:
    with _at(instant):
        return wallet_capture(
            wallet_id=wallet.pk, amount=principal, fee_amount=fee, reference="STMT-CAPTURE"
        )


def _return(wallet: Wallet, principal: Decimal, fee: Decimal, instant: datetime) -> LedgerEntry:
    with _at(instant):
        return wallet_return(
            wallet_id=wallet.pk, amount=principal, fee_amount=fee, reference="STMT-RETURN"
        )


def _release(wallet: Wallet, amount: Decimal, instant: datetime) -> LedgerEntry:
    with _at(instant):
        return wallet_release(wallet_id=wallet.pk, amount=amount, reference="STMT-RELEASE")


def _balances(available: str, reserved: str) -> StatementBalances:
    return StatementBalances(available=Decimal(available), reserved=Decimal(reserved))


def _total(count: int, amount: str, fee_amount: str = "0.00") -> StatementMovementTotal:
    return StatementMovementTotal(
        count=count, amount=Decimal(amount), fee_amount=Decimal(fee_amount)
    )


# --- Examples ----------------------------------------------------------------------------------


def test_a_range_without_entries_opens_and_closes_at_zero() -> None:
    wallet = WalletFactory()
    statement = wallet_statement(
        wallet=wallet, first_day=LAGOS_DAY, last_day=LAGOS_DAY + timedelta(days=2)
    )
    assert [day.date for day in statement.days] == [
        LAGOS_DAY,
        LAGOS_DAY + timedelta(days=1),
        LAGOS_DAY + timedelta(days=2),
    ]
    assert statement.opening == statement.closing == StatementBalances()
    assert statement.totals == StatementMovements()
    assert all(day.totals == StatementMovements() for day in statement.days)
    assert (statement.wallet_id, statement.mode, statement.currency) == (wallet.pk, "test", "NGN")
    assert (statement.timezone_name, statement.utc_offset) == ("Africa/Lagos", "+01:00")


def test_a_quiet_range_carries_the_balances_of_the_last_earlier_entry() -> None:
    wallet = WalletFactory()
    _fund(wallet, Decimal("500.00"), _lagos(LAGOS_DAY - timedelta(days=5), 9))
    _reserve(wallet, Decimal("120.00"), _lagos(LAGOS_DAY - timedelta(days=4), 9))
    statement = wallet_statement(wallet=wallet, first_day=LAGOS_DAY, last_day=LAGOS_DAY)
    assert statement.opening == statement.closing == _balances("380.00", "120.00")
    assert statement.opening.total == Decimal("500.00")
    assert statement.totals == StatementMovements()


def test_one_day_with_each_movement(django_assert_num_queries) -> None:
    wallet = WalletFactory()
    _fund(wallet, Decimal("250.00"), _lagos(LAGOS_DAY - timedelta(days=1), 12))
    _fund(wallet, Decimal("1000.00"), _lagos(LAGOS_DAY, 8))
    _reserve(wallet, Decimal("300.00"), _lagos(LAGOS_DAY, 9))  # payout A: 290.00 + 10.00 fee
    _capture(wallet, Decimal("290.00"), Decimal("10.00"), _lagos(LAGOS_DAY, 10))
    _reserve(wallet, Decimal("200.00"), _lagos(LAGOS_DAY, 11))  # payout B: fails
    _release(wallet, Decimal("200.00"), _lagos(LAGOS_DAY, 12))
    _reserve(wallet, Decimal("75.50"), _lagos(LAGOS_DAY, 23, 59))  # payout C: still pending
    _fund(wallet, Decimal("9.99"), _lagos(LAGOS_DAY + timedelta(days=1), 0))

    with django_assert_num_queries(2):
        statement = wallet_statement(wallet=wallet, first_day=LAGOS_DAY, last_day=LAGOS_DAY)

    assert statement.opening == _balances("250.00", "0.00")
    assert statement.totals == StatementMovements(
        fundings=_total(1, "1000.00"),
        payouts_reserved=_total(3, "575.50"),
        payouts_captured=_total(1, "290.00", "10.00"),
        releases=_total(1, "200.00"),
        returns=_total(0, "0.00"),
    )
    assert statement.closing == _balances("874.50", "75.50")
    assert statement.closing.total == Decimal("950.00")
    [day] = statement.days
    assert (day.opening, day.totals, day.closing) == (
        statement.opening,
        statement.totals,
        statement.closing,
    )


def test_an_entry_at_half_past_midnight_lagos_lands_on_its_lagos_day() -> None:
    wallet = WalletFactory()
    instant = datetime(2026, 3, 10, 23, 30, tzinfo=UTC)  # 2026-03-11 00:30 in Lagos
    entry = _fund(wallet, Decimal("40.00"), instant)
    _fund(wallet, Decimal("2.00"), datetime(2026, 3, 10, 22, 59, tzinfo=UTC))  # 23:59 Lagos
    assert entry.created_at == instant  # auto_now_add took the patched clock
    statement = wallet_statement(
        wallet=wallet, first_day=date(2026, 3, 10), last_day=date(2026, 3, 11)
    )
    first, second = statement.days
    assert first.totals.fundings == _total(1, "2.00")
    assert second.totals.fundings == _total(1, "40.00")
    assert second.opening == first.closing == _balances("2.00", "0.00")
    assert statement.closing == _balances("42.00", "0.00")


def test_every_ledger_entry_type_maps_to_exactly_one_statement_movement() -> None:
    assert set(STATEMENT_MOVEMENT_BY_ENTRY_TYPE) == set(LedgerEntryType.values)
    assert set(STATEMENT_MOVEMENT_BY_ENTRY_TYPE.values()) <= set(StatementMovement.values)
    assert set(StatementMovement.values) == set(StatementMovements.__dataclass_fields__)


def test_an_unmapped_entry_type_fails_the_statement_instead_of_dropping_money(monkeypatch) -> None:
    wallet = WalletFactory()
    _fund(wallet, Decimal("10.00"), _lagos(LAGOS_DAY, 9))
    unmapped = {
        entry_type: movement
        for entry_type, movement in STATEMENT_MOVEMENT_BY_ENTRY_TYPE.items()
        if entry_type != LedgerEntryType.FUNDING
    }
    monkeypatch.setattr(statements, "STATEMENT_MOVEMENT_BY_ENTRY_TYPE", unmapped)
    with pytest.raises(RuntimeError, match="funding"):
        wallet_statement(wallet=wallet, first_day=LAGOS_DAY, last_day=LAGOS_DAY)


# --- The rules of a range ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first_offset", "last_offset", "field_name"),
    [
        (0, -1, "to_date"),  # to before from
        (1, 1, "from_date"),  # starts after today
        (0, 1, "to_date"),  # ends after today
        (-STATEMENT_MAX_DAYS, 0, "to_date"),  # 93 days
    ],
)
def test_a_range_the_rules_refuse_is_a_400_naming_the_parameter(
    first_offset: int, last_offset: int, field_name: str
) -> None:
    today = local_today()
    with pytest.raises(StatementRangeError) as raised:
        wallet_statement(
            wallet=WalletFactory(),
            first_day=today + timedelta(days=first_offset),
            last_day=today + timedelta(days=last_offset),
        )
    assert raised.value.status == 400
    assert raised.value.field_name == field_name
    assert raised.value.message.startswith(f"{field_name}: ")


def test_ninety_two_days_ending_today_are_allowed() -> None:
    today = local_today()
    first_day = today - timedelta(days=STATEMENT_MAX_DAYS - 1)
    statement = wallet_statement(wallet=WalletFactory(), first_day=first_day, last_day=today)
    assert len(statement.days) == STATEMENT_MAX_DAYS


def test_the_first_day_of_the_calendar_does_not_overflow() -> None:
    statement = wallet_statement(
        wallet=WalletFactory(), first_day=date(1, 1, 1), last_day=date(1, 1, 2)
    )
    assert statement.closing == StatementBalances()


# --- Generated ledgers -------------------------------------------------------------------------

TWO_PLACES = Decimal("0.01")
START = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)

operations = st.lists(
    st.tuples(
        st.sampled_from(["fund", "reserve", "capture", "release", "return"]),
        st.integers(min_value=1, max_value=5_000_000),  # kobo
        st.integers(min_value=0, max_value=40 * 60),  # minutes after the previous entry
    ),
    min_size=1,
    max_size=18,
)


@dataclass(frozen=True)
class _Written:
    entry: LedgerEntry
    movement: StatementMovement


def _apply(wallet: Wallet, steps: list[tuple[str, int, int]], start: datetime) -> list[_Written]:
    """Runs the operations through the services at increasing instants (two may share one)."""
    written: list[_Written] = []
    pending: list[Decimal] = []
    captured: list[tuple[Decimal, Decimal]] = []
    available = Decimal("0.00")
    instant = start
    for kind, kobo, gap_minutes in steps:
        instant += timedelta(minutes=gap_minutes)
        amount = Decimal(kobo) / 100
        if kind == "fund":
            entry = _fund(wallet, amount, instant)
            available += amount
        elif kind == "reserve" and available > 0:
            amount = min(amount, available)
            entry = _reserve(wallet, amount, instant)
            available -= amount
            pending.append(amount)
        elif kind == "capture" and pending:
            total = pending.pop(kobo % len(pending))
            fee = min(Decimal("50.00"), (total / 2).quantize(TWO_PLACES, rounding=ROUND_DOWN))
            entry = _capture(wallet, total - fee, fee, instant)
            captured.append((total - fee, fee))
        elif kind == "return" and captured:
            principal, fee = captured.pop(kobo % len(captured))
            refunded = fee if kobo % 2 else Decimal("0.00")  # with and without the fee refund
            entry = _return(wallet, principal, refunded, instant)
            available += principal + refunded
        elif kind == "release" and pending:
            total = pending.pop(kobo % len(pending))
            entry = _release(wallet, total, instant)
            available += total
        else:
            continue
        assert entry.created_at == instant
        written.append(_Written(entry, STATEMENT_MOVEMENT_BY_ENTRY_TYPE[entry.entry_type]))
    return written


def _snapshot_before(written: list[_Written], instant: datetime) -> StatementBalances:
    earlier = [w.entry for w in written if w.entry.created_at < instant]
    if not earlier:
        return StatementBalances()
    last = max(earlier, key=lambda entry: (entry.created_at, entry.pk))
    return StatementBalances(
        available=last.available_balance_after, reserved=last.reserved_balance_after
    )


def _expected_days(written: list[_Written]) -> dict[date, StatementMovements]:
    """Each Lagos day's movements, counted in Python from the entries written."""
    by_day: dict[date, dict[str, StatementMovementTotal]] = defaultdict(dict)
    for item in written:
        totals = by_day[local_date(item.entry.created_at)]
        totals[item.movement] = totals.get(
            item.movement, StatementMovementTotal()
        ) + StatementMovementTotal(
            count=1, amount=item.entry.amount, fee_amount=item.entry.fee_amount
        )
    return {day: StatementMovements(**totals) for day, totals in by_day.items()}


def _assert_identities(
    opening: StatementBalances, totals: StatementMovements, closing: StatementBalances
) -> None:
    captured = totals.payouts_captured
    assert closing.available == (
        opening.available
        + totals.fundings.amount
        - totals.payouts_reserved.amount
        + totals.releases.amount
        + totals.returns.amount
        + totals.returns.fee_amount
    )
    assert closing.reserved == (
        opening.reserved
        + totals.payouts_reserved.amount
        - captured.amount
        - captured.fee_amount
        - totals.releases.amount
    )
    assert closing.total == (
        opening.total
        + totals.fundings.amount
        - captured.amount
        - captured.fee_amount
        + totals.returns.amount
        + totals.returns.fee_amount
    )


def _assert_statement_reconciles(
    statement: WalletStatement, written: list[_Written], wallet: Wallet
) -> None:
    expected_days = _expected_days(written)
    _assert_identities(statement.opening, statement.totals, statement.closing)
    assert statement.days[0].opening == statement.opening
    assert statement.days[-1].closing == statement.closing
    summed = StatementMovements()
    for day, next_day in zip(statement.days, statement.days[1:], strict=False):
        assert day.closing == next_day.opening
    for day in statement.days:
        _assert_identities(day.opening, day.totals, day.closing)
        assert day.totals == expected_days.get(day.date, StatementMovements())
        summed = summed + day.totals
    assert summed == statement.totals

    start = local_day_start(statement.first_day)
    end = local_day_start(statement.last_day + timedelta(days=1))
    assert statement.opening == _snapshot_before(written, start)
    assert statement.closing == _snapshot_before(written, end)
    if written and end > max(item.entry.created_at for item in written):
        wallet.refresh_from_db()
        assert statement.closing == StatementBalances(
            available=wallet.available_balance, reserved=wallet.reserved_balance
        )


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    steps=operations,
    start_minutes=st.integers(min_value=0, max_value=24 * 60),
    data=st.data(),
)
def test_generated_ledgers_give_statements_that_reconcile_to_the_kobo(
    steps: list[tuple[str, int, int]], start_minutes: int, data: st.DataObject
) -> None:
    with transaction.atomic():
        wallet = WalletFactory()
        written = _apply(wallet, steps, START + timedelta(minutes=start_minutes))
        first_day = local_date(START)
        last_entry_day = local_date(written[-1].entry.created_at) if written else first_day
        span = (last_entry_day - first_day).days
        for _range in range(3):
            first = first_day + timedelta(days=data.draw(st.integers(-2, span + 2), "first"))
            length = data.draw(st.integers(1, STATEMENT_MAX_DAYS), "length")
            last = first + timedelta(days=length - 1)
            statement = wallet_statement(wallet=wallet, first_day=first, last_day=last)
            _assert_statement_reconciles(statement, written, wallet)
        transaction.set_rollback(True)
