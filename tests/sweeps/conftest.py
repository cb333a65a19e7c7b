"""Fixtures for the sweep tests: the merchant's wallets, funded, with an in-process broker for
what commits enqueue."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from config.celery_app import app as celery_app
from merchants.models import Mode
from merchants.services import MerchantCreated
from tests.payouts.helpers import celery_client_reset, fund_wallet
from wallets.models import Wallet
from wallets.selectors import wallet_get


@pytest.fixture(scope="session", autouse=True)
def _in_memory_broker() -> Iterator[None]:
    """Dispatch wakes published when a sweep's payout commits go to an in-process broker."""
    previous = (celery_app.conf.broker_url, celery_app.conf.broker_transport_options)
    celery_app.conf.broker_url = "memory://localhost/"
    celery_app.conf.broker_transport_options = {}
    celery_client_reset()
    yield
    celery_app.conf.broker_url, celery_app.conf.broker_transport_options = previous
    celery_client_reset()


@pytest.fixture
def test_wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)


@pytest.fixture
def live_wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.LIVE)


@pytest.fixture
def funded_wallet(test_wallet: Wallet) -> Wallet:
    """The merchant's test wallet with NGN 100,000.00 available."""
    return fund_wallet(test_wallet, "100000.00")


@pytest.fixture
def live_name_enquiry_sandbox(settings: Any) -> None:
    """Live-mode name enquiry answered by the sandbox (a setting, not a mock: the live provider
    would call Paystack)."""
    settings.NAME_ENQUIRY_PROVIDERS = {
        **settings.NAME_ENQUIRY_PROVIDERS,
        "live": "wallets.providers.sandbox.SandboxNameEnquiryProvider",
    }
