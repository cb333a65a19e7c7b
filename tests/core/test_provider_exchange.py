"""A provider's raw answer is kept for audit exactly enough to read, and always storable: a NUL
anywhere in it (PostgreSQL's jsonb refuses ``\\u0000``) must not make the payout or collection
unrecordable."""

from __future__ import annotations

import pytest

from core.provider_exchange import ProviderExchange
from merchants.models import Mode
from tests.payouts.factories import PayoutFactory
from wallets.selectors import wallet_get

HOSTILE_BODY = {
    "status": True,
    "message": "Transfer\x00queued",
    "data": {"reference\x00": ["a\x00b", {"nested": "\x00"}], "amount": 100000},
}


def test_as_dict_replaces_every_nul_in_keys_and_values() -> None:
    recorded = ProviderExchange(
        operation="paystack.initiate_transfer", http_status=200, body=HOSTILE_BODY, error="x\x00"
    ).as_dict()
    assert "\x00" not in repr(recorded)
    assert recorded["body"]["message"] == "Transfer\ufffdqueued"
    assert recorded["body"]["data"]["reference\ufffd"] == ["a\ufffdb", {"nested": "\ufffd"}]
    assert recorded["body"]["data"]["amount"] == 100000
    assert recorded["error"] == "x\ufffd"


@pytest.mark.django_db
def test_a_payout_keeps_a_raw_answer_that_held_nul_bytes(merchant_account) -> None:
    payout = PayoutFactory(wallet=wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST))
    exchange = ProviderExchange(operation="paystack.verify", http_status=200, body=HOSTILE_BODY)
    payout.provider_responses = [exchange.as_dict()]
    payout.save(update_fields=["provider_responses"])
    payout.refresh_from_db()
    assert payout.provider_responses[0]["body"]["message"] == "Transfer\ufffdqueued"
