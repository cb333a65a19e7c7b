"""The pooled Redis cache backend and the one-round-trip window counter, on real Redis and on
local memory (the embedded default)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import redis
from django.core.cache.backends.locmem import LocMemCache

from core.cache import PooledRedisCache, cache_window_hit

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture
def redis_cache() -> Iterator[PooledRedisCache]:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"Redis at {REDIS_URL} is unreachable ({error})")
        pytest.skip(f"Redis at {REDIS_URL} is unreachable")
    backend = PooledRedisCache(REDIS_URL, {"KEY_PREFIX": f"t{uuid.uuid4().hex[:8]}"})
    yield backend
    client = backend._cache.get_client(write=True)
    for key in client.scan_iter(match=f"{backend.key_prefix}:*"):
        client.delete(key)


def test_one_redis_client_is_kept_per_process(redis_cache: PooledRedisCache) -> None:
    redis_cache.set("a", 1)
    client = redis_cache._cache.get_client("a", write=True)
    assert redis_cache.get("a") == 1
    assert redis_cache._cache.get_client("b", write=True) is client


def test_window_hit_counts_on_redis_and_reads_the_previous_window(
    redis_cache: PooledRedisCache,
) -> None:
    assert cache_window_hit(redis_cache, "w:2", timeout=60, previous_key="w:1") == (1, 0)
    assert cache_window_hit(redis_cache, "w:2", timeout=60, previous_key="w:1") == (2, 0)
    assert cache_window_hit(redis_cache, "w:3", timeout=60, previous_key="w:2") == (1, 2)
    client = redis_cache._cache.get_client(write=True)
    ttl = client.ttl(redis_cache.make_key("w:3"))
    assert 0 < ttl <= 60
    assert redis_cache.get("w:2") == 2  # the counter stays readable through the cache API


def test_window_hit_on_local_memory() -> None:
    backend = LocMemCache(f"window-{uuid.uuid4().hex}", {})
    assert cache_window_hit(backend, "w:2", timeout=60, previous_key="w:1") == (1, 0)
    assert cache_window_hit(backend, "w:2", timeout=60, previous_key="w:1") == (2, 0)
    assert cache_window_hit(backend, "w:3", timeout=60, previous_key="w:2") == (1, 2)
