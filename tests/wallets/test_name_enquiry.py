from __future__ import annotations

import pytest
import requests
import responses

from core.exceptions import ApplicationError, ServiceUnavailableError
from wallets.name_enquiry import name_enquiry_provider_get, name_enquiry_resolve
from wallets.providers.base import AccountNotResolvedError, NameEnquiryUnavailableError
from wallets.providers.paystack import PaystackNameEnquiryProvider
from wallets.providers.sandbox import SandboxNameEnquiryProvider, sandbox_account_name

RESOLVE_URL = "https://paystack.test/bank/resolve"


@pytest.fixture
def paystack(settings) -> PaystackNameEnquiryProvider:
    settings.PAYSTACK_BASE_URL = "https://paystack.test"
    settings.PAYSTACK_SECRET_KEY = "sk_test_paystack_secret"
    settings.PAYSTACK_TIMEOUT_SECONDS = 2.0
    return PaystackNameEnquiryProvider()


def _resolve(provider: PaystackNameEnquiryProvider):
    return provider.resolve_account(account_number="0001234567", bank_code="058", reference="NE-1")


# --- Registry ----------------------------------------------------------------------------------


def test_test_mode_uses_the_sandbox_and_live_mode_uses_paystack() -> None:
    assert isinstance(name_enquiry_provider_get(mode="test"), SandboxNameEnquiryProvider)
    assert isinstance(name_enquiry_provider_get(mode="live"), PaystackNameEnquiryProvider)


def test_unknown_mode_has_no_provider() -> None:
    with pytest.raises(ValueError, match="no name-enquiry provider"):
        name_enquiry_provider_get(mode="staging")


# --- Sandbox -----------------------------------------------------------------------------------


def test_sandbox_names_are_deterministic_and_depend_on_the_digits() -> None:
    assert sandbox_account_name("0123456789") == sandbox_account_name("0123456789")
    names = {sandbox_account_name(f"01234567{n:02d}") for n in range(20)}
    assert len(names) > 10


def test_sandbox_keeps_a_raw_response() -> None:
    result = SandboxNameEnquiryProvider().resolve_account(
        account_number="0123456789", bank_code="058", reference="NE-1"
    )
    assert result.raw_response["data"]["account_name"] == result.account_name
    assert result.provider == "sandbox"


@pytest.mark.parametrize(
    ("account_number", "error"),
    [("0000000000", AccountNotResolvedError), ("0000000009", NameEnquiryUnavailableError)],
)
def test_sandbox_magic_accounts(account_number: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        SandboxNameEnquiryProvider().resolve_account(
            account_number=account_number, bank_code="058", reference="NE-1"
        )


# --- Paystack adapter --------------------------------------------------------------------------


@responses.activate
def test_paystack_success_returns_the_name_and_keeps_the_raw_response(paystack) -> None:
    body = {
        "status": True,
        "message": "Account number resolved",
        "data": {"account_number": "0001234567", "account_name": "Doe Jane Loren", "bank_id": 9},
    }
    responses.get(
        RESOLVE_URL,
        json=body,
        match=[
            responses.matchers.query_param_matcher(
                {"account_number": "0001234567", "bank_code": "058"}
            ),
            responses.matchers.header_matcher({"Authorization": "Bearer sk_test_paystack_secret"}),
        ],
    )
    result = _resolve(paystack)
    assert result.account_name == "Doe Jane Loren"
    assert result.account_number == "0001234567"
    assert result.bank_code == "058"
    assert result.provider == "paystack"
    assert result.raw_response == body


@pytest.mark.parametrize("status", [400, 404, 422])
@responses.activate
def test_paystack_client_errors_mean_not_resolved(paystack, status: int) -> None:
    body = {"status": False, "message": "Could not resolve account name. Check parameters."}
    responses.get(RESOLVE_URL, json=body, status=status)
    with pytest.raises(AccountNotResolvedError) as caught:
        _resolve(paystack)
    assert caught.value.raw_response == body


@responses.activate
def test_paystack_status_false_means_not_resolved(paystack) -> None:
    responses.get(RESOLVE_URL, json={"status": False, "message": "Unknown"}, status=200)
    with pytest.raises(AccountNotResolvedError):
        _resolve(paystack)


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429, 401])
@responses.activate
def test_paystack_server_errors_mean_unavailable(paystack, status: int) -> None:
    responses.get(RESOLVE_URL, json={"status": False, "message": "Error"}, status=status)
    with pytest.raises(NameEnquiryUnavailableError):
        _resolve(paystack)


