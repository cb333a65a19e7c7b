"""The Flutterwave transfers adapter against answers shaped like Flutterwave's documented ones
(``responses``): success, queued, failed, timeouts, 5xx, duplicate reference, 401/429,
unreadable answers, verify by reference and the exact naira amount.

Shapes from Flutterwave's v3 reference and guides:
https://developer.flutterwave.com/reference/endpoints/transfers/ (create a transfer, list
transfers), https://developer.flutterwave.com/docs/integration-guides/errors (error envelope,
401), https://developer.flutterwave.com/docs/handling-error-timeouts (503 on their timeout:
query by reference before retrying).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import requests
import responses
from responses import matchers
from urllib3.exceptions import MaxRetryError, NewConnectionError

from payouts.providers.base import PayoutProvider, TransferOutcome, TransferRequest
from payouts.providers.flutterwave import FlutterwaveProvider
from payouts.providers.registry import provider_get

BASE = "https://api.flutterwave.test/v3"
SECRET = "FLWSECK_TEST-5a1c2b3d4e5f60718293a4b5c6d7e8f9-X"
REFERENCE = "po_20250101_0123456789abcdef0123"
TRANSFERS_URL = f"{BASE}/transfers"


def transfer_object(status: str, *, reference: str = REFERENCE, **extra: Any) -> dict[str, Any]:
    return {
        "id": 190626,
        "account_number": "0123456789",
        "bank_code": "058",
        "full_name": "ADEYEMI TUNDE",
        "created_at": "2025-01-01T11:19:55.000Z",
        "currency": "NGN",
        "debit_currency": "NGN",
        "amount": 1500.5,
        "fee": 26.875,
        "status": status,
        "reference": reference,
        "meta": None,
        "narration": "Invoice",
        "complete_message": "",
        "requires_approval": 0,
        "is_approved": 1,
        "bank_name": "GUARANTY TRUST BANK",
        **extra,
    }


def created(status: str = "NEW") -> dict[str, Any]:
    return {
        "status": "success",
        "message": "Transfer Queued Successfully",
        "data": transfer_object(status),
    }


def listed(*transfers: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": "success",
        "message": "Transfers fetched",
        "meta": {"page_info": {"total": len(transfers), "current_page": 1, "total_pages": 1}},
        "data": list(transfers),
    }


def refused(message: str) -> dict[str, Any]:
    return {"status": "error", "message": message, "data": None}


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as mock:
        yield mock


@pytest.fixture
def provider() -> FlutterwaveProvider:
    return FlutterwaveProvider(base_url=BASE, secret_key=SECRET, timeout_seconds=2)


@pytest.fixture
def request_() -> TransferRequest:
    return TransferRequest(
        reference=REFERENCE,
        account_number="0123456789",
        account_name="ADEYEMI TUNDE",
        bank_code="058",
        amount=Decimal("1500.50"),
        currency="NGN",
        narration="Invoice",
    )


def add_verify(rsps: responses.RequestsMock, body: dict[str, Any], status: int = 200) -> None:
    rsps.get(
        TRANSFERS_URL,
        json=body,
        status=status,
        match=[matchers.query_param_matcher({"reference": REFERENCE})],
    )


def test_the_registry_builds_it_as_a_payout_provider(settings) -> None:
    settings.FLUTTERWAVE_SECRET_KEY = SECRET
    provider = provider_get("flutterwave")
    assert isinstance(provider, FlutterwaveProvider)
    assert isinstance(provider, PayoutProvider)
    assert provider.name == "flutterwave"


def test_one_call_with_our_reference_and_the_exact_naira_amount(rsps, provider, request_) -> None:
    rsps.post(
        TRANSFERS_URL,
        json=created("NEW"),
        match=[matchers.header_matcher({"Authorization": f"Bearer {SECRET}"})],
    )
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.PENDING
    assert result.provider_reference == "190626"
    assert len(rsps.calls) == 1
    sent = rsps.calls[0].request.body
    assert b'"amount":1500.50' in sent
    assert json.loads(sent, parse_float=Decimal) == {
        "account_bank": "058",
        "account_number": "0123456789",
        "amount": Decimal("1500.50"),
        "currency": "NGN",
        "narration": "Invoice",
        "reference": REFERENCE,
        "debit_currency": "NGN",
    }
    assert rsps.calls[0].request.headers["Content-Type"] == "application/json"


def test_a_whole_naira_amount_is_sent_as_an_integer(rsps, provider, request_) -> None:
    rsps.post(TRANSFERS_URL, json=created("NEW"))
    whole = TransferRequest(**{**request_.__dict__, "amount": Decimal("5500.00")})
    provider.initiate_transfer(whole)
    assert json.loads(rsps.calls[0].request.body)["amount"] == 5500
    assert b'"amount":5500,' in rsps.calls[0].request.body


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        ("NEW", TransferOutcome.PENDING),
        ("PENDING", TransferOutcome.PENDING),
        ("SUCCESSFUL", TransferOutcome.SUCCESSFUL),
        ("FAILED", TransferOutcome.FAILED),
    ],
)
def test_the_created_transfer_status_is_mapped(
    rsps, provider, request_, status: str, outcome: TransferOutcome
) -> None:
    rsps.post(TRANSFERS_URL, json=created(status))
    assert provider.initiate_transfer(request_).outcome == outcome


def test_raw_exchange_is_kept_without_the_secret(rsps, provider, request_) -> None:
    rsps.post(
        TRANSFERS_URL,
        json={**created("NEW"), "message": f"Queued for Bearer {SECRET}"},
    )
    result = provider.initiate_transfer(request_)
    assert [exchange.operation for exchange in result.raw] == ["flutterwave.initiate_transfer"]
    stored = json.dumps([exchange.as_dict() for exchange in result.raw])
    assert result.raw[0].body["data"]["id"] == 190626
    assert SECRET not in stored
    assert "[redacted]" in stored


def test_connect_timeout_was_never_sent(rsps, provider, request_) -> None:
    rsps.post(TRANSFERS_URL, body=requests.ConnectTimeout("connect timed out"))
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.NOT_SENT
    assert result.raw[0].error == "ConnectTimeout"


def test_connection_refused_was_never_sent(rsps, provider, request_) -> None:
    refused_error = NewConnectionError(None, "Connection refused")
    rsps.post(
        TRANSFERS_URL,
        body=requests.ConnectionError(MaxRetryError(None, TRANSFERS_URL, reason=refused_error)),
    )
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.NOT_SENT


def test_read_timeout_is_unknown_and_not_resent(rsps, provider, request_) -> None:
    rsps.post(TRANSFERS_URL, body=requests.ReadTimeout("read timed out"))
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.UNKNOWN
    assert result.raw[0].error == "ReadTimeout"
    assert len(rsps.calls) == 1


def test_broken_connection_is_unknown(rsps, provider, request_) -> None:
    rsps.post(TRANSFERS_URL, body=requests.ConnectionError("Connection aborted."))
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.UNKNOWN


@pytest.mark.parametrize("status_code", [500, 502, 503, 504])
def test_5xx_is_unknown_never_failed(rsps, provider, request_, status_code: int) -> None:
    rsps.post(
        TRANSFERS_URL,
        json=refused("An error occurred. Please contact support"),
        status=status_code,
    )
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.UNKNOWN
    assert result.message == "An error occurred. Please contact support"


@pytest.mark.parametrize("status_code", [401, 403, 429])
def test_credentials_or_throttle_refusal_is_not_sent(
    rsps, provider, request_, status_code: int
) -> None:
    rsps.post(TRANSFERS_URL, json=refused("Authorization required"), status=status_code)
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.NOT_SENT
    assert len(rsps.calls) == 1


def test_no_secret_key_sends_nothing(rsps, request_) -> None:
    provider = FlutterwaveProvider(base_url=BASE, secret_key="", timeout_seconds=2)
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.NOT_SENT
    assert len(rsps.calls) == 0


@pytest.mark.parametrize(
    "message",
    [
        f"Transfer with reference {REFERENCE} already exists",
        "DUPLICATE_REFERENCE",
    ],
)
def test_duplicate_reference_reads_flutterwaves_record_and_never_resends(
    rsps, provider, request_, message: str
) -> None:
    rsps.post(TRANSFERS_URL, json=refused(message), status=400)
    add_verify(rsps, listed(transfer_object("SUCCESSFUL", complete_message="Successful")))
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.SUCCESSFUL
    assert result.provider_reference == "190626"
    assert result.message == "Successful"
    assert [call.request.method for call in rsps.calls] == ["POST", "GET"]
    assert [exchange.operation for exchange in result.raw] == [
        "flutterwave.initiate_transfer",
        "flutterwave.verify_transfer",
    ]


def test_duplicate_reference_that_the_read_does_not_show_stays_unknown(
    rsps, provider, request_
) -> None:
    rsps.post(TRANSFERS_URL, json=refused("DUPLICATE_REFERENCE"), status=400)
    add_verify(rsps, listed())
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.UNKNOWN


def test_a_plain_refusal_with_nothing_found_is_rejected(rsps, provider, request_) -> None:
    rsps.post(TRANSFERS_URL, json=refused("Account number is invalid"), status=400)
    add_verify(rsps, listed())
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.REJECTED
    assert result.message == "Account number is invalid"


def test_a_refusal_whose_read_fails_is_unknown(rsps, provider, request_) -> None:
    rsps.post(TRANSFERS_URL, json=refused("Account number is invalid"), status=400)
    rsps.get(TRANSFERS_URL, body=requests.ReadTimeout())
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.UNKNOWN


def test_an_unreadable_2xx_is_read_back_by_reference(rsps, provider, request_) -> None:
    rsps.post(TRANSFERS_URL, body="<html>Bad gateway</html>", status=200)
    add_verify(rsps, listed(transfer_object("PENDING")))
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.PENDING


def test_an_unreadable_2xx_with_nothing_found_is_unknown(rsps, provider, request_) -> None:
    rsps.post(TRANSFERS_URL, body="not json", status=200)
    add_verify(rsps, listed())
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.UNKNOWN


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        ("SUCCESSFUL", TransferOutcome.SUCCESSFUL),
        ("FAILED", TransferOutcome.FAILED),
        ("NEW", TransferOutcome.PENDING),
        ("PENDING", TransferOutcome.PENDING),
        ("SOMETHING_NEW", TransferOutcome.UNKNOWN),
    ],
)
def test_verify_maps_status(rsps, provider, status: str, outcome: TransferOutcome) -> None:
    add_verify(rsps, listed(transfer_object(status)))
    assert provider.verify_transfer(reference=REFERENCE).outcome == outcome


def test_verify_keeps_the_failure_message(rsps, provider) -> None:
    add_verify(
        rsps,
        listed(transfer_object("FAILED", complete_message="DISBURSE FAILED: Insufficient funds")),
    )
    result = provider.verify_transfer(reference=REFERENCE)
    assert result.outcome == TransferOutcome.FAILED
    assert result.message == "DISBURSE FAILED: Insufficient funds"
    assert result.session_id == ""


def test_verify_not_found_when_the_list_is_empty(rsps, provider) -> None:
    add_verify(rsps, listed())
    assert provider.verify_transfer(reference=REFERENCE).outcome == TransferOutcome.NOT_FOUND


def test_verify_ignores_transfers_of_other_references(rsps, provider) -> None:
    add_verify(rsps, listed(transfer_object("SUCCESSFUL", reference="po_someone_else")))
    assert provider.verify_transfer(reference=REFERENCE).outcome == TransferOutcome.NOT_FOUND


def test_verify_404_is_not_found(rsps, provider) -> None:
    add_verify(rsps, refused("Transfer not found"), status=404)
    assert provider.verify_transfer(reference=REFERENCE).outcome == TransferOutcome.NOT_FOUND


@pytest.mark.parametrize("status_code", [401, 429, 500, 503])
def test_verify_trouble_is_unknown(rsps, provider, status_code: int) -> None:
    add_verify(rsps, refused("An error occurred. Please contact support"), status=status_code)
    assert provider.verify_transfer(reference=REFERENCE).outcome == TransferOutcome.UNKNOWN


def test_verify_unreadable_json_is_unknown(rsps, provider) -> None:
    rsps.get(TRANSFERS_URL, body="{not json", status=200)
    assert provider.verify_transfer(reference=REFERENCE).outcome == TransferOutcome.UNKNOWN


def test_verify_timeout_is_unknown(rsps, provider) -> None:
    rsps.get(TRANSFERS_URL, body=requests.ReadTimeout())
    assert provider.verify_transfer(reference=REFERENCE).outcome == TransferOutcome.UNKNOWN
