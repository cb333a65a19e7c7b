"""Collection events: every ``payment_status`` change of a collection transaction records
exactly one event (``transaction.paid``, ``transaction.failed``, ``transaction.cancelled`` or
``transaction.expired``) inside the database transaction that makes the change. The payload is
built here; recording, signing and delivery belong to ``webhooks``."""

from __future__ import annotations

import logging
from typing import Any

from collections_app.models import CollectionTransaction, PaymentStatus
from core.money import format_amount
from webhooks.events import event_record, event_timestamp
from webhooks.models import Event, EventType

logger = logging.getLogger(__name__)

TRANSACTION_EVENT_TYPES: dict[str, str] = {
    PaymentStatus.PAID: EventType.TRANSACTION_PAID,
    PaymentStatus.FAILED: EventType.TRANSACTION_FAILED,
    PaymentStatus.CANCELLED: EventType.TRANSACTION_CANCELLED,
    PaymentStatus.EXPIRED: EventType.TRANSACTION_EXPIRED,
}


def transaction_event_data(*, collection: CollectionTransaction) -> dict[str, Any]:
    customer = collection.customer
    item = collection.payment_item
    return {
        "reference": collection.reference,
        "client_reference": collection.client_reference,
        "payment_status": collection.payment_status,
        "mode": collection.mode,
        "currency": collection.currency,
        "amount": format_amount(collection.amount),
        "transaction_fee": format_amount(collection.transaction_fee),
        "amount_to_be_paid": format_amount(collection.amount_to_be_paid),
        "amount_paid": format_amount(collection.amount_paid),
        "amount_refunded": format_amount(collection.amount_refunded),
        "paid_at": event_timestamp(collection.paid_at),
        "channel": collection.channel,
        "payment_type": collection.payment_type,
        "gateway_reference": collection.gateway_reference,
        "gateway_used": collection.gateway_used,
        "created_at": event_timestamp(collection.created_at),
        "customer": {
            "id": customer.pk,
            "customer_tag": customer.customer_tag,
            "email": customer.email,
            "first_name": customer.first_name,
            "last_name": customer.last_name,
            "phone_number": customer.phone_number,
        },
        "payment_item": {"id": item.pk, "name": item.name},
        "business": {
            "id": collection.business_id,
            "business_name": collection.business.business_name,
        },
        "meta_data": collection.meta_data,
    }


def transaction_event_record(
    *, collection: CollectionTransaction, previous_status: str
) -> Event | None:
    """Records the event for the transaction's new ``payment_status`` and its deliveries (to
    the callback URL and the merchant's webhook URL for the mode). Must run inside the database
    transaction that changed the status; deliveries are enqueued when it commits. Nothing is
    recorded for a status that did not change or has no event (``pending``)."""
    event_type = TRANSACTION_EVENT_TYPES.get(collection.payment_status)
    if event_type is None or collection.payment_status == previous_status:
        return None
    event = event_record(
        merchant_id=collection.merchant_id,
        mode=collection.mode,
        event_type=event_type,
        reference=collection.reference,
        data=transaction_event_data(collection=collection),
        transaction_id=collection.pk,
        callback_url=collection.callback_url,
    )
    logger.info(
        "event %s %s recorded for %s (was %s)",
        event.event_id,
        event_type,
        collection.reference,
        previous_status,
    )
    return event
