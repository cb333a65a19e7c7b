"""The collections settlement report: where the money customers paid goes, per Lagos day,
merchant and mode. Reads only; two queries whatever the range or the number of transactions."""

from __future__ import annotations

import zoneinfo
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate

from collections_app.models import CollectionTransaction, PaymentStatus, TransactionSplitEntry
from core.dates import local_day_bounds
from core.exceptions import ApplicationError
from merchants.models import Mode

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


@dataclass(frozen=True)
class SettlementFigures:
    """What the report counts of paid collections: how many, gross, fees, each subaccount's
    share, the shares' total and net (gross − fees − shares)."""

    transaction_count: int
    gross: Decimal
    fees: Decimal
    shares: tuple[SubaccountShare, ...]
    split_total: Decimal
    net: Decimal


@dataclass(frozen=True)
class SettlementRow(SettlementFigures):
    """The paid collections of one merchant in one mode on one Lagos day."""

    day: date
    merchant_id: int
    merchant_name: str
    mode: str


@dataclass(frozen=True)
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


def collection_settlement_report(
    *,
    first_day: date,
    last_day: date,
    merchant_id: int | None = None,
    mode: str | None = None,
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

    Raises ``ReportRangeError`` (400, naming the field) when ``last_day`` is before
    ``first_day``, the range is longer than ``MAX_REPORT_DAYS`` days, a day is outside
    ``EARLIEST_REPORT_DAY`` to ``LATEST_REPORT_DAY``, or ``mode`` is unknown.
    Two queries: one aggregate over the transactions, one over their split entries.
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

    totals = SettlementTotals(
        transaction_count=sum(row.transaction_count for row in rows),
        gross=sum((row.gross for row in rows), ZERO),
        fees=sum((row.fees for row in rows), ZERO),
        shares=_shares_sorted(range_totals.values()),
        split_total=sum((row.split_total for row in rows), ZERO),
        net=sum((row.net for row in rows), ZERO),
    )
    return CollectionSettlementReport(
        first_day=first_day,
        last_day=last_day,
        merchant_id=merchant_id,
        mode=mode,
        rows=tuple(rows),
        totals=totals,
    )
