"""Settlement reads: a merchant's settlements of one mode (list, one, its transactions) and the
day figures the finance dashboard shows. Writes live in ``settlements.services``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import (
    Count,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, TruncDate

from collections_app.models import CollectionTransaction, TransactionSplitEntry
from core.api.list_filters import filters_given
from core.api.pagination import Page, paginate
from core.dates import local_day_bounds
from core.exceptions import NotFoundError
from core.fields import MoneyField
from settlements.models import Settlement, SettlementShare

if TYPE_CHECKING:
    from merchants.models import Merchant

SETTLEMENT_NOT_FOUND_MESSAGE = "Settlement not found"
ZERO = Decimal("0.00")
SETTLEMENT_ID_MAX_LENGTH = Settlement._meta.get_field("settlement_id").max_length or 40


@dataclass(frozen=True)
class SettlementListFilters:
    status: str | None = None
    settled_from: datetime | None = None  # inclusive
    settled_to: datetime | None = None  # inclusive


def settlement_list(
    *, merchant: Merchant, mode: str, filters: SettlementListFilters | None = None
) -> QuerySet[Settlement]:
    """The merchant's settlements of one mode, newest first (``settlement_newest_idx``)."""
    filters = filters or SettlementListFilters()
    return filters_given(
        Settlement.objects.filter(merchant=merchant, mode=mode),
        status=filters.status,
        settled_at__gte=filters.settled_from,
        settled_at__lte=filters.settled_to,
    ).order_by("-id")


def settlement_list_page(
    *,
    merchant: Merchant,
    mode: str,
    filters: SettlementListFilters | None = None,
    page: int,
    limit: int,
) -> Page:
    """One page of ``settlement_list`` with its exact total (two queries; a page past the total
    is not read)."""
    return paginate(
        settlement_list(merchant=merchant, mode=mode, filters=filters), page=page, limit=limit
    )


def settlement_get(
    *, merchant: Merchant, mode: str, settlement_id: str, with_shares: bool = True
) -> Settlement:
    """One settlement of the merchant in this mode by its ``settlement_id``, with its shares
    (subaccount and payout read with them) unless ``with_shares`` is off; 404 for another
    merchant's or mode's."""
    settlement = None
    if 0 < len(settlement_id) <= SETTLEMENT_ID_MAX_LENGTH:
        settlements = Settlement.objects.filter(
            merchant=merchant, mode=mode, settlement_id=settlement_id
        )
        if with_shares:
            shares = SettlementShare.objects.select_related("subaccount", "payout").order_by("id")
            settlements = settlements.prefetch_related(Prefetch("shares", queryset=shares))
        settlement = settlements.first()
    if settlement is None:
        raise NotFoundError(SETTLEMENT_NOT_FOUND_MESSAGE)
    return settlement


def _share_total_subquery() -> Coalesce:
    shares = (
        TransactionSplitEntry.objects.filter(transaction_id=OuterRef("pk"))
        .order_by()
        .values("transaction_id")
        .annotate(total=Sum("share"))
        .values("total")
    )
    # Kobo in the database: read back through the money field, like the column it sums.
    return Coalesce(
        Subquery(shares, output_field=MoneyField()), Value(0), output_field=MoneyField()
    )


def settlement_transactions(*, settlement: Settlement) -> QuerySet[CollectionTransaction]:
    """The paid collections ``settlement`` settled, in the order they were paid, each with
    ``subaccount_share_total`` (its split entries' shares added up in the same query)."""
    return (
        CollectionTransaction.objects.filter(settlement=settlement)
        .annotate(subaccount_share_total=_share_total_subquery())
        .only(
            "id",
            "reference",
            "client_reference",
            "amount",
            "transaction_fee",
            "amount_paid",
            "amount_refunded",
            "paid_at",
            "channel",
        )
        .order_by("paid_at", "id")
    )


def settlement_transactions_page(*, settlement: Settlement, page: int, limit: int) -> Page:
    """One page of ``settlement_transactions``; the total is the settlement's own
    ``transaction_count`` (the collections it claimed), so one query reads the page."""
    return paginate(
        settlement_transactions(settlement=settlement),
        page=page,
        limit=limit,
        total=settlement.transaction_count,
    )


# --- Day figures (the finance dashboard) -------------------------------------------------------


@dataclass(frozen=True)
class SettlementDayFigures:
    """The settlements of one mode settled on one Lagos day, added up."""

    day: date
    mode: str
    count: int = 0
    transaction_count: int = 0
    gross: Decimal = ZERO
    fees: Decimal = ZERO
    subaccount_shares: Decimal = ZERO
    refunds_deducted: Decimal = ZERO
    net: Decimal = ZERO


def settlement_day_figures(
    *, days: Iterable[date], modes: Iterable[str]
) -> dict[tuple[date, str], SettlementDayFigures]:
    """``(day, mode) -> figures`` of every settlement settled on each Lagos day, for each mode
    (zeros where there was none). One grouped query whatever the days, modes or settlements."""
    days, modes = sorted(set(days)), list(modes)
    figures = {
        (day, mode): SettlementDayFigures(day=day, mode=mode) for day in days for mode in modes
    }
    if not days or not modes:
        return figures
    settled = Q()
    for day in days:
        start, end = local_day_bounds(day)
        settled |= Q(settled_at__gte=start, settled_at__lt=end)
    rows = (
        Settlement.objects.filter(settled, mode__in=modes)
        .order_by()
        .values("mode", day=TruncDate("settled_at", tzinfo=ZoneInfo(settings.TIME_ZONE)))
        .annotate(
            count=Count("id"),
            transaction_count=Sum("transaction_count"),
            gross=Sum("gross"),
            fees=Sum("fees"),
            subaccount_shares=Sum("subaccount_shares"),
            refunds_deducted=Sum("refunds_deducted"),
            net=Sum("net"),
        )
    )
    for row in rows:
        key = (row["day"], row["mode"])
        if key in figures:
            figures[key] = SettlementDayFigures(
                day=row["day"],
                mode=row["mode"],
                count=row["count"],
                transaction_count=row["transaction_count"] or 0,
                gross=row["gross"] or ZERO,
                fees=row["fees"] or ZERO,
                subaccount_shares=row["subaccount_shares"] or ZERO,
                refunds_deducted=row["refunds_deducted"] or ZERO,
                net=row["net"] or ZERO,
            )
    return figures
