"""Live mode through Paystack (mocked with ``responses``): initialize returns the provider's
``authorization_url``; the signed webhook triggers a verify call, then ``transaction_confirm``."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import responses
from django.conf import settings as django_settings
from rest_framework.test import APIClient

from collections_app.models import (
    CollectionTransaction,
    ConfirmationSource,
    PaymentStatus,
    TransactionAttempt,
)
from collections_app.providers.base import (
    CheckoutRequest,
    ProviderRefusedError,
    ProviderUnavailableError,
    VerifiedStatus,
)
from collections_app.providers.paystack import PaystackCollectionProvider
from integrations.paystack import paystack_signature_valid
from merchants.models import Merchant, Mode
from tests.collections_app.conftest import initialize_payload
from tests.collections_app.factories import CollectionTransactionFactory
from tests.collections_app.helpers import (
    PAYSTACK_BASE_URL,
    PAYSTACK_SECRET,
    hmac_sha512_hex,
    paystack_event_body,
    paystack_initialize_answer,
    paystack_mock_initialize,
    paystack_verify_answer,
)
from tests.payment_items.factories import PaymentItemFactory
from webhooks.models import Event

pytestmark = pytest.mark.django_db

INITIALIZE = f"{PAYSTACK_BASE_URL}/transaction/initialize"
WEBHOOK_URL = "/api/v1/webhooks/paystack"


def verify_url(reference: str) -> str:
    return f"{PAYSTACK_BASE_URL}/transaction/verify/{reference}"


def checkout_request(**overrides: Any) -> CheckoutRequest:
    values: dict[str, Any] = {
        "reference": "TXN_ABC",
        "email": "ada.obi@example.com",
        "amount": Decimal("7205.00"),
        "currency": "NGN",
        "channel": "card",
        "return_url": "http://127.0.0.1:8000/checkout/TXN_ABC/return",
        "metadata": {"client_reference": "order-1"},
    }
    values.update(overrides)
    return CheckoutRequest(**values)


@pytest.fixture
def live_transaction(merchant: Merchant) -> CollectionTransaction:
    return CollectionTransactionFactory(
        merchant=merchant,
        mode=Mode.LIVE,
        reference="TXN_LIVE0000000000000001",
        authorization_url="https://checkout.paystack.com/txn_live",
        callback_url="https://merchant.example.com/payments/callback",
    )


def signed_post(client: APIClient, body: bytes, *, secret: str = PAYSTACK_SECRET):  # type: ignore[no-untyped-def]
    return client.generic(
        "POST",
        WEBHOOK_URL,
        body,
        content_type="application/json",
        HTTP_X_PAYSTACK_SIGNATURE=hmac_sha512_hex(body, secret),
    )


# --- adapter -----------------------------------------------------------------------------------


def test_initialize_sends_the_total_in_kobo_with_our_reference(paystack) -> None:  # type: ignore[no-untyped-def]
    paystack.add(responses.POST, INITIALIZE, json=paystack_initialize_answer("TXN_ABC"))
    session = PaystackCollectionProvider().initialize(checkout_request(channel="bank-transfer"))
    assert session.authorization_url == "https://checkout.paystack.com/txn_abc"
    assert session.access_code == "access_txn_abc"
    assert session.reference == "TXN_ABC"
    call = paystack.calls[0]
    assert call.request.headers["Authorization"] == f"Bearer {PAYSTACK_SECRET}"
    assert json.loads(call.request.body) == {
        "email": "ada.obi@example.com",
        "amount": 720500,
        "currency": "NGN",
        "reference": "TXN_ABC",
        "callback_url": "http://127.0.0.1:8000/checkout/TXN_ABC/return",
        "channels": ["bank_transfer"],
        "metadata": {"client_reference": "order-1"},
    }
    assert session.raw[0].http_status == 200
    assert PAYSTACK_SECRET not in json.dumps(session.raw[0].as_dict())


@pytest.mark.parametrize(
    ("mock_kwargs", "error"),
    [
        ({"status": 500, "json": {"status": False, "message": "oops"}}, ProviderUnavailableError),
        (
            {"status": 401, "json": {"status": False, "message": "Invalid key"}},
            ProviderUnavailableError,
        ),
        ({"body": requests.ConnectionError("down")}, ProviderUnavailableError),
        ({"status": 200, "json": {"status": True, "data": {}}}, ProviderUnavailableError),
        (
            {"status": 400, "json": {"status": False, "message": "Invalid Email Address"}},
            ProviderRefusedError,
        ),
    ],
)
def test_initialize_failures(paystack, mock_kwargs: dict[str, Any], error: type) -> None:  # type: ignore[no-untyped-def]
    paystack.add(responses.POST, INITIALIZE, **mock_kwargs)
    with pytest.raises(error):
        PaystackCollectionProvider().initialize(checkout_request())


def test_without_a_secret_key_nothing_is_sent(paystack, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYSTACK_SECRET_KEY = ""
    with pytest.raises(ProviderUnavailableError, match="not configured"):
        PaystackCollectionProvider().initialize(checkout_request())
    assert len(paystack.calls) == 0


@pytest.mark.parametrize(
    ("provider_status", "expected"),
    [
        ("success", VerifiedStatus.PAID),
        ("failed", VerifiedStatus.FAILED),
        ("reversed", VerifiedStatus.FAILED),
        ("abandoned", VerifiedStatus.PENDING),
        ("ongoing", VerifiedStatus.PENDING),
    ],
)
def test_verify_maps_the_provider_status(paystack, provider_status: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    paystack.add(
        responses.GET,
        verify_url("TXN_ABC"),
        json=paystack_verify_answer("TXN_ABC", status=provider_status),
    )
    verified = PaystackCollectionProvider().verify(reference="TXN_ABC")
    assert verified.status == expected
    assert verified.amount_paid == Decimal("7205.00")
    assert verified.card == {"brand": "visa", "last4": "4081"}
    assert verified.gateway_reference == "4099260516"


def test_verify_of_an_unknown_reference_is_still_pending(paystack) -> None:  # type: ignore[no-untyped-def]
    paystack.add(
        responses.GET,
        verify_url("TXN_ABC"),
        status=400,
        json={"status": False, "message": "Transaction reference not found"},
    )
    assert PaystackCollectionProvider().verify(reference="TXN_ABC").status == VerifiedStatus.PENDING


@pytest.mark.parametrize(
    "mock_kwargs",
    [
        {"status": 502, "body": "Bad gateway"},
        {"body": requests.ReadTimeout("slow")},
        {"json": paystack_verify_answer("TXN_OTHER")},
    ],
)
def test_verify_failures_are_unavailable(paystack, mock_kwargs: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    paystack.add(responses.GET, verify_url("TXN_ABC"), **mock_kwargs)
    with pytest.raises(ProviderUnavailableError):
        PaystackCollectionProvider().verify(reference="TXN_ABC")


def test_signature_check_matches_an_independent_hmac() -> None:
    body = paystack_event_body("TXN_1")
    good = hmac_sha512_hex(body, PAYSTACK_SECRET)
    assert paystack_signature_valid(body, good, secret_key=PAYSTACK_SECRET)
    assert paystack_signature_valid(body, good.upper(), secret_key=PAYSTACK_SECRET)
    assert not paystack_signature_valid(body + b" ", good, secret_key=PAYSTACK_SECRET)
    assert not paystack_signature_valid(
        body, hmac_sha512_hex(body, "x"), secret_key=PAYSTACK_SECRET
    )
    assert not paystack_signature_valid(body, "", secret_key=PAYSTACK_SECRET)
    assert not paystack_signature_valid(body, good, secret_key="")


# --- live initialize ---------------------------------------------------------------------------


def test_live_initialize_returns_the_providers_authorization_url(
    live_client: APIClient, merchant: Merchant, fee_schedule, paystack
) -> None:  # type: ignore[no-untyped-def]
    paystack_mock_initialize(paystack)
    item = PaymentItemFactory(merchant=merchant, mode=Mode.LIVE, amount=Decimal("7000.00"))
    response = live_client.post(
        "/api/v1/transactions/in/initialize", initialize_payload(item), format="json"
    )
    assert response.status_code == 200
    data = response.json()["data"]
    created = CollectionTransaction.objects.get()
    assert data["authorization_url"] == f"https://checkout.paystack.com/{created.reference.lower()}"
    assert created.authorization_url == data["authorization_url"]
    sent = json.loads(paystack.calls[0].request.body)
    assert sent["reference"] == created.reference
    assert sent["amount"] == 720500
    assert sent["callback_url"] == (
        f"{django_settings.CHECKOUT_BASE_URL}/checkout/{created.reference}/return"
    )
    assert created.provider_responses[0]["operation"] == "paystack.transaction_initialize"
    assert created.virtual_account_number is None


def test_live_bank_transfer_uses_the_providers_page_without_sandbox_account(
    live_client: APIClient, merchant: Merchant, fee_schedule, paystack
) -> None:  # type: ignore[no-untyped-def]
    paystack_mock_initialize(paystack)
    item = PaymentItemFactory(merchant=merchant, mode=Mode.LIVE, amount=Decimal("7000.00"))
    response = live_client.post(
        "/api/v1/transactions/in/initialize",
        initialize_payload(item, channel="bank-transfer"),
        format="json",
    )
    data = response.json()["data"]
    assert data["authorization_url"].startswith("https://checkout.paystack.com/")
    assert "payment_instructions" not in data
    assert json.loads(paystack.calls[0].request.body)["channels"] == ["bank_transfer"]


def test_live_initialize_when_the_provider_is_down_is_503_and_stays_pending_without_checkout(
    live_client: APIClient, merchant: Merchant, fee_schedule, paystack
) -> None:  # type: ignore[no-untyped-def]
    paystack.add(responses.POST, INITIALIZE, status=503, body="unavailable")
    item = PaymentItemFactory(merchant=merchant, mode=Mode.LIVE, amount=Decimal("7000.00"))
    response = live_client.post(
        "/api/v1/transactions/in/initialize", initialize_payload(item), format="json"
    )
    assert response.status_code == 503
    assert response["Retry-After"]
    assert "retry with the same transaction_reference" in response.json()["message"]
    waiting = CollectionTransaction.objects.get()
    assert (waiting.payment_status, waiting.authorization_url) == ("pending", None)
    paystack.replace(responses.POST, INITIALIZE, json=paystack_initialize_answer("TXN_X"))
    retried = live_client.post(
        "/api/v1/transactions/in/initialize", initialize_payload(item), format="json"
    )
    assert retried.status_code == 200
    assert CollectionTransaction.objects.count() == 1


def test_live_initialize_refused_by_the_provider_is_400(
    live_client: APIClient, merchant: Merchant, fee_schedule, paystack
) -> None:  # type: ignore[no-untyped-def]
    paystack.add(
        responses.POST, INITIALIZE, status=400, json={"status": False, "message": "Invalid Email"}
    )
    item = PaymentItemFactory(merchant=merchant, mode=Mode.LIVE, amount=Decimal("7000.00"))
    response = live_client.post(
        "/api/v1/transactions/in/initialize", initialize_payload(item), format="json"
    )
    assert response.status_code == 400
    assert (
        response.json()["message"] == "The payment provider refused the transaction: Invalid Email"
    )


# --- webhook -----------------------------------------------------------------------------------


def test_signed_webhook_verifies_then_confirms(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack
) -> None:  # type: ignore[no-untyped-def]
    reference = live_transaction.reference
    paystack.add(responses.GET, verify_url(reference), json=paystack_verify_answer(reference))
    response = signed_post(api_client, paystack_event_body(reference))
    assert response.status_code == 200
    assert response.json()["data"] == {"reference": reference, "payment_status": "paid"}
    live_transaction.refresh_from_db()
    assert live_transaction.payment_status == PaymentStatus.PAID
    assert live_transaction.amount_paid == Decimal("7205.00")
    assert live_transaction.gateway_used == "paystack"
    assert live_transaction.gateway_reference == "4099260516"
    assert live_transaction.meta_data == {"card": {"brand": "visa", "last4": "4081"}}
    assert live_transaction.provider_responses[-1]["operation"] == "paystack.transaction_verify"
    attempt = TransactionAttempt.objects.get()
    assert (attempt.source, attempt.applied) == (ConfirmationSource.PROVIDER_WEBHOOK, True)
    assert Event.objects.get().event_type == "transaction.paid"
    assert len(paystack.calls) == 1


def test_redelivered_webhook_is_idempotent(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack
) -> None:  # type: ignore[no-untyped-def]
    reference = live_transaction.reference
    paystack.add(responses.GET, verify_url(reference), json=paystack_verify_answer(reference))
    body = paystack_event_body(reference)
    assert signed_post(api_client, body).status_code == 200
    again = signed_post(api_client, body)
    assert again.status_code == 200
    assert again.json()["message"] == "Event already processed"
    assert len(paystack.calls) == 1
    assert TransactionAttempt.objects.count() == 1
    assert Event.objects.count() == 1


def test_failed_charge_is_confirmed_failed(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack
) -> None:  # type: ignore[no-untyped-def]
    reference = live_transaction.reference
    paystack.add(
        responses.GET,
        verify_url(reference),
        json=paystack_verify_answer(reference, status="failed"),
    )
    signed_post(api_client, paystack_event_body(reference, event="charge.failed"))
    live_transaction.refresh_from_db()
    assert live_transaction.payment_status == PaymentStatus.FAILED
    assert Event.objects.get().event_type == "transaction.failed"


@pytest.mark.parametrize("secret", ["wrong-secret", None])
def test_webhook_with_a_bad_or_missing_signature_is_401(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack, secret
) -> None:  # type: ignore[no-untyped-def]
    body = paystack_event_body(live_transaction.reference)
    if secret is None:
        response = api_client.generic("POST", WEBHOOK_URL, body, content_type="application/json")
    else:
        response = signed_post(api_client, body, secret=secret)
    assert response.status_code == 401
    assert response.json()["message"] == "Invalid or missing provider signature"
    assert len(paystack.calls) == 0
    live_transaction.refresh_from_db()
    assert live_transaction.payment_status == PaymentStatus.PENDING


def test_webhook_payload_is_only_a_hint(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack
) -> None:  # type: ignore[no-untyped-def]
    """A signed "charge.success" for a charge Paystack still has open changes nothing."""
    reference = live_transaction.reference
    paystack.add(
        responses.GET,
        verify_url(reference),
        json=paystack_verify_answer(reference, status="ongoing"),
    )
    response = signed_post(api_client, paystack_event_body(reference))
    assert response.json()["data"]["payment_status"] == "pending"
    live_transaction.refresh_from_db()
    assert live_transaction.payment_status == PaymentStatus.PENDING
    assert not Event.objects.exists()


def test_a_different_amount_is_not_applied(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack
) -> None:  # type: ignore[no-untyped-def]
    reference = live_transaction.reference
    paystack.add(
        responses.GET,
        verify_url(reference),
        json=paystack_verify_answer(reference, amount_kobo=100),
    )
    signed_post(api_client, paystack_event_body(reference))
    live_transaction.refresh_from_db()
    assert live_transaction.payment_status == PaymentStatus.PENDING
    attempt = TransactionAttempt.objects.get()
    assert attempt.applied is False
    assert "does not match" in attempt.note


def test_verify_failure_answers_503_so_paystack_retries(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack
) -> None:  # type: ignore[no-untyped-def]
    paystack.add(responses.GET, verify_url(live_transaction.reference), status=500, body="err")
    response = signed_post(api_client, paystack_event_body(live_transaction.reference))
    assert response.status_code == 503
    live_transaction.refresh_from_db()
    assert live_transaction.payment_status == PaymentStatus.PENDING


@pytest.mark.parametrize(
    "body",
    [
        paystack_event_body("TXN_UNKNOWN"),
        paystack_event_body("TXN_X", event="subscription.create"),
        json.dumps({"event": "charge.success", "data": {}}).encode(),
        json.dumps([1, 2]).encode(),
    ],
)
def test_webhook_events_we_do_not_handle_are_acknowledged(
    api_client: APIClient, paystack, body: bytes
) -> None:  # type: ignore[no-untyped-def]
    response = signed_post(api_client, body)
    assert response.status_code == 200
    assert response.json()["message"].startswith("Event ignored")
    assert len(paystack.calls) == 0


def test_webhook_does_not_touch_test_mode_transactions(
    api_client: APIClient, merchant: Merchant, paystack
) -> None:  # type: ignore[no-untyped-def]
    txn = CollectionTransactionFactory(merchant=merchant)
    response = signed_post(api_client, paystack_event_body(txn.reference))
    assert response.json()["message"] == "Event ignored: unknown reference"
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PENDING


def test_malformed_webhook_body_is_400(api_client: APIClient, paystack) -> None:  # type: ignore[no-untyped-def]
    response = signed_post(api_client, b"{not json")
    assert response.status_code == 400


def _refused_untouched(response, live_transaction, paystack, status: int = 400) -> str:  # type: ignore[no-untyped-def]
    body = response.json()
    assert response.status_code == status, body
    assert (body["status"], body["data"], body["statusCode"]) == (False, None, status)
    assert len(paystack.calls) == 0
    live_transaction.refresh_from_db()
    assert live_transaction.payment_status == PaymentStatus.PENDING
    assert not TransactionAttempt.objects.exists()
    return body["message"]


@pytest.mark.parametrize("depth", [33, 2000, 20_000])
def test_a_signed_webhook_nested_too_deep_is_400(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack, depth: int
) -> None:  # type: ignore[no-untyped-def]
    """A signed body of ``[[[[…]]]]`` reached Python's recursion limit: a 500."""
    event = json.loads(paystack_event_body(live_transaction.reference))
    body = json.dumps(event)[:-1] + ', "extra": ' + "[" * depth + "]" * depth + "}"
    message = _refused_untouched(signed_post(api_client, body.encode()), live_transaction, paystack)
    assert message == "Malformed JSON body: nested more than 32 levels deep"


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (r"TXN_LIVE\u00000000000000001", "data.reference: Null characters are not allowed."),
        (r"TXN_LIVE\ud8000000000000001", "data.reference: must be valid Unicode text"),
    ],
)
def test_a_signed_webhook_naming_an_unstorable_reference_is_400(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack, reference, message
) -> None:  # type: ignore[no-untyped-def]
    """A NUL in the named reference reached PostgreSQL, which refuses it in a query: a 500."""
    body = ('{"event": "charge.success", "data": {"reference": "' + reference + '"}}').encode()
    response = signed_post(api_client, body)
    assert _refused_untouched(response, live_transaction, paystack) == message