@responses.activate
def test_paystack_timeout_means_unavailable(paystack) -> None:
    responses.get(RESOLVE_URL, body=requests.exceptions.ReadTimeout("timed out"))
    with pytest.raises(NameEnquiryUnavailableError, match="timed out"):
        _resolve(paystack)


@responses.activate
def test_paystack_connection_error_means_unavailable(paystack) -> None:
    responses.get(RESOLVE_URL, body=requests.exceptions.ConnectionError("refused"))
    with pytest.raises(NameEnquiryUnavailableError):
        _resolve(paystack)


@responses.activate
def test_paystack_unreadable_success_body_means_unavailable(paystack) -> None:
    responses.get(RESOLVE_URL, body="<html>gateway</html>", status=200)
    with pytest.raises(NameEnquiryUnavailableError):
        _resolve(paystack)


@responses.activate
def test_paystack_without_a_secret_key_is_unavailable_and_sends_nothing(settings) -> None:
    settings.PAYSTACK_SECRET_KEY = ""
    with pytest.raises(NameEnquiryUnavailableError):
        _resolve(PaystackNameEnquiryProvider())
    assert len(responses.calls) == 0


# --- Service (live mode goes through the Paystack adapter) -------------------------------------


@pytest.mark.django_db
@responses.activate
def test_live_name_enquiry_resolves_through_paystack(paystack) -> None:
    responses.get(
        RESOLVE_URL,
        json={
            "status": True,
            "message": "Account number resolved",
            "data": {"account_number": "0001234567", "account_name": "Doe Jane Loren"},
        },
    )
    result = name_enquiry_resolve(mode="live", account_number="0001234567", bank_code="058")
    assert result.account_name == "Doe Jane Loren"
    assert result.reference.startswith("NE-")


@pytest.mark.django_db
@responses.activate
def test_live_name_enquiry_maps_4xx_to_400(paystack) -> None:
    responses.get(RESOLVE_URL, json={"status": False, "message": "Could not resolve"}, status=422)
    with pytest.raises(ApplicationError) as caught:
        name_enquiry_resolve(mode="live", account_number="0001234567", bank_code="058")
    assert caught.value.status == 400
    assert caught.value.message == "Beneficiary account name could not be resolved"


@pytest.mark.django_db
@responses.activate
def test_live_name_enquiry_maps_timeout_to_503(paystack) -> None:
    responses.get(RESOLVE_URL, body=requests.exceptions.ConnectTimeout("timed out"))
    with pytest.raises(ServiceUnavailableError) as caught:
        name_enquiry_resolve(mode="live", account_number="0001234567", bank_code="058")
    assert caught.value.status == 503
    assert caught.value.headers == {"Retry-After": "5"}


@pytest.mark.django_db
@responses.activate
def test_live_name_enquiry_through_the_api(paystack, live_client) -> None:
    responses.get(RESOLVE_URL, json={"status": False, "message": "Server error"}, status=500)
    response = live_client.post(
        "/api/v1/transactions/in/merchant-wallet/payouts/name-enquiry",
        {"account_number": "0001234567", "bank_code": "058"},
        format="json",
    )
    assert response.status_code == 503
    assert response.json()["message"] == (
        "Name enquiry temporarily unavailable, retry after a short delay"
    )


@pytest.mark.django_db
@responses.activate
def test_unknown_bank_is_refused_before_calling_the_provider(paystack) -> None:
    with pytest.raises(ApplicationError, match="Beneficiary bank could not be resolved"):
        name_enquiry_resolve(mode="live", account_number="0001234567", bank_code="000")
    assert len(responses.calls) == 0
