"""Events: what the merchant's server is told.

Every ``payment_status`` change of a collection transaction records exactly one event
(``transaction.paid``, ``transaction.failed``, ``transaction.cancelled`` or
``transaction.expired``) inside the database transaction that makes the change, so the event
exists if and only if the change committed. A final payout records ``payout.successful`` or
``payout.failed`` the same way through ``payout_event_emit``.

The event is serialized once into ``Event.body``; every delivery and every retry of it sends
those exact bytes (same ``id``). Deliveries are created with the event and enqueued when the
database transaction commits (see ``collections_app.deliveries``).

Payload::

    {"id": "evt_…", "event": "transaction.paid", "created_at": "…", "data": {…}}
"""

from __future__ import annotations

import json
import logging
import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import serializers

from collections_app.deliveries import webhook_deliveries_create
from collections_app.models import CollectionTransaction, Event, EventType, PaymentStatus
from core.money import format_amount

if TYPE_CHECKING:
    from payouts.models import Payout

logger = logging.getLogger(__name__)

EVENT_ID_PREFIX = "evt_"

TRANSACTION_EVENT_TYPES: dict[str, str] = {
    PaymentStatus.PAID: EventType.TRANSACTION_PAID,
    PaymentStatus.FAILED: EventType.TRANSACTION_FAILED,
    PaymentStatus.CANCELLED: EventType.TRANSACTION_CANCELLED,
    PaymentStatus.EXPIRED: EventType.TRANSACTION_EXPIRED,
}
PAYOUT_EVENT_TYPES: dict[str, str] = {
    "successful": EventType.PAYOUT_SUCCESSFUL,
    "failed": EventType.PAYOUT_FAILED,
}

_datetime_field = serializers.DateTimeField()


def _timestamp(value: datetime | None) -> str | None:
    """The same ISO 8601 rendering as the API responses."""
    return None if value is None else _datetime_field.to_representation(value)


def _event_id_generate() -> str:
    return EVENT_ID_PREFIX + secrets.token_hex(12)


def event_body_serialize(
    *, event_id: str, event_type: str, created_at: datetime, data: dict[str, Any]
) -> str:
    """The JSON text sent (UTF-8 encoded) in every delivery of the event."""
    payload = {
        "id": event_id,
        "event": event_type,
        "created_at": _timestamp(created_at),
        "data": data,
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def transaction_event_data(*, transaction: CollectionTransaction) -> dict[str, Any]:
    customer = transaction.customer
    item = transaction.payment_item
    return {
        "reference": transaction.reference,
        "client_reference": transaction.client_reference,
        "payment_status": transaction.payment_status,
        "mode": transaction.mode,
        "currency": transaction.currency,
        "amount": format_amount(transaction.amount),
        "transaction_fee": format_amount(transaction.transaction_fee),
        "amount_to_be_paid": format_amount(transaction.amount_to_be_paid),
        "amount_paid": format_amount(transaction.amount_paid),
        "paid_at": _timestamp(transaction.paid_at),
        "channel": transaction.channel,
        "payment_type": transaction.payment_type,
        "gateway_reference": transaction.gateway_reference,
        "gateway_used": transaction.gateway_used,
        "created_at": _timestamp(transaction.created_at),
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
            "id": transaction.business_id,
            "business_name": transaction.business.business_name,
        },
        "meta_data": transaction.meta_data,
    }


def payout_event_data(*, payout: Payout) -> dict[str, Any]:
    return {
        "id": payout.pk,
        "reference": payout.internal_reference,
        "internal_reference": payout.internal_reference,
        "status": payout.status,
        "mode": payout.mode,
        "currency": payout.currency,
        "amount": format_amount(payout.amount),
        "fee_amount": format_amount(payout.fee_amount),
        "total_debit_amount": format_amount(payout.total_debit_amount),
        "narration": payout.narration,
        "beneficiary": {
            "account_number": payout.account_number,
            "account_name": payout.account_name,
            "bank_code": payout.bank_code,
            "bank_name": payout.bank_name,
        },
        "error_message": payout.error_message,
        "created_at": _timestamp(payout.created_at),
        "completed_at": _timestamp(payout.completed_at),
    }


def _event_record(
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


def transaction_event_record(
    *, transaction: CollectionTransaction, previous_status: str
) -> Event | None:
    """Records the event for the transaction's new ``payment_status`` and its deliveries (to
    the callback URL and the merchant's webhook URL for the mode). Must run inside the database
    transaction that changed the status; deliveries are enqueued when it commits."""
    event_type = TRANSACTION_EVENT_TYPES.get(transaction.payment_status)
    if event_type is None:
        return None
    event = _event_record(
        merchant_id=transaction.merchant_id,
        mode=transaction.mode,
        event_type=event_type,
        reference=transaction.reference,
        data=transaction_event_data(transaction=transaction),
        transaction_id=transaction.pk,
        callback_url=transaction.callback_url,
    )
    logger.info(
        "event %s %s recorded for %s (was %s)",
        event.event_id,
        event_type,
        transaction.reference,
        previous_status,
    )
    return event


def payout_event_emit(*, payout: Payout) -> None:
    """Records ``payout.successful`` or ``payout.failed`` for a final payout and enqueues its
    delivery to the merchant's webhook URL for the payout's mode (no callback URL: payouts have
    none) when the surrounding database transaction commits.

    Call it in the database transaction that makes the payout final. It does nothing for a
    payout that is not final, and records at most one event per payout and type, so calling it
    again (a requery confirming what is already known) sends nothing twice.
    """
    event_type = PAYOUT_EVENT_TYPES.get(payout.status)
    if event_type is None:
        logger.debug("payout %s is %s: no event", payout.internal_reference, payout.status)
        return
    try:  # the unique constraint on (payout, event type) keeps a second one out
        with transaction.atomic():
            event = _event_record(
                merchant_id=payout.merchant_id,
                mode=payout.mode,
                event_type=event_type,
                reference=payout.internal_reference,
                data=payout_event_data(payout=payout),
                payout_id=payout.pk,
            )
    except IntegrityError:
        return  # recorded before, or concurrently by another caller
    logger.info(
        "event %s %s recorded for payout %s",
        event.event_id,
        event_type,
        payout.internal_reference,
    )
