"""Event reads for the merchant's events API: the list of one merchant's events in one mode and
one event with its deliveries and their attempts. Deliveries (and, for one event, attempts) are
prefetched here, so a page of events costs a fixed number of queries whatever its size."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import Prefetch, QuerySet

from core.api.created_range import CreatedRangeFilters
from core.api.list_filters import filters_given
from core.exceptions import NotFoundError
from webhooks.models import Event, WebhookDelivery, WebhookDeliveryAttempt

if TYPE_CHECKING:
    from merchants.models import Merchant

EVENT_NOT_FOUND_MESSAGE = "Event not found"
# Event ids are ``evt_`` and 24 hex digits (``webhooks.events``); anything that cannot be one is
# answered without a query.
EVENT_ID_PATTERN = re.compile(r"evt_[0-9a-f]{1,36}")


@dataclass(frozen=True)
class EventListFilters(CreatedRangeFilters):
    event_type: str | None = None
    reference: str | None = None  # exact: the transaction or payout reference


def _deliveries_prefetch(*, with_attempts: bool) -> Prefetch:
    """Every delivery chain of the event, oldest first (resends after what they resend)."""
    deliveries = WebhookDelivery.objects.order_by("created_at", "id")
    if with_attempts:
        deliveries = deliveries.prefetch_related(
            Prefetch("attempts", queryset=WebhookDeliveryAttempt.objects.order_by("attempt_number"))
        )
    return Prefetch("deliveries", queryset=deliveries)


def event_list(
    *, merchant: Merchant, mode: str, filters: EventListFilters | None = None
) -> QuerySet[Event]:
    """The merchant's events of one mode, newest first, with their delivery chains (not their
    attempts): a page costs one query for the events and one for their deliveries."""
    filters = filters or EventListFilters()
    queryset = filters_given(
        Event.objects.filter(merchant=merchant, mode=mode),
        event_type=filters.event_type,
        **filters.created_lookups(),
        reference=filters.reference,
    )
    return queryset.prefetch_related(_deliveries_prefetch(with_attempts=False)).order_by(
        "-created_at", "-id"
    )


def event_get(*, merchant: Merchant, mode: str, event_id: str) -> Event:
    """One event of the merchant in this mode, by its ``evt_`` id, with its delivery chains
    (resends included) and their attempts; 404 for another merchant's or mode's event."""
    if not EVENT_ID_PATTERN.fullmatch(event_id):
        raise NotFoundError(EVENT_NOT_FOUND_MESSAGE)
    event = (
        Event.objects.filter(event_id=event_id, merchant=merchant, mode=mode)
        .prefetch_related(_deliveries_prefetch(with_attempts=True))
        .first()
    )
    if event is None:
        raise NotFoundError(EVENT_NOT_FOUND_MESSAGE)
    return event


def event_latest_deliveries(*, event: Event) -> dict[str, WebhookDelivery]:
    """The latest delivery chain per target (``DeliveryTarget``) of an event from
    :func:`event_list` or :func:`event_get`, read from the prefetched chains (no query)."""
    latest: dict[str, WebhookDelivery] = {}
    for delivery in sorted(event.deliveries.all(), key=lambda row: (row.created_at, row.pk)):
        latest[delivery.target] = delivery
    return latest
