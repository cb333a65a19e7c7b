"""Refund reads: one refund of a merchant, and the refund list with its filters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet

from core.api.created_range import CreatedRangeFilters
from core.api.list_filters import filters_given
from core.api.pagination import Page, paginate
from core.exceptions import NotFoundError
from refunds.models import Refund

if TYPE_CHECKING:
    from merchants.models import Merchant

REFUND_NOT_FOUND_MESSAGE = "Refund not found"


@dataclass(frozen=True)
class RefundListFilters(CreatedRangeFilters):
    status: str | None = None
    reference: str | None = None  # the refund_id or the collection's reference


def refund_list(
    *, merchant: Merchant, mode: str, filters: RefundListFilters | None = None
) -> QuerySet[Refund]:
    """The merchant's refunds of one mode, newest first, with their collections' references."""
    filters = filters or RefundListFilters()
    queryset = filters_given(
        Refund.objects.filter(merchant=merchant, mode=mode),
        status=filters.status,
        **filters.created_lookups(),
    )
    if filters.reference:
        queryset = queryset.filter(
            Q(refund_id=filters.reference) | Q(collection__reference=filters.reference)
        )
    return queryset.select_related("collection").order_by("-id")


def refund_list_page(
    *,
    merchant: Merchant,
    mode: str,
    filters: RefundListFilters | None = None,
    page: int,
    limit: int,
) -> Page:
    return paginate(
        refund_list(merchant=merchant, mode=mode, filters=filters), page=page, limit=limit
    )


def refund_get(*, merchant: Merchant, mode: str, refund_id: str) -> Refund:
    """One refund of the merchant in this mode by its ``refund_id``; 404 for another
    merchant's or mode's."""
    refund = (
        Refund.objects.filter(refund_id=refund_id, merchant=merchant, mode=mode)
        .select_related("collection")
        .first()
    )
    if refund is None:
        raise NotFoundError(REFUND_NOT_FOUND_MESSAGE)
    return refund
