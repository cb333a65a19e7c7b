"""The collections settlement report: where the money customers paid goes, per Lagos day,
merchant and mode, and (``with_settlements``) what was settled into the merchant's wallet and
refunded that day, checked against the wallet's ledger. Reads only; two queries whatever the
range or the number of transactions, three with the settlements."""

from __future__ import annotations

import zoneinfo
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import CharField, Count, F, Q, QuerySet, Sum, Value
from django.db.models.functions import TruncDate

from collections_app.models import CollectionTransaction, PaymentStatus, TransactionSplitEntry
from core.dates import local_day_bounds
from core.exceptions import ApplicationError
from core.fields import MoneyField
from merchants.models import Mode
from refunds.models import Refund, RefundStatus
from settlements.models import Settlement
from wallets.models import LedgerEntry, LedgerEntryType

MAX_REPORT_DAYS = 92
# Days a report may name: anything earlier or later is a typing error, and the instant a day
# before year 1 or after year 9999 begins cannot be represented.
EARLIEST_REPORT_DAY = date(2000, 1, 1)
LATEST_REPORT_DAY = date(9999, 12, 30)
ZERO = Decimal("0.00")


class ReportRangeError(ApplicationError):
    """A report parameter is out of bounds (400); ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", status=400)
        self.field = field
        self.reason = message


@dataclass(frozen=True)
class SubaccountShare:
    """What one subaccount receives, in naira, with the names finance reads it by."""

    subaccount_id: int
    account_code: str
    account_name: str
    amount: Decimal


@dataclass(frozen=True, kw_only=True)
class SettlementFigures:
    """What the report counts of paid collections: how many, gross, fees, each subaccount's
    share, the shares' total and net (gross − fees − shares); with the settlements, also what
    was settled and refunded (zero without them)."""

    transaction_count: int
    gross: Decimal
    fees: Decimal
    shares: tuple[SubaccountShare, ...]
    split_total: Decimal
    net: Decimal
    # Settlements settled that day (settled_at): how many, and their nets added up.
    settlement_count: int = 0
    settled: Decimal = ZERO
    # Refunds created that day and not failed: how many, and their amounts added up.
    refund_count: int = 0
    refunds: Decimal = ZERO
    # The wallet part of every refund created that day (failed ones included: each debited the
    # wallet when it was made; a failure is a refund reversal on its own day).
    refunds_from_wallet: Decimal = ZERO
    # The same day in the merchant's wallet statement: its settlements and refunds movements.
    statement_settlements: Decimal = ZERO
    statement_refunds: Decimal = ZERO

    @property
    def agrees_with_statement(self) -> bool:
        """The settled nets and the refunds' wallet parts are, to the kobo, the settlements and
        refunds movements of the merchant's wallet statement that day."""
        return (
            self.settled == self.statement_settlements
            and self.refunds_from_wallet == self.statement_refunds
        )


@dataclass(frozen=True, kw_only=True)
class SettlementRow(SettlementFigures):
    """The paid collections of one merchant in one mode on one Lagos day."""

    day: date
    merchant_id: int
    merchant_name: str
    mode: str


@dataclass(frozen=True, kw_only=True)
class SettlementTotals(SettlementFigures):
    """The rows added up; ``shares`` is each subaccount's total over the whole report."""


@dataclass(frozen=True)
class CollectionSettlementReport:
    first_day: date
    last_day: date
    merchant_id: int | None
    mode: str | None
    rows: tuple[SettlementRow, ...]
    totals: SettlementTotals


def settlement_report_range_check(*, first_day: date, last_day: date) -> None:
    """``first_day`` on or before ``last_day``, at most ``MAX_REPORT_DAYS`` days inclusive,
    both from ``EARLIEST_REPORT_DAY`` to ``LATEST_REPORT_DAY``. Raises ``ReportRangeError`` (an
    ``ApplicationError``, 400) naming the field."""
    for field, day in (("first_day", first_day), ("last_day", last_day)):
        if not EARLIEST_REPORT_DAY <= day <= LATEST_REPORT_DAY:
            raise ReportRangeError(
                field,
                f"must be from {EARLIEST_REPORT_DAY.isoformat()} "
                f"to {LATEST_REPORT_DAY.isoformat()}",
            )
    if last_day < first_day:
        raise ReportRangeError("last_day", "must be on or after first_day")
    if (last_day - first_day).days + 1 > MAX_REPORT_DAYS:
        raise ReportRangeError(
            "last_day", f"the report covers at most {MAX_REPORT_DAYS} days from first_day"
        )


