"""Fixtures for the payout tests: funded wallets, request payloads, the ledger invariant."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from config.celery_app import app as celery_app
from merchants.models import Mode
from merchants.services import MerchantCreated
from payouts.services import PayoutCreateResult, payout_create
from tests.payouts.helpers import (
    GOOD_ACCOUNT,
    GTB_CODE,
    celery_client_reset,
    fund_wallet,
    new_idempotency_key,
)
from wallets.models import Wallet
from wallets.selectors import wallet_get


@pytest.fixture(scope="session", autouse=True)
def _in_memory_broker() -> Iterator[None]:
    """Tasks published by these tests (on_commit callbacks of transactional tests) go to an
    in-process broker, never to the developer's ``var/broker`` queue. The end-to-end test
    switches to Redis for itself."""
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
def payload() -> Callable[..., dict[str, Any]]:
    def build(**overrides: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "account_number": GOOD_ACCOUNT,
            "bank_code": GTB_CODE,
            "amount": "1000.00",
            "narration": "Invoice 42",
            "idempotency_key": new_idempotency_key(),
        }
        body.update(overrides)
        return {key: value for key, value in body.items() if value is not ...}

    return build


@pytest.fixture
def create_payout(merchant_account: MerchantCreated) -> Callable[..., PayoutCreateResult]:
    """Creates a test-mode payout through the service (the dispatch is not run)."""

    def create(**overrides: Any) -> PayoutCreateResult:
        arguments: dict[str, Any] = {
            "merchant": merchant_account.merchant,
            "mode": Mode.TEST,
            "account_number": GOOD_ACCOUNT,
            "bank_code": GTB_CODE,
            "amount": Decimal("1000.00"),
            "idempotency_key": new_idempotency_key(),
            "narration": "Invoice 42",
        }
        arguments.update(overrides)
        return payout_create(**arguments)

    return create


PAYSTACK_BASE = "https://api.paystack.test"
PAYSTACK_SECRET = "sk_test_paystack_secret_value"


@pytest.fixture
def live_mode(settings: Any, live_wallet: Wallet) -> Wallet:
    """Live mode against a mocked Paystack (``responses``); name enquiry through the sandbox
    so the tests mock only the transfer calls. Returns the live wallet, funded."""
    settings.NAME_ENQUIRY_PROVIDERS = {
        **settings.NAME_ENQUIRY_PROVIDERS,
        "live": "wallets.providers.sandbox.SandboxNameEnquiryProvider",
    }
    settings.PAYSTACK_BASE_URL = PAYSTACK_BASE
    settings.PAYSTACK_SECRET_KEY = PAYSTACK_SECRET
    return fund_wallet(live_wallet, "50000.00")
