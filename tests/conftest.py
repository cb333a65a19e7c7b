"""Fixtures shared by every test module."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from merchants.models import Mode
from merchants.services import MerchantCreated, merchant_create


@pytest.fixture(autouse=True)
def _clear_cache() -> None:
    """Each test starts with an empty cache and empty per-process memos: no stale bank list or
    fee tiers from rolled-back rows, no rate-limit counters, no dispatch wake interval left
    open by an earlier test."""
    from django.core.cache import cache

    from core.memo import local_memos_clear
    from payouts.tasks import dispatch_wake

    cache.clear()
    local_memos_clear()
    dispatch_wake.reset()


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def merchant_account(db: None) -> MerchantCreated:
    """A merchant created through the service: test and live keys, wallets per mode."""
    return merchant_create(name="Ade Stores", email="ade@example.com")


@pytest.fixture
def client_for() -> Callable[[str], APIClient]:
    def build(plaintext_key: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext_key}")
        return client

    return build


@pytest.fixture
def test_client(merchant_account: MerchantCreated, client_for) -> APIClient:
    """An API client authenticated with the merchant's test key."""
    return client_for(merchant_account.test_key.plaintext)


@pytest.fixture
def live_client(merchant_account: MerchantCreated, client_for) -> APIClient:
    return client_for(merchant_account.live_key.plaintext)


@pytest.fixture
def test_mode() -> str:
    return Mode.TEST
