"""Receivers of other apps' signals: Paystack's refund webhook events, which arrive at the
collections' Paystack route (``collections_app.signals.paystack_event_received``)."""

from __future__ import annotations

from typing import Any

from refunds.services import refunds_provider_hint

PAYSTACK_REFUND_EVENTS = frozenset(
    {"refund.pending", "refund.processing", "refund.processed", "refund.failed"}
)


def paystack_refund_event(
    sender: Any, *, event: str, data: dict[str, Any], **kwargs: Any
) -> str | None:
    """A Paystack ``refund.*`` event is a hint: the live refunds of the transaction it names
    that are still pending are asked about now (``refund_send``); the event's own status is
    never applied. None for other events."""
    if event not in PAYSTACK_REFUND_EVENTS:
        return None
    reference = data.get("transaction_reference")
    if not isinstance(reference, str) or not reference:
        return "Refund event ignored: no transaction reference"
    checked = refunds_provider_hint(provider_name="paystack", transaction_reference=reference)
    if not checked:
        return "Refund event ignored: no pending refund of that transaction"
    return f"Refund event applied: {len(checked)} refund(s) checked"
