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
from datetime import datetime
from typing import Any

from django.utils import timezone

from core.api.fields import timestamp_representation
from webhooks.deliveries import webhook_deliveries_create
from webhooks.models import Event

EVENT_ID_PREFIX = "evt_"


def event_timestamp(value: datetime | None) -> str | None:
    """The same ISO 8601 rendering as the API responses."""
    return timestamp_representation(value)


def _event_id_generate() -> str:
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
    created_at = timezone.now()
    event_id = _event_id_generate()
    event = Event.objects.create(
        event_id=event_id,
        event_type=event_type,
        merchant_id=merchant_id,
        mode=mode,
        transaction_id=transaction_id,
        payout_id=payout_id,
        reference=reference,
        body=event_body_serialize(
            event_id=event_id, event_type=event_type, created_at=created_at, data=data
        ),
        created_at=created_at,
    )
    webhook_deliveries_create(event=event, callback_url=callback_url)
    return event
