"""Receivers of other apps' signals: Paystack's transfer webhook events, which arrive at the
collections' Paystack route (``collections_app.signals.paystack_event_received``) and are
applied by ``payouts.services.provider_events``."""

from __future__ import annotations

from typing import Any

from integrations.paystack import naira_from_kobo
from merchants.models import Mode
from payouts.providers.paystack import PROVIDER_NAME, nip_code_of, session_id_of
from payouts.services.provider_events import (
    ProviderTransferEvent,
    ProviderTransferEventKind,
    provider_transfer_event_apply,
)

PAYSTACK_TRANSFER_EVENTS: dict[str, ProviderTransferEventKind] = {
    "transfer.success": ProviderTransferEventKind.SUCCESS,
    "transfer.failed": ProviderTransferEventKind.FAILED,
    "transfer.reversed": ProviderTransferEventKind.REVERSED,
}
EVENT_MESSAGES: dict[ProviderTransferEventKind, str] = {
    ProviderTransferEventKind.SUCCESS: "Transfer successful",
    ProviderTransferEventKind.FAILED: "Transfer failed",
    ProviderTransferEventKind.REVERSED: "Transfer reversed by the beneficiary bank",
}


def paystack_transfer_event_of(event: str, data: dict[str, Any]) -> ProviderTransferEvent | None:
    """A Paystack ``transfer.success``/``transfer.failed``/``transfer.reversed`` event as a
    ``ProviderTransferEvent``, or None for other events. Its identity is the event name and
    Paystack's transfer id (the same on every redelivery)."""
    kind = PAYSTACK_TRANSFER_EVENTS.get(event)
    if kind is None:
        return None
    reference = data.get("reference")
    transfer_id = data.get("id")
    identity = transfer_id if isinstance(transfer_id, str | int) else data.get("transfer_code")
    amount = data.get("amount")
    currency = data.get("currency")
    return ProviderTransferEvent(
        provider=PROVIDER_NAME,
        event_id=f"{event}:{identity or reference or ''}",
        reference=reference if isinstance(reference, str) else "",
        kind=kind,
        session_id=session_id_of(data),
        message=EVENT_MESSAGES[kind],
        provider_reference=str(data.get("transfer_code") or ""),
        nip_code=nip_code_of(data),
        amount=naira_from_kobo(amount) if isinstance(amount, int | str) else None,
        currency=currency if isinstance(currency, str) else "",
        mode=Mode.TEST if data.get("domain") == "test" else Mode.LIVE,
        raw={"event": event, "data": data},
    )


def paystack_transfer_event(
    sender: Any, *, event: str, data: dict[str, Any], **kwargs: Any
) -> str | None:
    """Applies a Paystack transfer event to its payout; None for other events."""
    transfer_event = paystack_transfer_event_of(event, data)
    if transfer_event is None:
        return None
    result = provider_transfer_event_apply(transfer_event)
    return f"Transfer event {result}"
