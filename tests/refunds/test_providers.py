"""Refund providers: the sandbox's magic amounts and the Paystack adapter against Paystack's
documented answers (``POST /refund``, ``GET /refund/:id``, ``GET /refund``)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
import requests
import responses

from merchants.models import Merchant, Mode
from refunds.models import RefundStatus
from refunds.providers.base import RefundOutcome, RefundProvider, RefundRequest
from refunds.providers.paystack import PaystackRefundProvider
from refunds.providers.registry import refund_provider_get, refund_provider_name
from refunds.providers.sandbox import SandboxRefundProvider
from refunds.services import refund_create, refund_send
from settlements.platform_ledger import platform_balances
from tests.collections_app.helpers import PAYSTACK_BASE_URL, PAYSTACK_SECRET
from tests.refunds.factories import paid_collection

REQUEST = RefundRequest(
    refund_id="rf_20261127_00aa11bb22cc33dd44ee",
    transaction_reference="TXN_20261127_ABC",
    gateway_reference="1004723697",
    amount=Decimal("100.00"),
    currency="NGN",
    reason="Item out of stock",
)

# Paystack's documented answer to POST /refund (trimmed of the transaction object's detail).
PAYSTACK_REFUND_QUEUED: dict[str, Any] = {
    "status": True,
    "message": "Refund has been queued for processing",
    "data": {
        "transaction": {"id": 1004723697, "reference": "TXN_20261127_ABC", "amount": 10000},
        "integration": 412829,
        "deducted_amount": 0,
        "channel": None,
        "merchant_note": "rf_20261127_00aa11bb22cc33dd44ee: Item out of stock",
        "customer_note": "Item out of stock",
        "status": "pending",
        "refunded_by": "test@me.com",
        "expected_at": "2021-12-16T09:21:17.016Z",
        "currency": "NGN",
        "domain": "live",
        "amount": 10000,
        "fully_deducted": False,
        "id": 3018284,
        "createdAt": "2021-12-07T09:21:17.122Z",
        "updatedAt": "2021-12-07T09:21:17.122Z",
    },
}


def fetched(status: str, refund_id: int = 3018284) -> dict[str, Any]:
    return {
        "status": True,
        "message": "Refund retrieved",
        "data": {**PAYSTACK_REFUND_QUEUED["data"], "id": refund_id, "status": status},
    }


@pytest.fixture
def provider() -> PaystackRefundProvider:
    return PaystackRefundProvider(base_url=PAYSTACK_BASE_URL, secret_key=PAYSTACK_SECRET)


# --- Sandbox -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "sent", "requeried"),
    [
        ("100.00", RefundOutcome.PROCESSED, RefundOutcome.PROCESSED),
        ("100.13", RefundOutcome.FAILED, RefundOutcome.FAILED),
        ("100.14", RefundOutcome.PENDING, RefundOutcome.FAILED),
        ("100.15", RefundOutcome.PENDING, RefundOutcome.PROCESSED),
    ],
)
def test_sandbox_magic_amounts(amount: str, sent: str, requeried: str) -> None:
    sandbox = SandboxRefundProvider()
    request = RefundRequest(**{**REQUEST.__dict__, "amount": Decimal(amount)})

    first = sandbox.send(request)
    later = sandbox.fetch(request, provider_reference=first.provider_reference or "x")

    assert first.outcome == sent
    assert later.outcome == requeried
    assert first.raw and first.raw[0].operation == "sandbox.refund_create"


def test_sandbox_find_never_finds() -> None:
    assert SandboxRefundProvider().find(REQUEST).outcome == RefundOutcome.NOT_FOUND


def test_registry_picks_sandbox_in_test_and_paystack_in_live() -> None:
    assert refund_provider_name(Mode.TEST) == "sandbox"
    assert refund_provider_name(Mode.LIVE) == "paystack"
    assert isinstance(refund_provider_get("sandbox"), RefundProvider)
    assert isinstance(refund_provider_get("paystack"), RefundProvider)


# --- Paystack ----------------------------------------------------------------------------------


@responses.activate
def test_paystack_send_posts_the_documented_body(provider: PaystackRefundProvider) -> None:
    responses.post(f"{PAYSTACK_BASE_URL}/refund", json=PAYSTACK_REFUND_QUEUED)

    result = provider.send(REQUEST)

    assert result.outcome == RefundOutcome.PENDING
    assert result.provider_reference == "3018284"
    sent = json.loads(responses.calls[0].request.body)
    assert sent == {
        "transaction": "TXN_20261127_ABC",
        "amount": 10000,
        "currency": "NGN",
        "merchant_note": "rf_20261127_00aa11bb22cc33dd44ee: Item out of stock",
        "customer_note": "Item out of stock",
    }
    assert responses.calls[0].request.headers["Authorization"] == f"Bearer {PAYSTACK_SECRET}"
    assert PAYSTACK_SECRET not in json.dumps([exchange.as_dict() for exchange in result.raw])


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        ("processed", RefundOutcome.PROCESSED),
        ("failed", RefundOutcome.FAILED),
        ("pending", RefundOutcome.PENDING),
        ("processing", RefundOutcome.PENDING),
        ("needs-attention", RefundOutcome.PENDING),
        ("something-new", RefundOutcome.UNKNOWN),
    ],
)
@responses.activate
def test_paystack_fetch_maps_statuses(
    provider: PaystackRefundProvider, status: str, outcome: str
) -> None:
    responses.get(f"{PAYSTACK_BASE_URL}/refund/3018284", json=fetched(status))

    result = provider.fetch(REQUEST, provider_reference="3018284")

    assert result.outcome == outcome


@responses.activate
def test_paystack_send_timeout_is_unknown(provider: PaystackRefundProvider) -> None:
    responses.post(f"{PAYSTACK_BASE_URL}/refund", body=requests.ReadTimeout("read timed out"))

    result = provider.send(REQUEST)

    assert result.outcome == RefundOutcome.UNKNOWN
    assert result.provider_reference == ""


@responses.activate
def test_paystack_send_connect_failure_is_not_sent(provider: PaystackRefundProvider) -> None:
    responses.post(f"{PAYSTACK_BASE_URL}/refund", body=requests.ConnectTimeout("no route"))

    assert provider.send(REQUEST).outcome == RefundOutcome.NOT_SENT


@responses.activate
def test_paystack_send_400_is_failed_with_its_message(provider: PaystackRefundProvider) -> None:
    responses.post(
        f"{PAYSTACK_BASE_URL}/refund",
        status=400,
        json={"status": False, "message": "Transaction has been fully reversed"},
    )

    result = provider.send(REQUEST)

    assert result.outcome == RefundOutcome.FAILED
    assert result.message == "Transaction has been fully reversed"


@responses.activate
def test_paystack_send_500_is_unknown(provider: PaystackRefundProvider) -> None:
    responses.post(f"{PAYSTACK_BASE_URL}/refund", status=502, body="Bad gateway")

    assert provider.send(REQUEST).outcome == RefundOutcome.UNKNOWN


@responses.activate
def test_paystack_find_matches_our_refund_id_in_the_merchant_note(
    provider: PaystackRefundProvider,
) -> None:
    other = {**PAYSTACK_REFUND_QUEUED["data"], "id": 1, "merchant_note": "rf_other"}
    ours = {**PAYSTACK_REFUND_QUEUED["data"], "status": "processed"}
    responses.get(
        f"{PAYSTACK_BASE_URL}/refund",
        json={"status": True, "message": "Refunds retrieved", "data": [other, ours]},
    )

    result = provider.find(REQUEST)

    assert result.outcome == RefundOutcome.PROCESSED
    assert result.provider_reference == "3018284"
    assert "transaction=1004723697" in responses.calls[0].request.url


@responses.activate
def test_paystack_find_without_ours_is_not_found(provider: PaystackRefundProvider) -> None:
    responses.get(
        f"{PAYSTACK_BASE_URL}/refund",
        json={"status": True, "message": "Refunds retrieved", "data": []},
    )

    assert provider.find(REQUEST).outcome == RefundOutcome.NOT_FOUND


# --- Paystack through the services (live mode) -------------------------------------------------


@pytest.mark.django_db
def test_live_refund_timeout_stays_pending_then_found_and_processed(
    merchant: Merchant, paystack: responses.RequestsMock
) -> None:
    collection = paid_collection(merchant=merchant, mode=Mode.LIVE)
    refund = refund_create(
        merchant=merchant,
        mode=Mode.LIVE,
        transaction_reference=collection.reference,
        amount=Decimal("100.00"),
        reason="",
        idempotency_key="k",
        initiated_by="test",
    ).refund
    paystack.post(f"{PAYSTACK_BASE_URL}/refund", body=requests.ReadTimeout("read timed out"))

    pending = refund_send(refund_id=refund.pk)

    assert pending is not None and pending.status == RefundStatus.PENDING
    assert pending.provider_reference == ""
    assert pending.provider_responses[-1]["operation"] == "paystack.refund_create"
    listed = {
        **PAYSTACK_REFUND_QUEUED["data"],
        "merchant_note": refund.refund_id,
        "status": "processed",
    }
    paystack.get(
        f"{PAYSTACK_BASE_URL}/refund",
        json={"status": True, "message": "Refunds retrieved", "data": [listed]},
    )
    type(refund).objects.filter(pk=refund.pk).update(next_check_at=None)

    processed = refund_send(refund_id=refund.pk)

    assert processed is not None and processed.status == RefundStatus.PROCESSED
    assert processed.provider_reference == "3018284"
    assert [call.request.method for call in paystack.calls] == ["POST", "GET"]
    assert platform_balances(mode=Mode.LIVE).equation_holds


@pytest.mark.django_db
def test_live_refund_refused_by_paystack_fails_and_money_goes_back(
    merchant: Merchant, paystack: responses.RequestsMock
) -> None:
    collection = paid_collection(merchant=merchant, mode=Mode.LIVE)
    refund = refund_create(
        merchant=merchant,
        mode=Mode.LIVE,
        transaction_reference=collection.reference,
        amount=Decimal("100.00"),
        reason="",
        idempotency_key="k",
        initiated_by="test",
    ).refund
    paystack.post(
        f"{PAYSTACK_BASE_URL}/refund",
        status=400,
        json={"status": False, "message": "Transaction has been fully reversed"},
    )

    failed = refund_send(refund_id=refund.pk)

    assert failed is not None and failed.status == RefundStatus.FAILED
    assert failed.failure_reason == "Transaction has been fully reversed"
    collection.refresh_from_db()
    assert collection.amount_refunded == Decimal("0.00")
    assert platform_balances(mode=Mode.LIVE).equation_holds


@pytest.mark.django_db
def test_live_pending_refund_is_requeried_by_its_paystack_id(
    merchant: Merchant, paystack: responses.RequestsMock
) -> None:
    collection = paid_collection(merchant=merchant, mode=Mode.LIVE)
    refund = refund_create(
        merchant=merchant,
        mode=Mode.LIVE,
        transaction_reference=collection.reference,
        amount=Decimal("100.00"),
        reason="",
        idempotency_key="k",
        initiated_by="test",
    ).refund
    paystack.post(f"{PAYSTACK_BASE_URL}/refund", json=PAYSTACK_REFUND_QUEUED)
    paystack.get(f"{PAYSTACK_BASE_URL}/refund/3018284", json=fetched("processed"))

    assert refund_send(refund_id=refund.pk).status == RefundStatus.PENDING  # type: ignore[union-attr]
    processed = refund_send(refund_id=refund.pk)

    assert processed is not None and processed.status == RefundStatus.PROCESSED


# --- Paystack's refund webhooks: hints, applied through the services --------------------------


def signed_webhook(client, payload: dict[str, Any]):  # type: ignore[no-untyped-def]
    from tests.collections_app.helpers import hmac_sha512_hex

    body = json.dumps(payload).encode()
    return client.generic(
        "POST",
        "/api/v1/webhooks/paystack",
        body,
        content_type="application/json",
        HTTP_X_PAYSTACK_SIGNATURE=hmac_sha512_hex(body, PAYSTACK_SECRET),
    )


@pytest.mark.django_db
def test_paystack_refund_webhook_asks_about_the_pending_refund(
    api_client, merchant: Merchant, paystack: responses.RequestsMock
) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant, mode=Mode.LIVE)
    refund = refund_create(
        merchant=merchant,
        mode=Mode.LIVE,
        transaction_reference=collection.reference,
        amount=Decimal("100.00"),
        reason="",
        idempotency_key="k",
        initiated_by="test",
    ).refund
    paystack.post(f"{PAYSTACK_BASE_URL}/refund", json=PAYSTACK_REFUND_QUEUED)
    refund_send(refund_id=refund.pk)
    paystack.get(f"{PAYSTACK_BASE_URL}/refund/3018284", json=fetched("processed"))
    event = {
        "event": "refund.processed",
        "data": {
            "status": "processed",
            "transaction_reference": collection.reference,
            "amount": "10000",
            "currency": "NGN",
            "domain": "live",
        },
    }

    response = signed_webhook(api_client, event)
    again = signed_webhook(api_client, event)

    assert response.status_code == 200
    assert response.json()["message"] == "Refund event applied: 1 refund(s) checked"
    refund.refresh_from_db()
    assert refund.status == RefundStatus.PROCESSED
    # Redelivered: nothing pending any more, nothing asked, nothing changed.
    assert again.status_code == 200
    assert again.json()["message"].startswith("Refund event ignored")
    assert [call.request.method for call in paystack.calls] == ["POST", "GET"]


@pytest.mark.django_db
def test_paystack_refund_webhook_is_only_a_hint(
    api_client, merchant: Merchant, paystack: responses.RequestsMock
) -> None:  # type: ignore[no-untyped-def]
    collection = paid_collection(merchant=merchant, mode=Mode.LIVE)
    refund = refund_create(
        merchant=merchant,
        mode=Mode.LIVE,
        transaction_reference=collection.reference,
        amount=Decimal("100.00"),
        reason="",
        idempotency_key="k",
        initiated_by="test",
    ).refund
    paystack.post(f"{PAYSTACK_BASE_URL}/refund", json=PAYSTACK_REFUND_QUEUED)
    refund_send(refund_id=refund.pk)
    paystack.get(f"{PAYSTACK_BASE_URL}/refund/3018284", json=fetched("processing"))

    response = signed_webhook(
        api_client,
        {"event": "refund.failed", "data": {"transaction_reference": collection.reference}},
    )

    assert response.status_code == 200
    refund.refresh_from_db()
    assert refund.status == RefundStatus.PENDING  # Paystack itself still says processing


@pytest.mark.django_db
def test_paystack_refund_webhook_with_a_bad_signature_is_refused(api_client) -> None:  # type: ignore[no-untyped-def]
    response = api_client.generic(
        "POST",
        "/api/v1/webhooks/paystack",
        b'{"event": "refund.processed", "data": {}}',
        content_type="application/json",
        HTTP_X_PAYSTACK_SIGNATURE="0" * 128,
    )

    assert response.status_code == 401
