from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.settings import api_settings

from core.api.throttling import SecretKeyRateThrottle

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.core.urls")]


@pytest.fixture
def tight_rates(monkeypatch: pytest.MonkeyPatch):
    cache.clear()
    monkeypatch.setattr(
        SecretKeyRateThrottle, "THROTTLE_RATES", {"read": "2/min", "write": "5/min"}
    )
    yield
    cache.clear()


def test_reads_over_the_rate_get_429_with_retry_after(test_client, tight_rates) -> None:
    assert test_client.get("/t/unauthorized").status_code == 200
    assert test_client.get("/t/unauthorized").status_code == 200
    response = test_client.get("/t/unauthorized")
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert response.json()["status"] is False
    assert response.json()["statusCode"] == 429
    assert response.json()["data"] is None


def test_limits_are_per_secret_key(test_client, live_client, tight_rates) -> None:
    for _ in range(2):
        test_client.get("/t/unauthorized")
    assert test_client.get("/t/unauthorized").status_code == 429
    assert live_client.get("/t/unauthorized").status_code == 200


def test_reads_and_writes_are_counted_separately(test_client, tight_rates) -> None:
    for _ in range(2):
        test_client.get("/t/unauthorized")
    response = test_client.post("/t/unauthorized", {"amount": "1.00"}, format="json")
    assert response.status_code == 200


def test_default_rates_are_configured() -> None:
    rates = api_settings.DEFAULT_THROTTLE_RATES
    assert {"read", "write", "name_enquiry"} <= set(rates)
