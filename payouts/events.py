"""Payout events: a payout that becomes final records ``payout.successful`` or
``payout.failed`` inside the database transaction that settles it. The payload is built here;
recording, signing and delivery belong to ``webhooks``."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction

from core.money import format_amount
from payouts.models import Payout, PayoutStatus
from webhooks.events import EventSpec, event_record, event_timestamp, events_record
from webhooks.models import EventType

logger = logging.getLogger(__name__)

PAYOUT_EVENT_TYPES: dict[str, str] = {
    PayoutStatus.SUCCESSFUL: EventType.PAYOUT_SUCCESSFUL,
    PayoutStatus.FAILED: EventType.PAYOUT_FAILED,
}


def payout_event_data(*, payout: Payout) -> dict[str, Any]:
    return {
        "id": payout.pk,
        "reference": payout.internal_reference,
        "internal_reference": payout.internal_reference,
        "idempotency_key": payout.idempotency_key,
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
        "nip_session_id": payout.nip_session_id or None,
        "returned_at": event_timestamp(payout.returned_at),
        "return_reason": payout.return_reason or None,
        "created_at": event_timestamp(payout.created_at),
        "completed_at": event_timestamp(payout.completed_at),
    }


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
    _payout_event_record(payout=payout, event_type=event_type)


def payout_events_emit(*, payouts: Sequence[Payout]) -> None:
    """``payout_event_emit`` for many payouts made final in one database transaction (a
    dispatch batch), recorded together: one insert of the events, one read of the webhook URLs,
    one insert of the deliveries. Should any of them have its event already (the unique
    constraint refuses the insert, and the savepoint undoes it), each is recorded on its own
    instead, exactly as ``payout_event_emit`` does."""
    final = [payout for payout in payouts if payout.status in PAYOUT_EVENT_TYPES]
    if not final:
        return
    specs = [
        EventSpec(
            merchant_id=payout.merchant_id,
            mode=payout.mode,
            event_type=PAYOUT_EVENT_TYPES[payout.status],
            reference=payout.internal_reference,
            data=payout_event_data(payout=payout),
            payout_id=payout.pk,
        )
        for payout in final
    ]
    try:
        with transaction.atomic():
            events = events_record(specs=specs)
    except IntegrityError:
        for payout in final:
            payout_event_emit(payout=payout)
        return
    logger.info("%s payout event(s) recorded together", len(events))


def payout_returned_event_emit(*, payout: Payout) -> None:
    """Records ``payout.returned`` for a successful payout the beneficiary's bank sent back (in
    the transaction that credits the return); at most one per payout."""
    _payout_event_record(payout=payout, event_type=EventType.PAYOUT_RETURNED)


def _payout_event_record(*, payout: Payout, event_type: str) -> None:
    try:  # the unique constraint on (payout, event type) keeps a second one out
        with transaction.atomic():
            event = event_record(
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
