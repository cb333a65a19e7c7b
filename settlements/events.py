"""Settlement events: ``settlement.completed``, recorded in the transaction that settles. The
payload is the settlement resource (the settlements API serializes the same fields the same
way); recording, signing and delivery belong to ``webhooks``."""

from __future__ import annotations

from typing import Any

from core.money import format_amount
from settlements.models import Settlement
from webhooks.events import event_record, event_timestamp
from webhooks.models import Event, EventType


def settlement_event_data(settlement: Settlement) -> dict[str, Any]:
    """The settlement as the merchant sees it: amounts as strings with two decimals, instants
    in ISO 8601 as the API renders them."""
    return {
        "settlement_id": settlement.settlement_id,
        "mode": settlement.mode,
        "currency": settlement.currency,
        "period_start": event_timestamp(settlement.period_start),
        "period_end": event_timestamp(settlement.period_end),
        "transaction_count": settlement.transaction_count,
        "gross": format_amount(settlement.gross),
        "fees": format_amount(settlement.fees),
        "subaccount_shares": format_amount(settlement.subaccount_shares),
        "refunds_deducted": format_amount(settlement.refunds_deducted),
        "net": format_amount(settlement.net),
        "status": settlement.status,
        "settled_at": event_timestamp(settlement.settled_at),
    }


def settlement_completed_event_record(*, settlement: Settlement) -> Event:
    """Records ``settlement.completed`` for the merchant's webhook URL of the settlement's
    mode. Call it in the transaction that records the settlement."""
    return event_record(
        merchant_id=settlement.merchant_id,
        mode=settlement.mode,
        event_type=EventType.SETTLEMENT_COMPLETED,
        reference=settlement.settlement_id,
        data=settlement_event_data(settlement),
    )
