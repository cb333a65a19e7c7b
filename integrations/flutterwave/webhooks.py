"""Flutterwave's webhooks: the ``verif-hash`` check and the parsing of a transfer event.

Flutterwave POSTs ``{"event": "transfer.completed", "event.type": "Transfer", "data": {…}}``
with a ``verif-hash`` header equal to the secret hash set in its dashboard
(``settings.FLUTTERWAVE_WEBHOOK_HASH``). ``data`` is a transfer object: ``id`` (Flutterwave's),
``reference`` (ours), ``status`` (``SUCCESSFUL``/``FAILED``), ``complete_message``, ``amount``
(naira, a JSON number: read as an exact ``Decimal``, never a float) and ``currency``. Parsing
checks shapes only; what a status means for the money is decided by the payout side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from core.api.parsers import MalformedJSONError, json_body_load
from integrations.flutterwave.client import WEBHOOK_HASH_HEADER, flutterwave_webhook_hash_valid

TRANSFER_COMPLETED = "transfer.completed"
MESSAGE_MAX_CHARS = 255
TWO_PLACES = Decimal("0.01")

__all__ = [
    "TRANSFER_COMPLETED",
    "WEBHOOK_HASH_HEADER",
    "FlutterwaveTransferWebhook",
    "UnreadableWebhookError",
    "flutterwave_transfer_webhook_parse",
    "flutterwave_webhook_hash_valid",
]


class UnreadableWebhookError(MalformedJSONError):
    """The body is not a JSON object with an ``event`` (400 in the envelope, never applied)."""


@dataclass(frozen=True)
class FlutterwaveTransferWebhook:
    """A ``transfer.completed`` event as Flutterwave sent it."""

    reference: str  # ours: the payout's internal reference
    provider_reference: str  # Flutterwave's transfer id
    status: str  # Flutterwave's word, upper case: SUCCESSFUL, FAILED, …
    message: str  # complete_message
    amount: Decimal | None  # naira, exact; None when absent or not a two-place amount
    currency: str
    raw: dict[str, Any]


def _text(value: Any) -> str:
    if value is None or isinstance(value, bool | dict | list):
        return ""
    if isinstance(value, Decimal):
        return str(value) if value == value.to_integral_value() else ""
    return str(value).strip()


def _amount(value: Any) -> Decimal | None:
    if not isinstance(value, Decimal) or not value.is_finite() or value <= 0:
        return None
    return value if value == value.quantize(TWO_PLACES) else None


def flutterwave_transfer_webhook_parse(raw_body: bytes) -> FlutterwaveTransferWebhook | None:
    """The transfer event in ``raw_body``; ``None`` for any other event or a transfer event
    without our reference (acknowledged and ignored). Raises ``UnreadableWebhookError`` when
    the body is not a JSON object naming an event (``MalformedJSONError`` when it is no JSON
    at all: both are 400s)."""
    document = json_body_load(raw_body)  # the one JSON reader's refusals (400) first
    payload = json.loads(raw_body, parse_float=Decimal, parse_int=Decimal)
    if not isinstance(payload, dict) or not isinstance(payload.get("event"), str):
        raise UnreadableWebhookError("Malformed webhook: a JSON object with an event is expected")
    if payload["event"] != TRANSFER_COMPLETED:
        return None
    data = payload.get("data")
    if not isinstance(data, dict):
        raise UnreadableWebhookError("Malformed webhook: data must be an object")
    reference = _text(data.get("reference"))
    if not reference:
        return None
    return FlutterwaveTransferWebhook(
        reference=reference,
        provider_reference=_text(data.get("id")),
        status=_text(data.get("status")).upper(),
        message=_text(data.get("complete_message"))[:MESSAGE_MAX_CHARS],
        amount=_amount(data.get("amount")),
        currency=_text(data.get("currency")).upper(),
        raw=document,
    )
