"""Fixtures for the beneficiary tests: a recording name enquiry, funded wallets, clients of a
second merchant."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from merchants.models import Mode
from merchants.services import MerchantCreated, merchant_create
from tests.beneficiaries.helpers import RECORDING_PROVIDER, RecordingNameEnquiryProvider
from tests.payouts.helpers import fund_wallet
from wallets.models import Wallet
from wallets.selectors import wallet_get


@pytest.fixture(autouse=True)
def name_enquiry(settings: Any) -> Iterator[type[RecordingNameEnquiryProvider]]:
    """Name enquiry in both modes through the sandbox's answers, recorded."""
    settings.NAME_ENQUIRY_PROVIDERS = {"test": RECORDING_PROVIDER, "live": RECORDING_PROVIDER}
    RecordingNameEnquiryProvider.reset()
    yield RecordingNameEnquiryProvider
    RecordingNameEnquiryProvider.reset()


@pytest.fixture
def funded_wallet(merchant_account: MerchantCreated) -> Wallet:
    """The merchant's test wallet with NGN 100,000.00 available."""
    return fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "100000.00")


@pytest.fixture
def other_merchant(db: None) -> MerchantCreated:
    return merchant_create(name="Bola Foods", email="bola@example.com")


@pytest.fixture
def other_client(other_merchant: MerchantCreated, client_for: Callable[[str], APIClient]):
    """An API client of another merchant, test mode."""
    return client_for(other_merchant.test_key.plaintext)
