"""The pooled Redis cache backend and the one-round-trip window counter, on real Redis and on
local memory (the embedded default)."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.core.cache.backends.locmem import LocMemCache

from core.cache import (
    CacheUnavailable,
    PooledRedisCache,
    RedisCircuit,
    cache_outage_counts,
    cache_window_hit,
    redis_window_open,
)

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


# --- Redis unavailable ---------------------------------------------------------------------------


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cache_at(url: str) -> PooledRedisCache:
    return PooledRedisCache(
        url, {"OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25}}
    )


def test_reads_miss_and_writes_are_dropped_when_redis_is_down() -> None:
    backend = _cache_at(f"redis://127.0.0.1:{_dead_port()}/0")
    assert backend.get("banks", "missing") == "missing"
    backend.set("banks", [1, 2])
    assert backend.add("banks", 1) is False
    assert backend.delete("banks") is False
    assert backend.get_many(["a", "b"]) == {}
    with pytest.raises(CacheUnavailable):
        cache_window_hit(backend, "w:2", timeout=60, previous_key="w:1")
    with pytest.raises(CacheUnavailable):
        redis_window_open(backend, "window", milliseconds=100)


def test_a_black_holed_redis_costs_the_socket_timeout_then_nothing_while_the_circuit_is_open() -> (
    None
):
    with socket.socket() as listener:  # accepts connections (backlog) and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        backend = _cache_at(f"redis://127.0.0.1:{listener.getsockname()[1]}/0")
        started = time.monotonic()
        assert backend.get("a") is None
        first = time.monotonic() - started
        skipped_before = cache_outage_counts().get("redis_skipped", 0)
        started = time.monotonic()
        for _ in range(20):
            assert backend.get("a") is None
        rest = time.monotonic() - started
    assert first < 1.0
    assert rest < 0.05, "the open circuit does not call Redis again"
    assert cache_outage_counts()["redis_skipped"] == skipped_before + 20


def test_the_circuit_backs_off_and_closes_again_on_success(caplog) -> None:
    now = [100.0]
    circuit = RedisCircuit("test redis", clock=lambda: now[0])
    calls: list[str] = []

    def down() -> None:
        calls.append("down")
        raise redis.ConnectionError("refused")

    with caplog.at_level(logging.WARNING, logger="core.cache"):
        with pytest.raises(CacheUnavailable):
            circuit.call(down)
        with pytest.raises(CacheUnavailable):
            circuit.call(down)  # open: not called
        assert calls == ["down"]
        now[0] += RedisCircuit.MIN_OPEN_SECONDS
        with pytest.raises(CacheUnavailable):
            circuit.call(down)  # tried again, failed: open twice as long
        assert calls == ["down", "down"]
        now[0] += RedisCircuit.MIN_OPEN_SECONDS
        with pytest.raises(CacheUnavailable):
            circuit.call(down)
        assert calls == ["down", "down"]
        now[0] += RedisCircuit.MIN_OPEN_SECONDS
        assert circuit.call(lambda: "up") == "up"
        assert circuit.call(lambda: "up again") == "up again"
    messages = [r.getMessage() for r in caplog.records if r.name == "core.cache"]
    assert len(messages) == 2, messages  # the outage once (within a minute), the recovery once
    assert "test redis unavailable (refused)" in messages[0]
    assert "test redis is back after 2 consecutive failure(s)" in messages[1]


@pytest.mark.multiprocess
def test_redis_settings_give_the_cache_short_socket_timeouts() -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    env.update(CACHE_URL="redis://127.0.0.1:6379/1", DJANGO_SETTINGS_MODULE="config.settings.local")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; "
            "c = settings.CACHES['default']; print(c['BACKEND'], c['OPTIONS'])",
        ],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == (
        "core.cache.PooledRedisCache {'socket_connect_timeout': 0.25, 'socket_timeout': 0.25}"
    )


def test_instances_of_one_cache_share_its_client_and_circuit() -> None:
    """Django keeps one cache instance per thread and context, and the web server runs each
    request in a copy of its thread's context, so every request builds an instance: they must
    share one client (one pool of Redis connections, not a new connection per request) and one
    circuit (an outage seen by one request is remembered by the next)."""
    import contextvars

    from django.core.cache import CacheHandler

    settings_ = {
        "default": {
            "BACKEND": "core.cache.PooledRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": f"t{uuid.uuid4().hex[:8]}",
        }
    }
    handler = CacheHandler(settings_)
    per_request = [contextvars.copy_context().run(lambda: handler["default"]) for _ in range(3)]
    assert len({id(backend) for backend in per_request}) == 3  # one instance per request context
    assert {id(backend._cache) for backend in per_request} == {id(per_request[0]._cache)}
    assert {id(backend.circuit) for backend in per_request} == {id(per_request[0].circuit)}
    other = PooledRedisCache(REDIS_URL, {"KEY_PREFIX": f"o{uuid.uuid4().hex[:8]}"})
    assert other._cache is not per_request[0]._cache


def test_an_outage_seen_by_one_instance_opens_the_circuit_for_the_next() -> None:
    url = f"redis://127.0.0.1:{_dead_port()}/0"
    first, second = _cache_at(url), _cache_at(url)
    with pytest.raises(CacheUnavailable):
        first.incr("counter")
    with pytest.raises(CacheUnavailable, match="circuit open"):
        second.incr("counter")