def _paid_in_range(
    *, first_day: date, last_day: date, merchant_id: int | None, mode: str | None, prefix: str
) -> Q:
    """Paid transactions (reached through ``prefix``) whose ``paid_at`` falls on the Lagos days
    ``first_day`` to ``last_day``, optionally of one merchant and one mode."""
    start, end = local_day_bounds(first_day, last_day)
    condition = Q(
        **{
            f"{prefix}payment_status": PaymentStatus.PAID,
            f"{prefix}paid_at__gte": start,
            f"{prefix}paid_at__lt": end,
        }
    )
    if merchant_id is not None:
        condition &= Q(**{f"{prefix}merchant_id": merchant_id})
    if mode is not None:
        condition &= Q(**{f"{prefix}mode": mode})
    return condition


def _shares_sorted(shares: Iterable[SubaccountShare]) -> tuple[SubaccountShare, ...]:
    return tuple(sorted(shares, key=lambda s: (s.account_name, s.account_code, s.subaccount_id)))


@dataclass
class _DayMovements:
    """What one merchant's wallet of one mode received and gave back on one day."""

    merchant_name: str = ""
    settlement_count: int = 0
    settled: Decimal = ZERO
    refund_count: int = 0
    refunds: Decimal = ZERO
    refunds_from_wallet: Decimal = ZERO
    statement_settlements: Decimal = ZERO
    statement_refunds: Decimal = ZERO


def _in_range(
    *,
    field: str,
    first_day: date,
    last_day: date,
    merchant_id: int | None,
    mode: str | None,
    merchant_field: str = "merchant_id",
    mode_field: str = "mode",
) -> Q:
    start, end = local_day_bounds(first_day, last_day)
    condition = Q(**{f"{field}__gte": start, f"{field}__lt": end})
    if merchant_id is not None:
        condition &= Q(**{merchant_field: merchant_id})
    if mode is not None:
        condition &= Q(**{mode_field: mode})
    return condition


# The kinds of row of ``_day_movements``' one query: settlements, refunds, and the merchant's
# wallet entries of each type (``LedgerEntryType`` values).
_SETTLED = "settled"
_REFUNDED = "refunded"


def _day_movements(
    *, first_day: date, last_day: date, merchant_id: int | None, mode: str | None
) -> dict[tuple[date, int, str], _DayMovements]:
    """Per (Lagos day, merchant, mode): the settlements settled that day, the refunds created
    that day, and the settlement and refund entries of the merchant's wallet that day. One
    query: the three grouped reads, each row ``(day, merchant, name, mode, kind, count, amount,
    other amount)``, in a ``UNION ALL``."""
    local_zone = zoneinfo.ZoneInfo(settings.TIME_ZONE)

    def scope(field: str, merchant_field: str = "merchant_id", mode_field: str = "mode") -> Q:
        return _in_range(
            field=field,
            first_day=first_day,
            last_day=last_day,
            merchant_id=merchant_id,
            mode=mode,
            merchant_field=merchant_field,
            mode_field=mode_field,
        )

    columns = (
        "day",
        "row_merchant",
        "row_name",
        "row_mode",
        "row_kind",
        "row_count",
        "row_amount",
        "row_other",
    )
    nothing = Value(0, output_field=MoneyField())
    not_failed = ~Q(status=RefundStatus.FAILED)

    def grouped(
        rows: QuerySet[Any], *, day_field: str, owner: str, kind: Any, **totals: Any
    ) -> QuerySet[Any]:
        """``rows`` grouped by Lagos day, merchant and mode (``owner``: the path to them,
        "" or "wallet__"), as ``columns``; ``totals`` gives row_count, row_amount, row_other."""
        return (
            rows.order_by()
            .annotate(
                day=TruncDate(day_field, tzinfo=local_zone),
                row_merchant=F(f"{owner}merchant_id"),
                row_name=F(f"{owner}merchant__name"),
                row_mode=F(f"{owner}mode"),
                row_kind=kind,
            )
            .values("day", "row_merchant", "row_name", "row_mode", "row_kind")
            .annotate(**totals)
            .values_list(*columns)
        )

    settled = grouped(
        Settlement.objects.filter(scope("settled_at")),
        day_field="settled_at",
        owner="",
        kind=Value(_SETTLED, output_field=CharField()),
        row_count=Count("id"),
        row_amount=Sum("net"),
        row_other=nothing,
    )
    refunded = grouped(
        Refund.objects.filter(scope("created_at")),
        day_field="created_at",
        owner="",
        kind=Value(_REFUNDED, output_field=CharField()),
        row_count=Count("id", filter=not_failed),
        row_amount=Sum("amount", filter=not_failed),
        row_other=Sum("debited_from_wallet"),
    )
    entries = grouped(
        LedgerEntry.objects.filter(
            scope("created_at", "wallet__merchant_id", "wallet__mode"),
            entry_type__in=(LedgerEntryType.SETTLEMENT, LedgerEntryType.REFUND),
        ),
        day_field="created_at",
        owner="wallet__",
        kind=F("entry_type"),
        row_count=Count("id"),
        row_amount=Sum("amount"),
        row_other=nothing,
    )
    movements: dict[tuple[date, int, str], _DayMovements] = defaultdict(_DayMovements)
    for day, merchant, name, row_mode, kind, count, amount, other in settled.union(
        refunded, entries, all=True
    ):
        found = movements[(day, merchant, row_mode)]
        found.merchant_name = name
        amount = amount or ZERO
        if kind == _SETTLED:
            found.settlement_count, found.settled = count, amount
        elif kind == _REFUNDED:
            found.refund_count, found.refunds = count, amount
            found.refunds_from_wallet = other or ZERO
        elif kind == LedgerEntryType.SETTLEMENT:
            found.statement_settlements = amount
        else:
            found.statement_refunds = amount
    return movements


