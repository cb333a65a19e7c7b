"""The Paystack transfers adapter against recorded-shape responses (``responses``): success,
definitive failure, 5xx and timeouts, and the idempotent reference on every call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest
import requests
import responses
from responses import matchers
from urllib3.exceptions import MaxRetryError, NewConnectionError

from payouts.providers.base import TransferOutcome, TransferRequest
from payouts.providers.paystack import PaystackProvider

BASE = "https://api.paystack.test"
SECRET = "sk_test_paystack_secret_value"
REFERENCE = "po_20250101_0123456789abcdef0123"
RECIPIENT_OK = {
    "status": True,
    "message": "Transfer recipient created successfully",
    "data": {
        "active": True,
        "currency": "NGN",
        "name": "ADEYEMI TUNDE",
        "recipient_code": "RCP_t0ya41mp35flk40",
        "type": "nuban",
        "details": {"account_number": "0123456789", "bank_code": "058"},
    },
}


def transfer_body(status: str) -> dict:
    return {
        "status": True,
        "message": "Transfer has been queued",
        "data": {
            "reference": REFERENCE,
            "integration": 428626,
            "domain": "test",
            "amount": 150000,
            "currency": "NGN",
            "source": "balance",
            "reason": "Invoice",
            "recipient": 6788170,
            "status": status,
            "transfer_code": "TRF_1ptvuv321ahaa7q",
            "id": 14938,
        },
    }


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as mock:
        yield mock


@pytest.fixture
def provider() -> PaystackProvider:
    return PaystackProvider(base_url=BASE, secret_key=SECRET, timeout_seconds=2)


@pytest.fixture
def request_() -> TransferRequest:
    return TransferRequest(
        reference=REFERENCE,
        account_number="0123456789",
        account_name="ADEYEMI TUNDE",
        bank_code="058",
        amount=Decimal("1500.00"),
        currency="NGN",
        narration="Invoice",
    )


def add_recipient(rsps: responses.RequestsMock) -> None:
    rsps.post(f"{BASE}/transferrecipient", json=RECIPIENT_OK, status=201)


def test_success_sends_our_reference_and_kobo_amount(rsps, provider, request_) -> None:
    add_recipient(rsps)
    rsps.post(
        f"{BASE}/transfer",
        json=transfer_body("success"),
        match=[
            matchers.json_params_matcher(
                {
                    "source": "balance",
                    "amount": 150000,
                    "recipient": "RCP_t0ya41mp35flk40",
                    "reference": REFERENCE,
                    "reason": "Invoice",
                    "currency": "NGN",
                }
            ),
            matchers.header_matcher({"Authorization": f"Bearer {SECRET}"}),
        ],
    )
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.SUCCESSFUL
    assert result.provider_reference == "TRF_1ptvuv321ahaa7q"
    recipient_call = json.loads(rsps.calls[0].request.body)
    assert recipient_call == {
        "type": "nuban",
        "name": "ADEYEMI TUNDE",
        "account_number": "0123456789",
        "bank_code": "058",
        "currency": "NGN",
    }


def test_raw_responses_are_kept_without_the_secret(rsps, provider, request_) -> None:
    add_recipient(rsps)
    rsps.post(f"{BASE}/transfer", json=transfer_body("success"))
    result = provider.initiate_transfer(request_)
    operations = [exchange.operation for exchange in result.raw]
    assert operations == ["paystack.create_recipient", "paystack.initiate_transfer"]
    assert result.raw[1].body["data"]["transfer_code"] == "TRF_1ptvuv321ahaa7q"
    assert SECRET not in json.dumps([exchange.as_dict() for exchange in result.raw])


@pytest.mark.parametrize("status", ["pending", "otp", "received"])
def test_queued_transfer_is_pending(rsps, provider, request_, status: str) -> None:
    add_recipient(rsps)
    rsps.post(f"{BASE}/transfer", json=transfer_body(status))
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.PENDING


@pytest.mark.parametrize("status", ["failed", "reversed", "rejected"])
def test_definitive_failure_status(rsps, provider, request_, status: str) -> None:
    add_recipient(rsps)
    rsps.post(f"{BASE}/transfer", json=transfer_body(status))
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.FAILED


def test_refused_transfer_unknown_to_paystack_is_rejected(rsps, provider, request_) -> None:
    add_recipient(rsps)
    rsps.post(
        f"{BASE}/transfer",
        json={"status": False, "message": "Invalid amount"},
        status=400,
    )
    rsps.get(
        f"{BASE}/transfer/verify/{REFERENCE}",
        json={"status": False, "message": "Transfer not found"},
        status=404,
    )
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.REJECTED
    assert result.message == "Invalid amount"


def test_duplicate_reference_takes_paystacks_record(rsps, provider, request_) -> None:
    add_recipient(rsps)
    rsps.post(
        f"{BASE}/transfer",
        json={"status": False, "message": "Duplicate Transfer Reference"},
        status=400,
    )
    rsps.get(f"{BASE}/transfer/verify/{REFERENCE}", json=transfer_body("success"))
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.SUCCESSFUL
    assert result.provider_reference == "TRF_1ptvuv321ahaa7q"


@pytest.mark.parametrize("status_code", [500, 502, 503, 504])
def test_5xx_after_sending_is_unknown_never_failed(
    rsps, provider, request_, status_code: int
) -> None:
    add_recipient(rsps)
    rsps.post(f"{BASE}/transfer", json={"status": False, "message": "oops"}, status=status_code)
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.UNKNOWN


def test_read_timeout_is_unknown(rsps, provider, request_) -> None:
    add_recipient(rsps)
    rsps.post(f"{BASE}/transfer", body=requests.ReadTimeout("read timed out"))
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.UNKNOWN
    assert result.raw[-1].error == "ReadTimeout"


def test_broken_connection_is_unknown(rsps, provider, request_) -> None:
    add_recipient(rsps)
    rsps.post(f"{BASE}/transfer", body=requests.ConnectionError("Connection aborted."))
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.UNKNOWN


def test_connect_timeout_was_never_sent(rsps, provider, request_) -> None:
    add_recipient(rsps)
    rsps.post(f"{BASE}/transfer", body=requests.ConnectTimeout("connect timed out"))
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.NOT_SENT


def test_connection_refused_was_never_sent(rsps, provider, request_) -> None:
    add_recipient(rsps)
    refused = NewConnectionError(None, "Connection refused")
    rsps.post(
        f"{BASE}/transfer",
        body=requests.ConnectionError(MaxRetryError(None, f"{BASE}/transfer", reason=refused)),
    )
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.NOT_SENT


@pytest.mark.parametrize("status_code", [401, 429])
def test_auth_or_rate_limit_refusal_is_retried_later(
    rsps, provider, request_, status_code: int
) -> None:
    add_recipient(rsps)
    rsps.post(f"{BASE}/transfer", json={"status": False, "message": "no"}, status=status_code)
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.NOT_SENT


def test_recipient_5xx_means_nothing_was_sent(rsps, provider, request_) -> None:
    rsps.post(f"{BASE}/transferrecipient", json={"status": False}, status=503)
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.NOT_SENT
    assert len(rsps.calls) == 1


def test_recipient_timeout_means_nothing_was_sent(rsps, provider, request_) -> None:
    rsps.post(f"{BASE}/transferrecipient", body=requests.ReadTimeout())
    assert provider.initiate_transfer(request_).outcome == TransferOutcome.NOT_SENT


def test_recipient_refused_is_rejected(rsps, provider, request_) -> None:
    rsps.post(
        f"{BASE}/transferrecipient",
        json={"status": False, "message": "Cannot resolve account"},
        status=422,
    )
    result = provider.initiate_transfer(request_)
    assert result.outcome == TransferOutcome.REJECTED
    assert result.message == "Cannot resolve account"


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        ("success", TransferOutcome.SUCCESSFUL),
        ("failed", TransferOutcome.FAILED),
        ("reversed", TransferOutcome.FAILED),
        ("pending", TransferOutcome.PENDING),
        ("something-new", TransferOutcome.UNKNOWN),
    ],
)
def test_verify_maps_status(rsps, provider, status: str, outcome: TransferOutcome) -> None:
    rsps.get(f"{BASE}/transfer/verify/{REFERENCE}", json=transfer_body(status))
    assert provider.verify_transfer(reference=REFERENCE).outcome == outcome


def test_verify_not_found(rsps, provider) -> None:
    rsps.get(
        f"{BASE}/transfer/verify/{REFERENCE}",
        json={"status": False, "message": "Transfer not found"},
        status=400,
    )
    assert provider.verify_transfer(reference=REFERENCE).outcome == TransferOutcome.NOT_FOUND


@pytest.mark.parametrize("failure", [requests.ReadTimeout(), requests.ConnectTimeout()])
def test_verify_timeout_is_unknown(rsps, provider, failure: Exception) -> None:
    rsps.get(f"{BASE}/transfer/verify/{REFERENCE}", body=failure)
    assert provider.verify_transfer(reference=REFERENCE).outcome == TransferOutcome.UNKNOWN


def test_verify_5xx_is_unknown(rsps, provider) -> None:
    rsps.get(f"{BASE}/transfer/verify/{REFERENCE}", body="<html>Bad gateway</html>", status=502)
    result = provider.verify_transfer(reference=REFERENCE)
    assert result.outcome == TransferOutcome.UNKNOWN
    assert result.raw[0].body == "<html>Bad gateway</html>"


def test_settings_supply_base_url_and_secret(settings, rsps, request_) -> None:
    settings.PAYSTACK_BASE_URL = "https://paystack.example/"
    settings.PAYSTACK_SECRET_KEY = "sk_live_from_settings"
    rsps.get(
        f"https://paystack.example/transfer/verify/{REFERENCE}",
        json=transfer_body("success"),
        match=[matchers.header_matcher({"Authorization": "Bearer sk_live_from_settings"})],
    )
    assert PaystackProvider().verify_transfer(reference=REFERENCE).outcome == "successful"


# --- The NIP session id ---------------------------------------------------------------------


def test_verify_reads_the_nip_session_id(rsps, provider) -> None:
    body = transfer_body("success")
    body["data"]["session"] = {"provider": "nip", "id": "090405261120101523000000012345"}
    rsps.get(f"{BASE}/transfer/verify/{REFERENCE}", json=body)

    result = provider.verify_transfer(reference=REFERENCE)

    assert result.session_id == "090405261120101523000000012345"


def test_initiate_reads_the_nip_session_id_when_paystack_has_one(rsps, provider, request_) -> None:
    add_recipient(rsps)
    body = transfer_body("success")
    body["data"]["session"] = {"provider": "nip", "id": "090405261120101523000000067890"}
    rsps.post(f"{BASE}/transfer", json=body)

    assert provider.initiate_transfer(request_).session_id == "090405261120101523000000067890"


@pytest.mark.parametrize("session", [None, {}, {"provider": None, "id": None}, {"id": True}, "x"])
def test_no_session_id_until_paystack_gives_one(rsps, provider, session) -> None:
    body = transfer_body("pending")
    body["data"]["session"] = session
    rsps.get(f"{BASE}/transfer/verify/{REFERENCE}", json=body)

    assert provider.verify_transfer(reference=REFERENCE).session_id == ""


@pytest.mark.parametrize("code", ["34", "35", "63"])
def test_a_fraud_nip_code_holds_the_transfer_whatever_its_status(rsps, provider, code) -> None:
    body = transfer_body("failed")
    body["data"]["gateway_response"] = code
    rsps.get(f"{BASE}/transfer/verify/{REFERENCE}", json=body)
    result = provider.verify_transfer(reference=REFERENCE)
    assert (result.outcome, result.nip_code) == (TransferOutcome.HELD, code)


def test_a_gateway_response_that_is_no_nip_code_is_ignored(rsps, provider) -> None:
    body = transfer_body("success")
    body["data"]["gateway_response"] = "Approved"
    rsps.get(f"{BASE}/transfer/verify/{REFERENCE}", json=body)
    result = provider.verify_transfer(reference=REFERENCE)
    assert (result.outcome, result.nip_code) == (TransferOutcome.SUCCESSFUL, "")
