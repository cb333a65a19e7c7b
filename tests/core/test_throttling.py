from __future__ import annotations

import logging
import math
import os
import socket
import uuid
from typing import Any

import pytest
import redis
from django.core.cache import cache
from rest_framework.settings import api_settings

from core.api import throttling
from core.api.throttling import SecretKeyRateThrottle
from core.cache import cache_outage_counts
from tests.merchants.factories import RestrictedKeyFactory

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


def test_limits_are_per_mode(test_client, live_client, tight_rates) -> None:
    for _ in range(2):
        test_client.get("/t/unauthorized")
    assert test_client.get("/t/unauthorized").status_code == 429
    assert live_client.get("/t/unauthorized").status_code == 200


def test_every_key_of_a_merchant_and_mode_shares_one_budget(
    test_client, merchant_account, client_for, tight_rates
) -> None:
    restricted = client_for(RestrictedKeyFactory(merchant=merchant_account.merchant).plaintext)
    assert test_client.get("/t/unauthorized").status_code == 200
    assert restricted.get("/t/unauthorized").status_code == 200
    assert restricted.get("/t/unauthorized").status_code == 429
    assert test_client.get("/t/unauthorized").status_code == 429
    other = client_for(RestrictedKeyFactory().plaintext)  # another merchant's
    assert other.get("/t/unauthorized").status_code == 200


def test_reads_and_writes_are_counted_separately(test_client, tight_rates) -> None:
    for _ in range(2):
        test_client.get("/t/unauthorized")
    response = test_client.post("/t/unauthorized", {"amount": "1.00"}, format="json")
    assert response.status_code == 200


def test_default_rates_are_configured() -> None:
    rates = api_settings.DEFAULT_THROTTLE_RATES
    assert {"read", "write", "name_enquiry"} <= set(rates)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The throttle's clock, set by the test: starts 30 s into a minute window."""
    now = [1_800_000_030.0]
    monkeypatch.setattr(throttling.time, "time", lambda: now[0])
    return now


def test_previous_window_weighs_by_its_overlap(test_client, clock, monkeypatch) -> None:
    cache.clear()
    monkeypatch.setattr(SecretKeyRateThrottle, "THROTTLE_RATES", {"read": "4/min"})
    for _ in range(4):
        assert test_client.get("/t/unauthorized").status_code == 200
    clock[0] += 45  # 15 s into the next window: the previous 4 hits weigh 0.75 × 4 = 3
    assert test_client.get("/t/unauthorized").status_code == 200  # 3 + 1 ≤ 4
    refused = test_client.get("/t/unauthorized")  # 3 + 2 > 4
    assert refused.status_code == 429
    # One more is allowed once 3 hits of this window plus the fading previous ones fit:
    # 3 + 4 × (1 − (15 + t)/60) ≤ 4 → t = 30 s.
    assert refused["Retry-After"] == "30"
    clock[0] += 29
    assert test_client.get("/t/unauthorized").status_code == 429
    clock[0] += 31 + 60  # two windows on: everything forgotten
    assert test_client.get("/t/unauthorized").status_code == 200


def test_retry_after_reaches_into_the_next_window_when_this_one_is_full(
    test_client, clock, monkeypatch
) -> None:
    cache.clear()
    monkeypatch.setattr(SecretKeyRateThrottle, "THROTTLE_RATES", {"read": "2/min"})
    assert test_client.get("/t/unauthorized").status_code == 200
    assert test_client.get("/t/unauthorized").status_code == 200
    refused = test_client.get("/t/unauthorized")
    assert refused.status_code == 429
    # 30 s left in this window; then its 3 hits weigh 3 × (1 − s/60) + 1 ≤ 2 → s = 40 s.
    assert refused["Retry-After"] == "70"
    clock[0] += 69
    assert test_client.get("/t/unauthorized").status_code == 429
    clock[0] += 60 + 1  # past the refused request's own weight as well
    assert test_client.get("/t/unauthorized").status_code == 200


def test_throttle_counts_in_redis_when_the_cache_is_redis(
    test_client, tight_rates, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.cache import PooledRedisCache

    round_trips: list[str] = []
    counted = PooledRedisCache.window_hit

    def window_hit(self: PooledRedisCache, key: str, **kwargs: Any) -> tuple[int, int]:
        round_trips.append(key)
        return counted(self, key, **kwargs)

    monkeypatch.setattr(PooledRedisCache, "window_hit", window_hit)
    redis_url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    settings.CACHES = {
        "default": {
            "BACKEND": "core.cache.PooledRedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": f"throttle-test-{uuid.uuid4().hex[:8]}",
        }
    }
    try:
        assert test_client.get("/t/unauthorized").status_code == 200
        assert test_client.get("/t/unauthorized").status_code == 200
        assert test_client.get("/t/unauthorized").status_code == 429
        keys = redis.Redis.from_url(redis_url).keys(f"{settings.CACHES['default']['KEY_PREFIX']}:*")
        assert keys, "the counters live in Redis"
        assert len(round_trips) == 3, "each request counted in one pipelined round trip"
    finally:
        cache.clear()


@pytest.fixture
def dead_redis_cache(settings, tight_rates) -> str:
    """The default cache is Redis at a port where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings.CACHES = {
        "default": {
            "BACKEND": "core.cache.PooledRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25},
        }
    }
    return f"redis://127.0.0.1:{port}/0"


def test_a_read_fails_open_when_the_cache_is_down(
    test_client, dead_redis_cache, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    monkeypatch.setattr(throttling, "_outage_logged_at", -math.inf)
    before = cache_outage_counts().get("throttle_failed_open:read", 0)
    with caplog.at_level(logging.WARNING, logger="core.api.throttling"):
        statuses = [test_client.get("/t/unauthorized").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 200]  # over the 2/min rate: nothing is counted
    assert cache_outage_counts()["throttle_failed_open:read"] == before + 4
    warnings = [r for r in caplog.records if r.name == "core.api.throttling"]
    assert len(warnings) == 1, "one warning per period, not one per request"
    assert "rate limits cannot be checked" in warnings[0].getMessage()


def test_a_fail_closed_scope_answers_503_with_retry_after_when_the_cache_is_down(
    test_client, dead_redis_cache, settings
) -> None:
    settings.THROTTLE_FAIL_CLOSED_SCOPES = frozenset({"read"})
    before = cache_outage_counts().get("throttle_failed_closed:read", 0)
    response = test_client.get("/t/unauthorized")
    assert response.status_code == 503
    assert response["Retry-After"] == str(throttling.OUTAGE_RETRY_AFTER_SECONDS)
    assert response.json()["status"] is False
    assert cache_outage_counts()["throttle_failed_closed:read"] == before + 1


def test_name_enquiry_fails_closed_by_default() -> None:
    from django.conf import settings as django_settings

    assert "name_enquiry" in django_settings.THROTTLE_FAIL_CLOSED_SCOPES
    assert "write" not in django_settings.THROTTLE_FAIL_CLOSED_SCOPES
    assert "read" not in django_settings.THROTTLE_FAIL_CLOSED_SCOPES
