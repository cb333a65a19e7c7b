"""Refund events: ``refund.pending`` when a refund is created, then ``refund.processed`` or
``refund.failed`` when it ends, each recorded inside the database transaction that makes the
change. The payload is built here; recording, signing and delivery belong to ``webhooks``.

The events name the refund (``reference`` is the ``refund_id``) and carry the collection's
reference in their data; they are not linked to the collection row, which holds at most one
event of each type (a collection may have several refunds)."""

from __future__ import annotations

from typing import Any

from core.money import format_amount
from refunds.models import Refund, RefundStatus
from webhooks.events import event_record, event_timestamp
from webhooks.models import Event, EventType

REFUND_EVENT_TYPES: dict[str, str] = {
    RefundStatus.PENDING: EventType.REFUND_PENDING,
    RefundStatus.PROCESSED: EventType.REFUND_PROCESSED,
    RefundStatus.FAILED: EventType.REFUND_FAILED,
}


def refund_event_data(*, refund: Refund, transaction_reference: str) -> dict[str, Any]:
    return {
        "refund_id": refund.refund_id,
        "transaction_reference": transaction_reference,
        "mode": refund.mode,
        "currency": refund.currency,
        "amount": format_amount(refund.amount),
        "fee_returned": format_amount(refund.fee_returned),
        "reason": refund.reason or None,
        "status": refund.status,
        "created_at": event_timestamp(refund.created_at),
        "processed_at": event_timestamp(refund.processed_at),
        "failure_reason": refund.failure_reason or None,
    }


def refund_event_record(*, refund: Refund, transaction_reference: str) -> Event:
    """Records the event of the refund's current status and its delivery to the merchant's
    webhook URL for the mode. Call it in the database transaction that set the status."""
    return event_record(
        merchant_id=refund.merchant_id,
        mode=refund.mode,
        event_type=REFUND_EVENT_TYPES[refund.status],
        reference=refund.refund_id,
        data=refund_event_data(refund=refund, transaction_reference=transaction_reference),
    )
