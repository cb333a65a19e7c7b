"""The daily settlement statement of one wallet (reads only).

For each Lagos day of a range, and for the range as a whole: the opening balances, the
movements (count and amount of each kind), and the closing balances. Everything comes from the
ledger in two queries, whatever the length of the range:

* the opening balances are the balances-after of the wallet's last entry before the range starts
  (ordered by ``created_at``, then ``id``), zero when there is none;
* the movements are per-day, per-entry-type aggregates (``TruncDate`` in ``TIME_ZONE``, so a
  00:30 Lagos entry, 23:30 UTC the day before, counts on its Lagos day), and each day's closing
  balances are its opening plus the sums of the day's balance deltas; the next day opens with
  them.

Every ledger entry type maps to exactly one statement movement
(``STATEMENT_MOVEMENT_BY_ENTRY_TYPE``); an entry of an unmapped type makes the statement fail
rather than leave money out. The movements and the balances then obey, to the kobo::

    closing.available = opening.available + fundings - payouts_reserved + releases
                        + returned principal + returned fees
                        + settlements - refunds + refund_reversals + subaccount_shares
    closing.reserved  = opening.reserved + payouts_reserved - captured principal
                        - captured fees - releases
    closing.total     = opening.total + fundings - captured principal - captured fees
                        + returned principal + returned fees
                        + settlements - refunds + refund_reversals + subaccount_shares

Returns are successful payouts sent back by the beneficiary's bank (``payout_return``): the
principal, and the fee when ``PAYOUT_RETURN_REFUNDS_FEE`` is on, go back to available.
Settlements credit the nets of settled collections; refunds debit the wallet part of a refund
and refund reversals put it back when the refund fails; subaccount shares are credited to the
platform's wallet only, before the payouts that pay them. The settlements and refunds of a day
agree to the kobo with the collections settlement report's (``collections_app.reports``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import models
from django.db.models import Count, Sum
from django.db.models.functions import TruncDate
from django.http import HttpResponse
from django.utils import timezone

from audit.backoffice import csv_response
from core.dates import local_day_start, local_today, utc_offset_text
from core.exceptions import ApplicationError
from core.money import format_amount
from wallets.models import LedgerEntry, LedgerEntryType, Wallet

ZERO = Decimal("0.00")
STATEMENT_MAX_DAYS = 92
EARLIEST_INSTANT = datetime.min.replace(tzinfo=UTC)


class StatementMovement(models.TextChoices):
    """The kinds of movement a statement counts; the values are the API's and the CSV's names."""

    FUNDINGS = "fundings", "Fundings"
    PAYOUTS_RESERVED = "payouts_reserved", "Reserved for payouts"
    PAYOUTS_CAPTURED = "payouts_captured", "Payouts captured"
    RELEASES = "releases", "Releases of failed payouts"
    RETURNS = "returns", "Returns of paid payouts"
    SETTLEMENTS = "settlements", "Settlements of collections"
    REFUNDS = "refunds", "Refunds to customers"
    REFUND_REVERSALS = "refund_reversals", "Failed refunds put back"
    SUBACCOUNT_SHARES = "subaccount_shares", "Subaccount shares to pay out"


STATEMENT_MOVEMENT_BY_ENTRY_TYPE: Mapping[str, StatementMovement] = {
    LedgerEntryType.FUNDING: StatementMovement.FUNDINGS,
    LedgerEntryType.PAYOUT_RESERVE: StatementMovement.PAYOUTS_RESERVED,
    LedgerEntryType.PAYOUT_DEBIT: StatementMovement.PAYOUTS_CAPTURED,
    LedgerEntryType.PAYOUT_REVERSAL: StatementMovement.RELEASES,
    LedgerEntryType.PAYOUT_RETURN: StatementMovement.RETURNS,
    LedgerEntryType.SETTLEMENT: StatementMovement.SETTLEMENTS,
    LedgerEntryType.REFUND: StatementMovement.REFUNDS,
    LedgerEntryType.REFUND_REVERSAL: StatementMovement.REFUND_REVERSALS,
    LedgerEntryType.SUBACCOUNT_SHARES: StatementMovement.SUBACCOUNT_SHARES,
}


class StatementRangeError(ApplicationError):
    """A statement range the rules refuse; ``field_name`` names the request parameter at fault."""

    def __init__(self, *, field_name: str, problem: str) -> None:
        super().__init__(f"{field_name}: {problem}", status=400)
        self.field_name = field_name
        self.problem = problem


# --- The statement -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StatementBalances:
    available: Decimal = ZERO
    reserved: Decimal = ZERO

    @property
    def total(self) -> Decimal:
        return self.available + self.reserved


@dataclass(frozen=True)
class StatementMovementTotal:
    """How many entries of one kind, and their principal (``amount``) and fees."""

    count: int = 0
    amount: Decimal = ZERO
    fee_amount: Decimal = ZERO

    def __add__(self, other: StatementMovementTotal) -> StatementMovementTotal:
        return StatementMovementTotal(
            count=self.count + other.count,
            amount=self.amount + other.amount,
            fee_amount=self.fee_amount + other.fee_amount,
        )


@dataclass(frozen=True)
class StatementMovements:
    fundings: StatementMovementTotal = field(default_factory=StatementMovementTotal)
    payouts_reserved: StatementMovementTotal = field(default_factory=StatementMovementTotal)
    payouts_captured: StatementMovementTotal = field(default_factory=StatementMovementTotal)
    releases: StatementMovementTotal = field(default_factory=StatementMovementTotal)
    returns: StatementMovementTotal = field(default_factory=StatementMovementTotal)
    settlements: StatementMovementTotal = field(default_factory=StatementMovementTotal)
    refunds: StatementMovementTotal = field(default_factory=StatementMovementTotal)
    refund_reversals: StatementMovementTotal = field(default_factory=StatementMovementTotal)
    subaccount_shares: StatementMovementTotal = field(default_factory=StatementMovementTotal)

    def __add__(self, other: StatementMovements) -> StatementMovements:
        return StatementMovements(
            **{
                name: getattr(self, name) + getattr(other, name)
                for name in StatementMovement.values
            }
        )


@dataclass(frozen=True)
class WalletStatementDay:
    """One Lagos day: ``closing`` is ``opening`` plus the day's balance deltas."""

    date: date
    opening: StatementBalances
    totals: StatementMovements
    closing: StatementBalances


