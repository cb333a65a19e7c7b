"""The one Paystack client against Paystack-shaped answers (``responses``): the key goes in the
``Authorization`` header and never into the audit record, every "try again later" case is
classified once, kobo both ways, and the webhook signature check."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import requests
import responses
from responses import matchers
from urllib3.exceptions import MaxRetryError, NameResolutionError, NewConnectionError

from integrations.paystack import (
    PaystackClient,
    RetryLater,
    kobo_from_naira,
    naira_from_kobo,
    paystack_signature_compute,
    paystack_signature_valid,
)

BASE = "https://api.paystack.test"
SECRET = "sk_test_4f2b0c7e9d1a3b5c7e9f1a2b3c4d5e6f7a8b9c0d"
REFERENCE = "TXN_20250101_ABCDEF0123456789"
VERIFY_URL = f"{BASE}/transaction/verify/{REFERENCE}"
RESOLVE_URL = f"{BASE}/bank/resolve"
INITIALIZE_URL = f"{BASE}/transaction/initialize"

VERIFY_SUCCESS = {
    "status": True,
    "message": "Verification successful",
    "data": {
        "id": 4099260516,
        "domain": "test",
        "status": "success",
        "reference": REFERENCE,
        "amount": 720500,
        "gateway_response": "Successful",
        "paid_at": "2025-01-01T10:00:00.000Z",
        "channel": "card",
        "currency": "NGN",
        "authorization": {"last4": "4081", "brand": "visa", "card_type": "visa "},
    },
}
INITIALIZE_SUCCESS = {
    "status": True,
    "message": "Authorization URL created",
    "data": {
        "authorization_url": "https://checkout.paystack.com/3ni8kdavz62431k",
        "access_code": "3ni8kdavz62431k",
        "reference": REFERENCE,
    },
}
RESOLVE_SUCCESS = {
    "status": True,
    "message": "Account number resolved",
    "data": {"account_number": "0001234567", "account_name": "Doe Jane Loren", "bank_id": 9},
}


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as mock:
        yield mock


@pytest.fixture
def client() -> PaystackClient:
    return PaystackClient(base_url=BASE, secret_key=SECRET, timeout_seconds=2)


def verify(client: PaystackClient):  # type: ignore[no-untyped-def]
    return client.request("GET", f"/transaction/verify/{REFERENCE}", operation="paystack.verify")


# --- request ------------------------------------------------------------------------------------


def test_the_key_goes_in_the_authorization_header(rsps, client) -> None:  # type: ignore[no-untyped-def]
    rsps.get(
        VERIFY_URL,
        json=VERIFY_SUCCESS,
        match=[
            matchers.header_matcher(
                {"Authorization": f"Bearer {SECRET}", "Accept": "application/json"}
            )
        ],
    )
    answer = verify(client)
    assert answer.ok
    assert answer.retry_later is None
    assert answer.http_status == 200
    assert answer.data["status"] == "success"
    assert answer.message == "Verification successful"


def test_payload_params_and_extra_headers_are_sent(rsps, client) -> None:  # type: ignore[no-untyped-def]
    payload = {"email": "ada.obi@example.com", "amount": 720500, "reference": REFERENCE}
    rsps.post(
        INITIALIZE_URL, json=INITIALIZE_SUCCESS, match=[matchers.json_params_matcher(payload)]
    )
    rsps.get(
        RESOLVE_URL,
        json=RESOLVE_SUCCESS,
        match=[
            matchers.query_param_matcher({"account_number": "0001234567", "bank_code": "058"}),
            matchers.header_matcher({"X-Request-Reference": "NE-1"}),
        ],
    )
    initialized = client.request(
        "POST", "/transaction/initialize", operation="paystack.initialize", payload=payload
    )
    resolved = client.request(
        "GET",
        "/bank/resolve",
        operation="paystack.resolve_account",
        params={"account_number": "0001234567", "bank_code": "058"},
        headers={"X-Request-Reference": "NE-1"},
    )
    assert initialized.data["authorization_url"].startswith("https://checkout.paystack.com/")
    assert resolved.data["account_name"] == "Doe Jane Loren"


def test_extra_headers_cannot_replace_the_authorization(rsps, client) -> None:  # type: ignore[no-untyped-def]
    rsps.get(
        VERIFY_URL,
        json=VERIFY_SUCCESS,
        match=[matchers.header_matcher({"Authorization": f"Bearer {SECRET}"})],
    )
    answer = client.request(
        "GET",
        f"/transaction/verify/{REFERENCE}",
        operation="paystack.verify",
        headers={"Authorization": "Bearer forged"},
    )
    assert answer.ok


def test_settings_supply_base_url_key_and_timeout(settings, rsps) -> None:  # type: ignore[no-untyped-def]
    settings.PAYSTACK_BASE_URL = "https://paystack.example/"
    settings.PAYSTACK_SECRET_KEY = "sk_live_from_settings"
    settings.PAYSTACK_TIMEOUT_SECONDS = 7.5
    rsps.get(
        f"https://paystack.example/transaction/verify/{REFERENCE}",
        json=VERIFY_SUCCESS,
        match=[matchers.header_matcher({"Authorization": "Bearer sk_live_from_settings"})],
    )
    assert verify(PaystackClient()).ok
    assert rsps.calls[0].request.req_kwargs["timeout"] == 7.5


def test_a_connect_timeout_is_sent_apart_when_given(rsps) -> None:  # type: ignore[no-untyped-def]
    rsps.get(VERIFY_URL, json=VERIFY_SUCCESS)
    client = PaystackClient(
        base_url=BASE, secret_key=SECRET, timeout_seconds=9, connect_timeout_seconds=3
    )
    verify(client)
    assert rsps.calls[0].request.req_kwargs["timeout"] == (3, 9)


def test_the_session_is_injectable(rsps) -> None:  # type: ignore[no-untyped-def]
    session = requests.Session()
    session.headers["User-Agent"] = "merchant-payments-tests"
    rsps.get(
        VERIFY_URL,
        json=VERIFY_SUCCESS,
        match=[matchers.header_matcher({"User-Agent": "merchant-payments-tests"})],
    )
    assert verify(PaystackClient(base_url=BASE, secret_key=SECRET, session=session)).ok


def test_the_client_does_not_show_its_key() -> None:
    client = PaystackClient(base_url=BASE, secret_key=SECRET)
    assert SECRET not in repr(client)


# --- the raw exchange ---------------------------------------------------------------------------


def test_the_exchange_keeps_the_answer_without_the_secret(rsps, client) -> None:  # type: ignore[no-untyped-def]
    rsps.get(VERIFY_URL, json=VERIFY_SUCCESS)
    exchange = verify(client).exchange
    assert exchange.operation == "paystack.verify"
    assert exchange.http_status == 200
    assert exchange.body == VERIFY_SUCCESS
    assert exchange.error == ""
    recorded = json.dumps(exchange.as_dict())
    assert SECRET not in recorded
    assert "Authorization" not in recorded
    assert "Bearer" not in recorded


def test_a_secret_echoed_by_the_provider_is_redacted(rsps, client) -> None:  # type: ignore[no-untyped-def]
    rsps.get(
        VERIFY_URL,
        status=401,
        json={"status": False, "message": f"Invalid key: {SECRET}", "data": {"keys": [SECRET]}},
    )
    answer = verify(client)
    assert SECRET not in json.dumps(answer.exchange.as_dict())
    assert SECRET not in answer.message
    assert answer.exchange.body["message"] == "Invalid key: [redacted]"


def test_a_text_answer_is_kept_as_text(rsps, client) -> None:  # type: ignore[no-untyped-def]
    rsps.get(VERIFY_URL, status=502, body="<html>Bad gateway</html>")
    answer = verify(client)
    assert answer.exchange.body == "<html>Bad gateway</html>"
    assert answer.body == {}


def test_a_transport_failure_keeps_the_error_name(rsps, client) -> None:  # type: ignore[no-untyped-def]
    rsps.get(VERIFY_URL, body=requests.ReadTimeout("read timed out"))
    answer = verify(client)
    assert answer.http_status is None
    assert answer.exchange.http_status is None
    assert answer.exchange.body is None
    assert answer.exchange.error == "ReadTimeout"
    assert isinstance(answer.error, requests.ReadTimeout)


# --- classification -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (500, {"status": False, "message": "An error occurred"}, RetryLater.SERVER_ERROR),
        (502, "<html>Bad gateway</html>", RetryLater.SERVER_ERROR),
        (503, {"status": False, "message": "Service unavailable"}, RetryLater.SERVER_ERROR),
        (504, "", RetryLater.SERVER_ERROR),
        (401, {"status": False, "message": "Invalid key"}, RetryLater.CREDENTIALS),
        (403, {"status": False, "message": "Not permitted"}, RetryLater.CREDENTIALS),
        (429, {"status": False, "message": "Too many requests"}, RetryLater.THROTTLED),
        (408, "Request Timeout", RetryLater.THROTTLED),
        (200, "<html>maintenance</html>", RetryLater.UNREADABLE),
        (200, [VERIFY_SUCCESS], RetryLater.UNREADABLE),
    ],
)
def test_unusable_answers_are_retried_later(
    rsps, client, status: int, body: Any, expected: RetryLater
) -> None:  # type: ignore[no-untyped-def]
    if isinstance(body, str):
        rsps.get(VERIFY_URL, status=status, body=body)
    else:
        rsps.get(VERIFY_URL, status=status, json=body)
    answer = verify(client)
    assert answer.retry_later == expected
    assert answer.http_status == status
    assert not answer.ok
    assert not expected.never_sent


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"status": False, "message": "Transaction reference not found"}),
        (404, {"status": False, "message": "Transfer not found"}),
        (422, {"status": False, "message": "Could not resolve account name. Check parameters."}),
        (400, "<html>Bad request</html>"),
        (200, {"status": False, "message": "Invalid Email Address"}),
    ],
)
def test_refusals_are_paystacks_word_not_retry_later(rsps, client, status: int, body: Any) -> None:  # type: ignore[no-untyped-def]
    if isinstance(body, str):
        rsps.get(VERIFY_URL, status=status, body=body)
    else:
        rsps.get(VERIFY_URL, status=status, json=body)
    answer = verify(client)
    assert answer.retry_later is None
    assert not answer.ok
    assert answer.http_status == status


def test_the_message_is_cut_to_255_characters(rsps, client) -> None:  # type: ignore[no-untyped-def]
    rsps.get(VERIFY_URL, status=400, json={"status": False, "message": "x" * 1000})
    assert verify(client).message == "x" * 255


refused = NewConnectionError(None, "Failed to establish a new connection: Connection refused")
unresolved = NameResolutionError("api.paystack.test", None, OSError("Name or service not known"))


@pytest.mark.parametrize(
    ("failure", "expected", "never_sent", "timed_out"),
    [
        (requests.ConnectTimeout("connect timed out"), RetryLater.CONNECT_TIMEOUT, True, True),
        (
            requests.ConnectionError(MaxRetryError(None, VERIFY_URL, reason=refused)),
            RetryLater.CONNECT_FAILED,
            True,
            False,
        ),
        (
            requests.ConnectionError(MaxRetryError(None, VERIFY_URL, reason=unresolved)),
            RetryLater.CONNECT_FAILED,
            True,
            False,
        ),
        (requests.ReadTimeout("read timed out"), RetryLater.READ_TIMEOUT, False, True),
        (requests.ConnectionError("Connection aborted."), RetryLater.CONNECTION_LOST, False, False),
        (requests.exceptions.ChunkedEncodingError(), RetryLater.CONNECTION_LOST, False, False),
    ],
)
def test_transport_failures_are_classified(
    rsps, client, failure: Exception, expected: RetryLater, never_sent: bool, timed_out: bool
) -> None:  # type: ignore[no-untyped-def]
    rsps.get(VERIFY_URL, body=failure)
    answer = verify(client)
    assert answer.retry_later == expected
    assert answer.retry_later.never_sent is never_sent
    assert answer.retry_later.timed_out is timed_out
    assert answer.http_status is None
    assert not answer.ok


def test_without_a_key_nothing_is_sent(rsps) -> None:  # type: ignore[no-untyped-def]
    client = PaystackClient(base_url=BASE, secret_key="")
    answer = verify(client)
    assert answer.retry_later == RetryLater.NOT_CONFIGURED
    assert answer.retry_later.never_sent
    assert answer.exchange.error == "PAYSTACK_SECRET_KEY is not configured"
    assert not client.configured
    assert len(rsps.calls) == 0


# --- kobo -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("naira", "kobo"),
    [
        (Decimal("7205.00"), 720500),
        (Decimal("0.01"), 1),
        (Decimal("1500"), 150000),
        (Decimal("1000000000000.00"), 100000000000000),
    ],
)
def test_kobo_both_ways(naira: Decimal, kobo: int) -> None:
    assert kobo_from_naira(naira) == kobo
    assert naira_from_kobo(kobo) == naira
    assert str(naira_from_kobo(kobo)) == str(naira.quantize(Decimal("0.01")))


def test_a_fraction_of_a_kobo_is_refused() -> None:
    with pytest.raises(ValueError, match="decimal places"):
        kobo_from_naira(Decimal("10.005"))


def test_paystack_kobo_as_a_digit_string_is_read() -> None:
    assert naira_from_kobo("720500") == Decimal("7205.00")


@pytest.mark.parametrize("value", [7205.5, 720500.0, True, None, "72.05", "1e3", "٧٢٠", "", {}])
def test_anything_but_integer_kobo_is_none(value: Any) -> None:
    assert naira_from_kobo(value) is None


# --- webhook signature ----------------------------------------------------------------------------

EVENT_BODY = json.dumps(
    {"event": "charge.success", "data": {"reference": REFERENCE, "amount": 720500}}
).encode()


def paystack_signs(body: bytes, secret: str = SECRET) -> str:
    """What Paystack sends in ``x-paystack-signature``, computed independently."""
    return hmac.new(secret.encode(), body, hashlib.sha512).hexdigest()


def test_paystacks_signature_is_valid() -> None:
    assert paystack_signature_valid(EVENT_BODY, paystack_signs(EVENT_BODY), secret_key=SECRET)
    assert paystack_signature_compute(EVENT_BODY, secret_key=SECRET) == paystack_signs(EVENT_BODY)


def test_the_key_comes_from_settings_by_default(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYSTACK_SECRET_KEY = SECRET
    assert paystack_signature_valid(EVENT_BODY, paystack_signs(EVENT_BODY))
    assert PaystackClient(base_url=BASE).signature_valid(EVENT_BODY, paystack_signs(EVENT_BODY))


@pytest.mark.parametrize(
    "signature",
    [
        paystack_signs(EVENT_BODY, "sk_test_someone_else"),
        paystack_signs(EVENT_BODY + b" "),
        paystack_signs(EVENT_BODY)[:-1],
        "g" * 128,
    ],
)
def test_a_wrong_signature_is_invalid(signature: str) -> None:
    assert not paystack_signature_valid(EVENT_BODY, signature, secret_key=SECRET)


@pytest.mark.parametrize("signature", ["é" * 128, "sïgnature", "٣" * 128])
def test_a_non_ascii_signature_is_invalid_without_raising(signature: str) -> None:
    assert paystack_signature_valid(EVENT_BODY, signature, secret_key=SECRET) is False


@pytest.mark.parametrize("signature", [None, ""])
def test_a_missing_signature_is_invalid(signature: str | None) -> None:
    assert paystack_signature_valid(EVENT_BODY, signature, secret_key=SECRET) is False


def test_without_a_key_no_signature_is_valid() -> None:
    assert not paystack_signature_valid(EVENT_BODY, paystack_signs(EVENT_BODY, ""), secret_key="")