def _with_movements(
    rows: list[SettlementRow], movements: dict[tuple[date, int, str], _DayMovements]
) -> list[SettlementRow]:
    """``rows`` with each day's movements, plus a row (no paid collections) for every day,
    merchant and mode that has movements only; in the report's order."""
    merged: list[SettlementRow] = []
    seen: set[tuple[date, int, str]] = set()
    for row in rows:
        key = (row.day, row.merchant_id, row.mode)
        seen.add(key)
        found = movements.get(key)
        merged.append(row if found is None else _row_with(row, found))
    for (day, merchant, mode), found in movements.items():
        if (day, merchant, mode) in seen:
            continue
        empty = SettlementRow(
            day=day,
            merchant_id=merchant,
            merchant_name=found.merchant_name,
            mode=mode,
            transaction_count=0,
            gross=ZERO,
            fees=ZERO,
            shares=(),
            split_total=ZERO,
            net=ZERO,
        )
        merged.append(_row_with(empty, found))
    merged.sort(key=lambda row: (row.day, row.merchant_name, row.merchant_id, row.mode))
    return merged


def _row_with(row: SettlementRow, found: _DayMovements) -> SettlementRow:
    return replace(
        row,
        settlement_count=found.settlement_count,
        settled=found.settled,
        refund_count=found.refund_count,
        refunds=found.refunds,
        refunds_from_wallet=found.refunds_from_wallet,
        statement_settlements=found.statement_settlements,
        statement_refunds=found.statement_refunds,
    )