@dataclass(frozen=True)
class WalletStatement:
    """The statement of ``first_day`` to ``last_day`` (Lagos days, inclusive)."""

    wallet_id: int
    mode: str
    currency: str
    timezone_name: str
    utc_offset: str
    first_day: date
    last_day: date
    opening: StatementBalances
    totals: StatementMovements
    closing: StatementBalances
    days: tuple[WalletStatementDay, ...]


# --- Rules -------------------------------------------------------------------------------------


def statement_range_validate(*, first_day: date, last_day: date) -> None:
    """``first_day`` (``from_date``) to ``last_day`` (``to_date``): in order, neither after today
    (Lagos), at most ``STATEMENT_MAX_DAYS`` days. Raises ``StatementRangeError`` (400) naming
    the parameter at fault."""
    today = local_today()
    zone = timezone.get_current_timezone_name()
    if last_day < first_day:
        raise StatementRangeError(
            field_name="to_date", problem="must not be earlier than from_date"
        )
    if first_day > today:
        raise StatementRangeError(
            field_name="from_date", problem=f"must not be after today ({today}, {zone})"
        )
    if last_day > today:
        raise StatementRangeError(
            field_name="to_date", problem=f"must not be after today ({today}, {zone})"
        )
    days = (last_day - first_day).days + 1
    if days > STATEMENT_MAX_DAYS:
        raise StatementRangeError(
            field_name="to_date",
            problem=f"a statement covers at most {STATEMENT_MAX_DAYS} days, not {days}",
        )