@pytest.mark.parametrize(
    "signature", ["é" * 128, "\x00" * 128, "ｆ" * 128, "0" * 127 + "\x00", "Ÿ", "sha512=abc"]
)
def test_a_non_ascii_or_nul_signature_header_is_refused(
    api_client: APIClient, live_transaction: CollectionTransaction, paystack, signature: str
) -> None:  # type: ignore[no-untyped-def]
    body = paystack_event_body(live_transaction.reference)
    response = api_client.generic(
        "POST",
        WEBHOOK_URL,
        body,
        content_type="application/json",
        HTTP_X_PAYSTACK_SIGNATURE=signature,
    )
    message = _refused_untouched(response, live_transaction, paystack, 401)
    assert message == "Invalid or missing provider signature"


# --- customer's return from the provider -------------------------------------------------------


def test_return_from_the_provider_verifies_then_redirects_to_the_callback(
    client, live_transaction: CollectionTransaction, paystack
) -> None:  # type: ignore[no-untyped-def]
    reference = live_transaction.reference
    paystack.add(responses.GET, verify_url(reference), json=paystack_verify_answer(reference))
    response = client.get(f"/checkout/{reference}/return?trxref={reference}&reference={reference}")
    assert response.status_code == 303
    location = urlsplit(response["Location"])
    assert location.netloc == "merchant.example.com"
    assert parse_qs(location.query) == {"reference": [reference], "status": ["paid"]}
    live_transaction.refresh_from_db()
    assert live_transaction.payment_status == PaymentStatus.PAID
    assert TransactionAttempt.objects.get().source == ConfirmationSource.PROVIDER_VERIFY


def test_return_while_the_provider_is_down_sends_the_customer_on_as_pending(
    client, live_transaction: CollectionTransaction, paystack
) -> None:  # type: ignore[no-untyped-def]
    paystack.add(responses.GET, verify_url(live_transaction.reference), status=500)
    response = client.get(f"/checkout/{live_transaction.reference}/return")
    assert response.status_code == 303
    assert parse_qs(urlsplit(response["Location"]).query)["status"] == ["pending"]
