"""Flutterwave's name enquiry (``POST /accounts/resolve``) and bank list (``GET /banks/NG``)
against answers shaped like its documented ones (``responses``), and their place behind the
service's name-enquiry seam (``NAME_ENQUIRY_PROVIDERS``).

Shapes from https://flutterwavedoc.readme.io/docs/bank-account-verification (``POST
/v3/accounts/resolve`` with ``account_number`` and ``account_bank``, "Account details fetched")
and https://developer.flutterwave.com/docs/verifications/bank-account; the bank list as
``GET /v3/banks/NG`` answers it (``id``, ``code``, ``name``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import requests
import responses
from responses import matchers

from core.exceptions import ApplicationError, ServiceUnavailableError
from wallets.name_enquiry import name_enquiry_resolve
from wallets.providers.base import AccountNotResolvedError, NameEnquiryUnavailableError
from wallets.providers.flutterwave import (
    FlutterwaveBankListUnavailableError,
    FlutterwaveNameEnquiryProvider,
    ProviderBank,
    flutterwave_banks_missing,
)

BASE = "https://api.flutterwave.test/v3"
SECRET = "FLWSECK_TEST-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d-X"
RESOLVE_URL = f"{BASE}/accounts/resolve"
RESOLVED = {
    "status": "success",
    "message": "Account details fetched",
    "data": {"account_number": "0123456789", "account_name": "ADEYEMI TUNDE"},
}
NOT_RESOLVED = {
    "status": "error",
    "message": "Sorry, recipient account could not be validated. Please try again",
    "data": None,
}


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as mock:
        yield mock


@pytest.fixture
def provider() -> FlutterwaveNameEnquiryProvider:
    return FlutterwaveNameEnquiryProvider(base_url=BASE, secret_key=SECRET, timeout_seconds=2)


def resolve(provider: FlutterwaveNameEnquiryProvider):  # type: ignore[no-untyped-def]
    return provider.resolve_account(
        account_number="0123456789", bank_code="058", reference="NE-TEST-1"
    )


def test_a_resolved_account(rsps, provider) -> None:
    rsps.post(
        RESOLVE_URL,
        json=RESOLVED,
        match=[
            matchers.json_params_matcher({"account_number": "0123456789", "account_bank": "058"}),
            matchers.header_matcher({"Authorization": f"Bearer {SECRET}"}),
        ],
    )
    resolution = resolve(provider)
    assert resolution.account_name == "ADEYEMI TUNDE"
    assert resolution.bank_code == "058"
    assert resolution.provider == "flutterwave"
    assert resolution.exchange is not None
    assert SECRET not in json.dumps(resolution.exchange.as_dict())


def test_a_refused_account_is_not_resolved(rsps, provider) -> None:
    rsps.post(RESOLVE_URL, json=NOT_RESOLVED, status=400)
    with pytest.raises(AccountNotResolvedError):
        resolve(provider)


def test_an_answer_without_a_name_is_not_resolved(rsps, provider) -> None:
    rsps.post(RESOLVE_URL, json={**RESOLVED, "data": {"account_number": "0123456789"}})
    with pytest.raises(AccountNotResolvedError):
        resolve(provider)


@pytest.mark.parametrize("status_code", [401, 429, 500, 503])
def test_provider_trouble_is_unavailable(rsps, provider, status_code: int) -> None:
    rsps.post(RESOLVE_URL, json=NOT_RESOLVED, status=status_code)
    with pytest.raises(NameEnquiryUnavailableError):
        resolve(provider)


@pytest.mark.parametrize("error", [requests.ConnectTimeout(), requests.ReadTimeout()])
def test_timeouts_are_unavailable(rsps, provider, error) -> None:
    rsps.post(RESOLVE_URL, body=error)
    with pytest.raises(NameEnquiryUnavailableError, match="timed out"):
        resolve(provider)


def test_unreadable_json_is_unavailable(rsps, provider) -> None:
    rsps.post(RESOLVE_URL, body="<html>", status=200)
    with pytest.raises(NameEnquiryUnavailableError):
        resolve(provider)


def test_no_key_is_unavailable_and_sends_nothing(rsps) -> None:
    provider = FlutterwaveNameEnquiryProvider(base_url=BASE, secret_key="", timeout_seconds=2)
    with pytest.raises(NameEnquiryUnavailableError, match="not configured"):
        resolve(provider)
    assert len(rsps.calls) == 0


@pytest.mark.django_db
def test_the_service_uses_it_for_live_name_enquiry(rsps, settings) -> None:
    settings.NAME_ENQUIRY_PROVIDERS = {
        **settings.NAME_ENQUIRY_PROVIDERS,
        "live": "wallets.providers.flutterwave.FlutterwaveNameEnquiryProvider",
    }
    settings.FLUTTERWAVE_BASE_URL = BASE
    settings.FLUTTERWAVE_SECRET_KEY = SECRET
    rsps.post(RESOLVE_URL, json=RESOLVED)
    result = name_enquiry_resolve(mode="live", account_number="0123456789", bank_code="058")
    assert result.account_name == "ADEYEMI TUNDE"
    assert result.provider == "flutterwave"
    rsps.post(RESOLVE_URL, json=NOT_RESOLVED, status=400)
    with pytest.raises(ApplicationError):
        name_enquiry_resolve(mode="live", account_number="0123456789", bank_code="058")
    rsps.post(RESOLVE_URL, json=NOT_RESOLVED, status=503)
    with pytest.raises(ServiceUnavailableError):
        name_enquiry_resolve(mode="live", account_number="0123456789", bank_code="058")


def test_the_bank_list(rsps, provider) -> None:
    rsps.get(
        f"{BASE}/banks/NG",
        json={
            "status": "success",
            "message": "Banks fetched successfully",
            "data": [
                {"id": 132, "code": "560", "name": "Page MFBank"},
                {"id": 191, "code": "044", "name": "Access Bank"},
                {"id": 194, "code": "058", "name": "GTBank Plc"},
                {"id": 195, "code": None, "name": "No code"},
            ],
        },
    )
    banks = provider.banks()
    assert banks == [
        ProviderBank(bank_code="560", name="Page MFBank"),
        ProviderBank(bank_code="044", name="Access Bank"),
        ProviderBank(bank_code="058", name="GTBank Plc"),
    ]
    assert flutterwave_banks_missing(["058", "044", "999", "011"], banks) == ["011", "999"]


@pytest.mark.parametrize("status_code", [401, 500])
def test_the_bank_list_unavailable(rsps, provider, status_code: int) -> None:
    rsps.get(f"{BASE}/banks/NG", json=NOT_RESOLVED, status=status_code)
    with pytest.raises(FlutterwaveBankListUnavailableError):
        provider.banks()