# --- The selector ------------------------------------------------------------------------------


def _day_start_instant(day: date) -> datetime:
    """The instant the Lagos ``day`` begins; the earliest instant UTC holds for 0001-01-01."""
    start = local_day_start(day)
    try:
        start.astimezone(UTC)
    except OverflowError:
        return EARLIEST_INSTANT
    return start


def _movement_of(entry_type: str) -> StatementMovement:
    try:
        return STATEMENT_MOVEMENT_BY_ENTRY_TYPE[entry_type]
    except KeyError:
        raise RuntimeError(
            f"ledger entry type {entry_type!r} has no statement movement; map it in "
            "wallets.statements.STATEMENT_MOVEMENT_BY_ENTRY_TYPE"
        ) from None


def _opening_balances(*, wallet: Wallet, before: datetime) -> StatementBalances:
    last = (
        LedgerEntry.objects.filter(wallet_id=wallet.pk, created_at__lt=before)
        .order_by("-created_at", "-id")
        .values("available_balance_after", "reserved_balance_after")
        .first()
    )
    if last is None:
        return StatementBalances()
    return StatementBalances(
        available=last["available_balance_after"], reserved=last["reserved_balance_after"]
    )


@dataclass
class _DayAggregate:
    movements: dict[str, StatementMovementTotal] = field(default_factory=dict)
    available_delta: Decimal = ZERO
    reserved_delta: Decimal = ZERO


def _day_aggregates(*, wallet: Wallet, start: datetime, end: datetime) -> dict[date, _DayAggregate]:
    """Per Lagos day: each movement's count and sums, and the sums of the balance deltas."""
    rows: Iterable[Mapping[str, Any]] = (
        LedgerEntry.objects.filter(wallet_id=wallet.pk, created_at__gte=start, created_at__lt=end)
        .annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
        .order_by()
        .values("day", "entry_type")
        .annotate(
            entry_count=Count("id"),
            amount_sum=Sum("amount"),
            fee_sum=Sum("fee_amount"),
            available_delta_sum=Sum("available_delta"),
            reserved_delta_sum=Sum("reserved_delta"),
        )
    )
    by_day: dict[date, _DayAggregate] = defaultdict(_DayAggregate)
    for row in rows:
        aggregate = by_day[row["day"]]
        movement = _movement_of(row["entry_type"])
        aggregate.movements[movement] = aggregate.movements.get(
            movement, StatementMovementTotal()
        ) + StatementMovementTotal(
            count=row["entry_count"], amount=row["amount_sum"], fee_amount=row["fee_sum"]
        )
        aggregate.available_delta += row["available_delta_sum"]
        aggregate.reserved_delta += row["reserved_delta_sum"]
    return by_day


def wallet_statement(*, wallet: Wallet, first_day: date, last_day: date) -> WalletStatement:
    """The settlement statement of ``wallet`` for the Lagos days ``first_day`` to ``last_day``
    (inclusive), checked by :func:`statement_range_validate`. Two queries."""
    statement_range_validate(first_day=first_day, last_day=last_day)
    start = _day_start_instant(first_day)
    end = _day_start_instant(last_day + timedelta(days=1))
    opening = _opening_balances(wallet=wallet, before=start)
    aggregates = _day_aggregates(wallet=wallet, start=start, end=end)

    days: list[WalletStatementDay] = []
    balances = opening
    totals = StatementMovements()
    day = first_day
    while day <= last_day:
        aggregate = aggregates.get(day, _DayAggregate())
        day_totals = StatementMovements(**aggregate.movements)
        closing = StatementBalances(
            available=balances.available + aggregate.available_delta,
            reserved=balances.reserved + aggregate.reserved_delta,
        )
        days.append(
            WalletStatementDay(date=day, opening=balances, totals=day_totals, closing=closing)
        )
        totals = totals + day_totals
        balances = closing
        day += timedelta(days=1)

    return WalletStatement(
        wallet_id=wallet.pk,
        mode=wallet.mode,
        currency=wallet.currency,
        timezone_name=timezone.get_current_timezone_name(),
        utc_offset=utc_offset_text(),
        first_day=first_day,
        last_day=last_day,
        opening=opening,
        totals=totals,
        closing=balances,
        days=tuple(days),
    )


