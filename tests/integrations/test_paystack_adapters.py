"""The three Paystack adapters (payouts, collections, name enquiry) go through the one client:
same URL, key and classification, and every adapter keeps its raw exchange without the key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest
import requests
import responses

from collections_app.providers.base import ProviderUnavailableError
from collections_app.providers.paystack import PaystackCollectionProvider
from integrations.paystack import PaystackClient
from payouts.providers.base import TransferOutcome, TransferRequest
from payouts.providers.paystack import PaystackProvider
from wallets.name_enquiry import name_enquiry_resolve
from wallets.providers.base import AccountNotResolvedError, NameEnquiryUnavailableError
from wallets.providers.paystack import PaystackNameEnquiryProvider
from wallets.providers.sandbox import SandboxNameEnquiryProvider

BASE = "https://api.paystack.test"
SECRET = "sk_test_adapters_secret_value"
RESOLVE_URL = f"{BASE}/bank/resolve"
RESOLVED = {
    "status": True,
    "message": "Account number resolved",
    "data": {"account_number": "0001234567", "account_name": "Doe Jane Loren", "bank_id": 9},
}


@pytest.fixture
def rsps(settings) -> Iterator[responses.RequestsMock]:  # type: ignore[no-untyped-def]
    settings.PAYSTACK_BASE_URL = BASE
    settings.PAYSTACK_SECRET_KEY = SECRET
    settings.PAYSTACK_TIMEOUT_SECONDS = 6.0
    settings.PAYOUT_PROVIDER_TIMEOUT_SECONDS = 20.0
    with responses.RequestsMock() as mock:
        yield mock


def resolve(provider: PaystackNameEnquiryProvider):  # type: ignore[no-untyped-def]
    return provider.resolve_account(account_number="0001234567", bank_code="058", reference="NE-1")


def test_every_adapter_uses_the_one_client(rsps) -> None:  # type: ignore[no-untyped-def]
    for provider in (
        PaystackProvider(),
        PaystackCollectionProvider(),
        PaystackNameEnquiryProvider(),
    ):
        assert isinstance(provider.client, PaystackClient)
        assert provider.client.base_url == BASE


def test_timeouts_per_adapter(rsps) -> None:  # type: ignore[no-untyped-def]
    assert PaystackProvider().client.timeout_seconds == 20.0
    assert PaystackCollectionProvider().client.timeout_seconds == 6.0
    rsps.get(RESOLVE_URL, json=RESOLVED)
    resolve(PaystackNameEnquiryProvider())
    assert rsps.calls[0].request.req_kwargs["timeout"] == (3.0, 6.0)


# --- name enquiry keeps its raw exchange --------------------------------------------------------


def test_a_resolved_account_keeps_its_exchange(rsps) -> None:  # type: ignore[no-untyped-def]
    rsps.get(RESOLVE_URL, json=RESOLVED)
    result = resolve(PaystackNameEnquiryProvider())
    assert result.exchange is not None
    assert result.exchange.operation == "paystack.resolve_account"
    assert result.exchange.http_status == 200
    assert result.exchange.body == RESOLVED
    assert SECRET not in json.dumps(result.exchange.as_dict())


def test_a_refusal_keeps_its_exchange(rsps) -> None:  # type: ignore[no-untyped-def]
    body = {"status": False, "message": "Could not resolve account name. Check parameters."}
    rsps.get(RESOLVE_URL, json=body, status=422)
    with pytest.raises(AccountNotResolvedError) as caught:
        resolve(PaystackNameEnquiryProvider())
    assert caught.value.exchange is not None
    assert caught.value.exchange.http_status == 422
    assert caught.value.exchange.body == body


def test_a_timeout_keeps_its_exchange(rsps) -> None:  # type: ignore[no-untyped-def]
    rsps.get(RESOLVE_URL, body=requests.ReadTimeout("timed out"))
    with pytest.raises(NameEnquiryUnavailableError, match="timed out") as caught:
        resolve(PaystackNameEnquiryProvider())
    assert caught.value.exchange is not None
    assert caught.value.exchange.error == "ReadTimeout"
    assert isinstance(caught.value.__cause__, requests.ReadTimeout)


def test_an_unreadable_answer_keeps_its_exchange(rsps) -> None:  # type: ignore[no-untyped-def]
    rsps.get(RESOLVE_URL, body="<html>gateway</html>", status=200)
    with pytest.raises(NameEnquiryUnavailableError, match="unreadable") as caught:
        resolve(PaystackNameEnquiryProvider())
    assert caught.value.exchange is not None
    assert caught.value.exchange.body == "<html>gateway</html>"


def test_the_sandbox_keeps_an_exchange_too() -> None:
    result = SandboxNameEnquiryProvider().resolve_account(
        account_number="0123456789", bank_code="058", reference="NE-1"
    )
    assert result.exchange is not None
    assert result.exchange.operation == "sandbox.resolve_account"
    assert result.exchange.body == result.raw_response
    with pytest.raises(NameEnquiryUnavailableError) as caught:
        SandboxNameEnquiryProvider().resolve_account(
            account_number="0000000009", bank_code="058", reference="NE-1"
        )
    assert caught.value.exchange is not None
    assert caught.value.exchange.http_status == 503


@pytest.mark.django_db
def test_the_name_enquiry_result_carries_the_exchange(rsps) -> None:  # type: ignore[no-untyped-def]
    rsps.get(RESOLVE_URL, json=RESOLVED)
    result = name_enquiry_resolve(mode="live", account_number="0001234567", bank_code="058")
    assert result.exchange is not None
    assert result.exchange.operation == "paystack.resolve_account"
    assert result.exchange.body == RESOLVED


# --- payouts and collections map the same classification ---------------------------------------


def transfer_request() -> TransferRequest:
    return TransferRequest(
        reference="po_20250101_0123456789abcdef0123",
        account_number="0123456789",
        account_name="ADEYEMI TUNDE",
        bank_code="058",
        amount=Decimal("1500.00"),
        currency="NGN",
        narration="Invoice",
    )


def test_an_unreadable_recipient_answer_is_not_sent(rsps) -> None:  # type: ignore[no-untyped-def]
    """No transfer can exist before a recipient code: try again later, never reject."""
    rsps.post(f"{BASE}/transferrecipient", body="<html>maintenance</html>", status=200)
    result = PaystackProvider().initiate_transfer(transfer_request())
    assert result.outcome == TransferOutcome.NOT_SENT
    assert len(rsps.calls) == 1


def test_a_payout_without_a_key_is_not_sent_and_sends_nothing(rsps, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYSTACK_SECRET_KEY = ""
    result = PaystackProvider().initiate_transfer(transfer_request())
    assert result.outcome == TransferOutcome.NOT_SENT
    assert result.raw[0].error == "PAYSTACK_SECRET_KEY is not configured"
    assert len(rsps.calls) == 0


@pytest.mark.parametrize("status", [403, 408])
def test_forbidden_or_request_timeout_on_the_transfer_is_not_sent(rsps, status: int) -> None:  # type: ignore[no-untyped-def]
    rsps.post(
        f"{BASE}/transferrecipient",
        json={"status": True, "message": "ok", "data": {"recipient_code": "RCP_1"}},
        status=201,
    )
    rsps.post(f"{BASE}/transfer", json={"status": False, "message": "no"}, status=status)
    result = PaystackProvider().initiate_transfer(transfer_request())
    assert result.outcome == TransferOutcome.NOT_SENT
    assert len(rsps.calls) == 2


def test_an_unreadable_verify_answer_is_unavailable(rsps) -> None:  # type: ignore[no-untyped-def]
    rsps.get(f"{BASE}/transaction/verify/TXN_ABC", body="<html>maintenance</html>", status=200)
    with pytest.raises(ProviderUnavailableError):
        PaystackCollectionProvider().verify(reference="TXN_ABC")
