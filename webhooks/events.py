"""Events: what the merchant's server is told, recorded inside the database transaction that
makes the change they describe, so an event exists if and only if that change committed.

The domain apps build the payload (``collections_app.events``, ``payouts.events``) and hand it
to :func:`event_record`. The event is serialized once into ``Event.body``; every delivery and
every retry of it sends those exact bytes (same ``id``). Its deliveries are created with it and
enqueued when the database transaction commits (``webhooks.deliveries``).

Payload::

    {"id": "evt_…", "event": "transaction.paid", "created_at": "…", "data": {…}}
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from core.api.fields import timestamp_representation
from webhooks.deliveries import webhook_deliveries_create, webhook_deliveries_create_each
from webhooks.models import Event

EVENT_ID_PREFIX = "evt_"


def event_timestamp(value: datetime | None) -> str | None:
    """The same ISO 8601 rendering as the API responses."""
    return timestamp_representation(value)


def event_id_generate() -> str:
    return EVENT_ID_PREFIX + secrets.token_hex(12)


def event_body_serialize(
    *, event_id: str, event_type: str, created_at: datetime, data: dict[str, Any]
) -> str:
    """The JSON text sent (UTF-8 encoded) in every delivery of the event."""
    payload = {
        "id": event_id,
        "event": event_type,
        "created_at": event_timestamp(created_at),
        "data": data,
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class EventSpec:
    """One event to record: its kind, whose it is, what it is about, and its payload."""

    merchant_id: int
    mode: str
    event_type: str
    reference: str
    data: dict[str, Any]
    transaction_id: int | None = None
    payout_id: int | None = None


def _event_build(spec: EventSpec, *, created_at: datetime) -> Event:
    event_id = event_id_generate()
    return Event(
        event_id=event_id,
        event_type=spec.event_type,
        merchant_id=spec.merchant_id,
        mode=spec.mode,
        transaction_id=spec.transaction_id,
        payout_id=spec.payout_id,
        reference=spec.reference,
        body=event_body_serialize(
            event_id=event_id, event_type=spec.event_type, created_at=created_at, data=spec.data
        ),
        created_at=created_at,
    )


def event_record(
    *,
    merchant_id: int,
    mode: str,
    event_type: str,
    reference: str,
    data: dict[str, Any],
    transaction_id: int | None = None,
    payout_id: int | None = None,
    callback_url: str | None = None,
) -> Event:
    """Records one event and its deliveries (the callback URL, if any, and the merchant's
    webhook URL for the mode). Call it inside the database transaction that made the change."""
    spec = EventSpec(
        merchant_id=merchant_id,
        mode=mode,
        event_type=event_type,
        reference=reference,
        data=data,
        transaction_id=transaction_id,
        payout_id=payout_id,
    )
    event = _event_build(spec, created_at=timezone.now())
    event.save(force_insert=True)
    webhook_deliveries_create(event=event, callback_url=callback_url)
    return event


def events_record(*, specs: Sequence[EventSpec]) -> list[Event]:
    """``event_record`` for many events (none with a callback URL), in one insert of the events
    and one of their deliveries. Call it inside the database transaction that made the changes;
    a uniqueness refusal (an event recorded before) raises ``IntegrityError`` for the whole
    call, so run it in a savepoint when that can happen."""
    created_at = timezone.now()
    events = Event.objects.bulk_create(
        [_event_build(spec, created_at=created_at) for spec in specs]
    )
    webhook_deliveries_create_each(events=events)
    return events
