from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from itertools import count
from typing import Any

import pytest
from django.test import Client

from merchants.models import Mode
from merchants.services import MerchantCreated
from wallets.api.views import funding_signature_compute
from wallets.models import Wallet
from wallets.selectors import wallet_get
from wallets.services import FundingResult, wallet_fund

WEBHOOK_SECRET = "test-funding-webhook-secret"
_references = count(1)


@pytest.fixture
def test_wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)


@pytest.fixture
def live_wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.LIVE)


@pytest.fixture
def fund() -> Callable[..., FundingResult]:
    """Funds a wallet through the service with a fresh provider reference."""

    def do_fund(wallet: Wallet, amount: str, reference: str | None = None) -> FundingResult:
        return wallet_fund(
            wallet_id=wallet.pk,
            amount=Decimal(amount),
            reference=reference or f"PRV-TEST-{next(_references)}",
        )

    return do_fund


@pytest.fixture
def webhook_secret(settings: Any) -> str:
    settings.FUNDING_WEBHOOK_SECRET = WEBHOOK_SECRET
    return WEBHOOK_SECRET


@pytest.fixture
def post_funding(webhook_secret: str) -> Callable[..., Any]:
    """Posts a provider notification signed with the configured secret (or ``signature``)."""

    def post(payload: dict[str, Any] | bytes, *, signature: str | None = None) -> Any:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = {}
        if signature is None:
            signature = funding_signature_compute(body, secret=webhook_secret)
        if signature != "":
            headers["HTTP_X_PROVIDER_SIGNATURE"] = signature
        return Client().post(
            "/api/v1/webhooks/funding", data=body, content_type="application/json", **headers
        )

    return post
