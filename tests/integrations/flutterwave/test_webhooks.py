"""Parsing Flutterwave's ``transfer.completed`` webhook (the payload documented at
https://developer.flutterwave.com/docs/integration-guides/webhooks, transfer events): our
reference, Flutterwave's id, the status and the message; other events are ignored and
unreadable bodies refused."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from core.api.parsers import MalformedJSONError
from integrations.flutterwave.webhooks import flutterwave_transfer_webhook_parse

REFERENCE = "po_20250101_0123456789abcdef0123"


def transfer_completed(**data: Any) -> dict[str, Any]:
    return {
        "event": "transfer.completed",
        "event.type": "Transfer",
        "data": {
            "id": 33286,
            "account_number": "0123456789",
            "bank_name": "GUARANTY TRUST BANK",
            "bank_code": "058",
            "fullname": "ADEYEMI TUNDE",
            "created_at": "2025-01-01T16:39:17.000Z",
            "currency": "NGN",
            "debit_currency": "NGN",
            "amount": 30020,
            "fee": 26.875,
            "status": "FAILED",
            "reference": REFERENCE,
            "meta": None,
            "narration": "Invoice",
            "approver": None,
            "complete_message": "DISBURSE FAILED: Insufficient funds",
            "requires_approval": 0,
            "is_approved": 1,
            **data,
        },
    }


def parse(payload: Any):  # type: ignore[no-untyped-def]
    return flutterwave_transfer_webhook_parse(json.dumps(payload).encode())


def test_a_transfer_event_is_read() -> None:
    event = parse(transfer_completed())
    assert event is not None
    assert event.reference == REFERENCE
    assert event.provider_reference == "33286"
    assert event.status == "FAILED"
    assert event.message == "DISBURSE FAILED: Insufficient funds"


def test_the_status_is_upper_cased() -> None:
    assert parse(transfer_completed(status="successful")).status == "SUCCESSFUL"


def test_other_events_are_ignored() -> None:
    assert parse({"event": "charge.completed", "data": {"id": 1, "tx_ref": "x"}}) is None


def test_a_transfer_event_without_a_reference_is_ignored() -> None:
    assert parse(transfer_completed(reference=None)) is None


@pytest.mark.parametrize(
    "raw",
    [b"not json", b"[1, 2]", b'{"data": {}}', b'{"event": "transfer.completed", "data": 3}'],
)
def test_unreadable_bodies_are_refused(raw: bytes) -> None:
    with pytest.raises(MalformedJSONError):
        flutterwave_transfer_webhook_parse(raw)


def test_the_amount_is_read_exactly_never_through_a_float() -> None:
    raw = json.dumps(transfer_completed()).replace('"amount": 30020', '"amount": 1500.10')
    event = flutterwave_transfer_webhook_parse(raw.encode())
    assert event is not None
    assert event.amount == Decimal("1500.10")
    assert isinstance(event.amount, Decimal)
    assert event.currency == "NGN"


@pytest.mark.parametrize("amount", ["1500.105", "-5", "0", '"abc"', "null"])
def test_an_amount_that_is_no_two_place_naira_amount_is_left_out(amount: str) -> None:
    raw = json.dumps(transfer_completed()).replace('"amount": 30020', f'"amount": {amount}')
    event = flutterwave_transfer_webhook_parse(raw.encode())
    assert event is not None
    assert event.amount is None