# --- CSV ---------------------------------------------------------------------------------------

# The movements whose fees the CSV shows beside their count and principal.
STATEMENT_CSV_FEE_MOVEMENTS = frozenset(
    {StatementMovement.PAYOUTS_CAPTURED, StatementMovement.RETURNS}
)
STATEMENT_CSV_BALANCE_COLUMNS = ("available", "reserved", "total")


def _csv_movement_fields(movement: StatementMovement) -> tuple[str, ...]:
    """The ``StatementMovementTotal`` fields the CSV shows of ``movement``."""
    if movement in STATEMENT_CSV_FEE_MOVEMENTS:
        return ("count", "amount", "fee_amount")
    return ("count", "amount")


STATEMENT_CSV_HEADER: tuple[str, ...] = (
    "date",
    *(f"opening_{name}" for name in STATEMENT_CSV_BALANCE_COLUMNS),
    *(
        f"{movement.value}_{name}"
        for movement in StatementMovement
        for name in _csv_movement_fields(movement)
    ),
    *(f"closing_{name}" for name in STATEMENT_CSV_BALANCE_COLUMNS),
)
STATEMENT_CSV_TOTALS_LABEL = "total"


def _csv_balance_cells(balances: StatementBalances) -> list[str | int]:
    return [format_amount(getattr(balances, name)) for name in STATEMENT_CSV_BALANCE_COLUMNS]


def _csv_movement_cells(
    movement: StatementMovement, total: StatementMovementTotal
) -> list[str | int]:
    """The count, then the amounts as plain decimals."""
    count, *amounts = (getattr(total, name) for name in _csv_movement_fields(movement))
    return [count, *(format_amount(amount) for amount in amounts)]


def _csv_row(
    label: str, opening: StatementBalances, totals: StatementMovements, closing: StatementBalances
) -> list[str | int]:
    """One CSV row, in the order of ``STATEMENT_CSV_HEADER``."""
    return [
        label,
        *_csv_balance_cells(opening),
        *(
            cell
            for movement in StatementMovement
            for cell in _csv_movement_cells(movement, getattr(totals, movement.value))
        ),
        *_csv_balance_cells(closing),
    ]


def wallet_statement_csv_rows(*, statement: WalletStatement) -> list[list[str | int]]:
    """One row per Lagos day (``YYYY-MM-DD``), then the totals row labelled ``total``; amounts
    as plain decimals (``1234.50``)."""
    rows = [
        _csv_row(day.date.isoformat(), day.opening, day.totals, day.closing)
        for day in statement.days
    ]
    rows.append(
        _csv_row(STATEMENT_CSV_TOTALS_LABEL, statement.opening, statement.totals, statement.closing)
    )
    return rows


def wallet_statement_csv_filename(*, statement: WalletStatement) -> str:
    return (
        f"statement-{statement.mode}-{statement.first_day.isoformat()}-"
        f"{statement.last_day.isoformat()}.csv"
    )


def wallet_statement_csv_response(*, statement: WalletStatement) -> HttpResponse:
    """The statement as an Excel-friendly CSV attachment named
    ``statement-<mode>-<from>-<to>.csv`` (the API's and the back office's alike)."""
    response = csv_response(
        filename_stem="statement",
        header=STATEMENT_CSV_HEADER,
        rows=wallet_statement_csv_rows(statement=statement),
    )
    filename = wallet_statement_csv_filename(statement=statement)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