def collection_settlement_report(
    *,
    first_day: date,
    last_day: date,
    merchant_id: int | None = None,
    mode: str | None = None,
    with_settlements: bool = False,
) -> CollectionSettlementReport:
    """Paid collection transactions from the Lagos day ``first_day`` to ``last_day``
    (inclusive), grouped by the Lagos day they were paid (``paid_at``), the merchant and the
    mode; optionally one merchant, one mode (``None``: both modes, each in its own rows).

    What the amounts mean here (from ``collections_app.services``):

    * **the customer bears the fee.** Initialization charges ``amount`` (the item's price)
      plus ``transaction_fee`` (our collection fee, ``collection_fee_calculate``):
      ``amount_to_be_paid = amount + transaction_fee``. A confirmation marks a transaction paid
      only when the amount paid equals ``amount_to_be_paid``, and sets ``amount_paid`` to it.
    * **gross** is ``Σ amount_paid``: what customers paid, the fee included.
    * **fees** is ``Σ transaction_fee``: our collection fee on those transactions.
    * **split shares** are ``Σ TransactionSplitEntry.share`` per subaccount: fixed at
      initialization out of ``amount`` (never out of the fee, which is never split; their sum
      is at most ``amount``).
    * **net** to the merchant is ``gross − fees − split shares`` (for consistent data, that is
      ``amount`` minus the shares, never negative).

    Every amount is an exact two-place ``Decimal`` summed from integer kobo in the database, so
    ``net + fees + Σ shares == gross`` to the kobo for every row and for the totals, and the
    totals are the sums of the rows. Pending, failed, cancelled and expired transactions are
    left out. Rows are ordered by day, merchant name, merchant id and mode.

    With ``with_settlements``, each row also holds what reached or left the merchant's wallet
    that day: **settled** is ``Σ Settlement.net`` of the settlements settled that day
    (``settled_at``), **refunds** ``Σ Refund.amount`` of the refunds created that day and not
    failed, **refunds from wallet** ``Σ Refund.debited_from_wallet`` of every refund created
    that day; and beside them the merchant's wallet statement of that day (its ``settlement``
    and ``refund`` ledger entries). ``agrees_with_statement`` holds when settled equals the
    statement's settlements and refunds from wallet its refunds, to the kobo. A day with
    settlements or refunds and no paid collection gets a row of its own (zero collections).

    Raises ``ReportRangeError`` (400, naming the field) when ``last_day`` is before
    ``first_day``, the range is longer than ``MAX_REPORT_DAYS`` days, a day is outside
    ``EARLIEST_REPORT_DAY`` to ``LATEST_REPORT_DAY``, or ``mode`` is unknown.
    Two queries: one aggregate over the transactions, one over their split entries; with the
    settlements, one more (settlements, refunds and ledger entries in one ``UNION ALL``).
    """
    settlement_report_range_check(first_day=first_day, last_day=last_day)
    if mode is not None and mode not in Mode.values:
        raise ReportRangeError("mode", f"must be one of {', '.join(Mode.values)}")

    local_zone = zoneinfo.ZoneInfo(settings.TIME_ZONE)
    paid = _paid_in_range(
        first_day=first_day, last_day=last_day, merchant_id=merchant_id, mode=mode, prefix=""
    )
    entries_paid = _paid_in_range(
        first_day=first_day,
        last_day=last_day,
        merchant_id=merchant_id,
        mode=mode,
        prefix="transaction__",
    )
    groups = (
        CollectionTransaction.objects.filter(paid)
        .annotate(day=TruncDate("paid_at", tzinfo=local_zone))
        .values("day", "merchant_id", "merchant__name", "mode")
        .annotate(
            transaction_count=Count("id"),
            gross=Sum("amount_paid"),
            fees=Sum("transaction_fee"),
        )
        .order_by("day", "merchant__name", "merchant_id", "mode")
    )
    entry_groups = (
        TransactionSplitEntry.objects.filter(entries_paid)
        .annotate(day=TruncDate("transaction__paid_at", tzinfo=local_zone))
        .values(
            "day",
            "transaction__merchant_id",
            "transaction__mode",
            "subaccount_id",
            "subaccount__account_code",
            "subaccount__account_name",
        )
        .annotate(amount=Sum("share"))
        .order_by()
    )

    shares_by_row: dict[tuple[date, int, str], list[SubaccountShare]] = defaultdict(list)
    range_totals: dict[int, SubaccountShare] = {}
    for entry in entry_groups:
        share = SubaccountShare(
            subaccount_id=entry["subaccount_id"],
            account_code=entry["subaccount__account_code"],
            account_name=entry["subaccount__account_name"],
            amount=entry["amount"],
        )
        key = (entry["day"], entry["transaction__merchant_id"], entry["transaction__mode"])
        shares_by_row[key].append(share)
        known = range_totals.get(share.subaccount_id)
        range_totals[share.subaccount_id] = (
            share
            if known is None
            else SubaccountShare(
                subaccount_id=known.subaccount_id,
                account_code=known.account_code,
                account_name=known.account_name,
                amount=known.amount + share.amount,
            )
        )

    rows: list[SettlementRow] = []
    for group in groups:
        shares = _shares_sorted(shares_by_row[(group["day"], group["merchant_id"], group["mode"])])
        gross: Decimal = group["gross"] or ZERO
        fees: Decimal = group["fees"] or ZERO
        split_total = sum((share.amount for share in shares), ZERO)
        rows.append(
            SettlementRow(
                day=group["day"],
                merchant_id=group["merchant_id"],
                merchant_name=group["merchant__name"],
                mode=group["mode"],
                transaction_count=group["transaction_count"],
                gross=gross,
                fees=fees,
                shares=shares,
                split_total=split_total,
                net=gross - fees - split_total,
            )
        )

    if with_settlements:
        movements = _day_movements(
            first_day=first_day, last_day=last_day, merchant_id=merchant_id, mode=mode
        )
        rows = _with_movements(rows, movements)

    totals = SettlementTotals(
        transaction_count=sum(row.transaction_count for row in rows),
        gross=sum((row.gross for row in rows), ZERO),
        fees=sum((row.fees for row in rows), ZERO),
        shares=_shares_sorted(range_totals.values()),
        split_total=sum((row.split_total for row in rows), ZERO),
        net=sum((row.net for row in rows), ZERO),
        settlement_count=sum(row.settlement_count for row in rows),
        settled=sum((row.settled for row in rows), ZERO),
        refund_count=sum(row.refund_count for row in rows),
        refunds=sum((row.refunds for row in rows), ZERO),
        refunds_from_wallet=sum((row.refunds_from_wallet for row in rows), ZERO),
        statement_settlements=sum((row.statement_settlements for row in rows), ZERO),
        statement_refunds=sum((row.statement_refunds for row in rows), ZERO),
    )
    return CollectionSettlementReport(
        first_day=first_day,
        last_day=last_day,
        merchant_id=merchant_id,
        mode=mode,
        rows=tuple(rows),
        totals=totals,
    )
