"""Paystack's transfer webhooks (``transfer.success``, ``transfer.failed``,
``transfer.reversed``), signed and posted to the one Paystack route, applied to live payouts
through the settle and return paths: once per event, in any order."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import responses

from merchants.models import Mode
from payouts.models import (
    Payout,
    PayoutStatus,
    ProviderTransferEventRecord,
    ProviderTransferEventResult,
)
from payouts.services import payout_dispatch
from payouts.services.provider_events import (
    ProviderTransferEvent,
    ProviderTransferEventKind,
    payout_for_provider_reference,
    provider_transfer_event_apply,
)
from tests.collections_app.helpers import hmac_sha512_hex
from tests.payouts.conftest import PAYSTACK_BASE, PAYSTACK_SECRET
from tests.payouts.helpers import assert_wallet_balanced, reload
from wallets.models import LedgerEntry, LedgerEntryType

pytestmark = pytest.mark.django_db

WEBHOOK_URL = "/api/v1/webhooks/paystack"
SESSION_ID = "000013231127090000123456789012"


def paystack_transfer_event(
    event: str, payout: Payout, *, transfer_id: int = 37272792, **data: Any
) -> dict[str, Any]:
    """A Paystack transfer event shaped like the documented ``transfer.success`` payload."""
    status = {"transfer.success": "success", "transfer.failed": "failed"}.get(event, "reversed")
    body: dict[str, Any] = {
        "amount": int(payout.amount * 100),
        "currency": "NGN",
        "domain": "live",
        "failures": None,
        "id": transfer_id,
        "integration": {"id": 463433, "is_live": True, "business_name": "Merchant Payouts"},
        "reason": payout.narration or "",
        "reference": payout.internal_reference,
        "source": "balance",
        "source_details": None,
        "status": status,
        "titan_code": None,
        "transfer_code": "TRF_live_1",
        "transferred_at": None,
        "recipient": {
            "active": True,
            "currency": "NGN",
            "domain": "live",
            "recipient_code": "RCP_live_1",
            "type": "nuban",
            "details": {
                "account_number": payout.account_number,
                "account_name": None,
                "bank_code": payout.bank_code,
                "bank_name": payout.bank_name,
            },
        },
        "session": {"provider": "nip", "id": SESSION_ID if status == "success" else None},
        "created_at": "2026-11-27T09:00:00.000Z",
        "updated_at": "2026-11-27T09:00:05.000Z",
    }
    body.update(data)
    return {"event": event, "data": body}


def post_signed(api_client, payload: dict[str, Any], *, secret: str = PAYSTACK_SECRET):  # type: ignore[no-untyped-def]
    body = json.dumps(payload).encode()
    return api_client.generic(
        "POST",
        WEBHOOK_URL,
        body,
        content_type="application/json",
        HTTP_X_PAYSTACK_SIGNATURE=hmac_sha512_hex(body, secret),
    )


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def dispatched(rsps, live_mode, create_payout) -> Payout:
    """A live payout Paystack accepted and still holds as pending: ``dispatched``."""
    payout = create_payout(mode=Mode.LIVE, amount=Decimal("2000.00")).payout
    rsps.post(
        f"{PAYSTACK_BASE}/transferrecipient",
        json={"status": True, "data": {"recipient_code": "RCP_live_1"}},
        status=201,
    )
    rsps.post(
        f"{PAYSTACK_BASE}/transfer",
        json={
            "status": True,
            "message": "Transfer has been queued",
            "data": {
                "reference": payout.internal_reference,
                "status": "pending",
                "transfer_code": "TRF_live_1",
            },
        },
    )
    payout = payout_dispatch(payout_id=payout.pk)
    assert payout.status == PayoutStatus.DISPATCHED
    return payout


def ledger(payout: Payout, entry_type: str) -> list[LedgerEntry]:
    return list(LedgerEntry.objects.filter(payout_id=payout.pk, entry_type=entry_type))


def results(payout: Payout) -> list[str]:
    return list(
        ProviderTransferEventRecord.objects.filter(payout=payout)
        .order_by("id")
        .values_list("result", flat=True)
    )


def test_transfer_success_applied_twice_settles_once(api_client, dispatched, live_mode) -> None:
    payload = paystack_transfer_event("transfer.success", dispatched)
    first = post_signed(api_client, payload)
    second = post_signed(api_client, payload)

    assert (first.status_code, first.json()["message"]) == (200, "Transfer event applied")
    assert (second.status_code, second.json()["message"]) == (200, "Transfer event duplicate")
    payout = reload(dispatched)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.nip_session_id == SESSION_ID
    assert payout.provider_responses[-1]["operation"] == "paystack.webhook.transfer.success"
    assert len(ledger(payout, LedgerEntryType.PAYOUT_DEBIT)) == 1
    assert results(payout) == [ProviderTransferEventResult.APPLIED]
    live_mode.refresh_from_db()
    assert live_mode.reserved_balance == Decimal("0.00")
    assert_wallet_balanced(live_mode)


def test_transfer_failed_releases_the_reservation(api_client, dispatched, live_mode) -> None:
    response = post_signed(api_client, paystack_transfer_event("transfer.failed", dispatched))

    assert response.status_code == 200
    payout = reload(dispatched)
    assert payout.status == PayoutStatus.FAILED
    assert payout.error_message == "Transfer failed"
    assert len(ledger(payout, LedgerEntryType.PAYOUT_REVERSAL)) == 1
    live_mode.refresh_from_db()
    assert live_mode.available_balance == Decimal("50000.00")
    assert_wallet_balanced(live_mode)


def test_reversal_after_success_is_a_return_never_a_second_settlement(
    api_client, dispatched, live_mode
) -> None:
    post_signed(api_client, paystack_transfer_event("transfer.success", dispatched))
    reversed_ = paystack_transfer_event("transfer.reversed", dispatched)
    post_signed(api_client, reversed_)
    post_signed(api_client, reversed_)
    # A failed event after the return finds it returned already.
    post_signed(api_client, paystack_transfer_event("transfer.failed", dispatched))

    payout = reload(dispatched)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.returned_at is not None
    assert len(ledger(payout, LedgerEntryType.PAYOUT_DEBIT)) == 1
    assert len(ledger(payout, LedgerEntryType.PAYOUT_RETURN)) == 1
    assert ledger(payout, LedgerEntryType.PAYOUT_REVERSAL) == []
    assert results(payout) == ["applied", "applied", "stale"]
    assert_wallet_balanced(live_mode)


def test_success_after_failure_is_a_conflict_for_finance(
    api_client, dispatched, live_mode, caplog
) -> None:
    post_signed(api_client, paystack_transfer_event("transfer.failed", dispatched))
    with caplog.at_level(logging.ERROR, logger="payouts.services.provider_events"):
        response = post_signed(api_client, paystack_transfer_event("transfer.success", dispatched))

    assert (response.status_code, response.json()["message"]) == (200, "Transfer event conflict")
    payout = reload(dispatched)
    assert payout.status == PayoutStatus.FAILED
    assert ledger(payout, LedgerEntryType.PAYOUT_DEBIT) == []
    assert results(payout) == ["applied", "conflict"]
    assert "contradicts our records" in caplog.text
    assert_wallet_balanced(live_mode)


def test_success_after_success_by_another_event_is_stale(api_client, dispatched) -> None:
    post_signed(api_client, paystack_transfer_event("transfer.success", dispatched))
    again = paystack_transfer_event("transfer.success", dispatched, transfer_id=99)
    assert post_signed(api_client, again).json()["message"] == "Transfer event stale"
    assert len(ledger(dispatched, LedgerEntryType.PAYOUT_DEBIT)) == 1


def test_unknown_reference_is_acknowledged_logged_and_kept(api_client, dispatched, caplog) -> None:
    payload = paystack_transfer_event("transfer.success", dispatched, reference="po_not_ours")
    with caplog.at_level(logging.WARNING, logger="payouts.services.provider_events"):
        response = post_signed(api_client, payload)

    assert (response.status_code, response.json()["message"]) == (
        200,
        "Transfer event unknown_reference",
    )
    [record] = ProviderTransferEventRecord.objects.all()
    assert (record.reference, record.result, record.payout_id) == (
        "po_not_ours",
        "unknown_reference",
        None,
    )
    assert "unknown reference" in caplog.text
    assert reload(dispatched).status == PayoutStatus.DISPATCHED


def test_an_amount_that_differs_moves_nothing(api_client, dispatched, live_mode) -> None:
    payload = paystack_transfer_event("transfer.success", dispatched, amount=100)
    assert post_signed(api_client, payload).json()["message"] == "Transfer event conflict"
    assert reload(dispatched).status == PayoutStatus.DISPATCHED
    assert_wallet_balanced(live_mode)


def test_a_test_mode_payout_is_never_touched_by_a_live_event(
    api_client, live_mode, funded_wallet, create_payout
) -> None:
    test_payout = create_payout().payout  # the sandbox's, in test mode
    payload = paystack_transfer_event("transfer.failed", test_payout)

    assert post_signed(api_client, payload).json()["message"] == (
        "Transfer event unknown_reference"
    )
    assert reload(test_payout).status == PayoutStatus.RESERVED


def test_an_event_of_another_mode_never_touches_the_payout(dispatched) -> None:
    event = ProviderTransferEvent(
        provider="paystack",
        event_id="transfer.failed:1",
        reference=dispatched.internal_reference,
        kind=ProviderTransferEventKind.FAILED,
        mode=Mode.TEST,
    )
    assert provider_transfer_event_apply(event) == "unknown_reference"
    assert reload(dispatched).status == PayoutStatus.DISPATCHED


def test_a_bad_signature_is_refused_and_nothing_is_kept(api_client, dispatched) -> None:
    payload = paystack_transfer_event("transfer.success", dispatched)
    response = post_signed(api_client, payload, secret="not-the-secret")

    assert response.status_code == 401
    assert ProviderTransferEventRecord.objects.count() == 0
    assert reload(dispatched).status == PayoutStatus.DISPATCHED


def test_the_reference_maps_to_the_payout_of_that_provider_only(dispatched) -> None:
    reference = dispatched.internal_reference
    assert payout_for_provider_reference("paystack", reference) == dispatched
    assert payout_for_provider_reference("sandbox", reference) is None
    assert payout_for_provider_reference("paystack", "") is None


def test_a_processing_payout_is_left_to_its_dispatch(live_mode, create_payout) -> None:
    payout = create_payout(mode=Mode.LIVE, amount=Decimal("2000.00")).payout
    Payout.objects.filter(pk=payout.pk).update(status=PayoutStatus.PROCESSING)
    event = ProviderTransferEvent(
        provider="paystack",
        event_id="transfer.success:5",
        reference=payout.internal_reference,
        kind=ProviderTransferEventKind.SUCCESS,
    )
    assert provider_transfer_event_apply(event) == "stale"
    assert reload(payout).status == PayoutStatus.PROCESSING
