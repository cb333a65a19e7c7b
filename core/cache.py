"""The Redis cache backend (``CACHE_URL=redis://…``) with one client per process, the counter
the rate limits use, and the shared window the dispatch wake opens.

Django's Redis client builds a new ``redis.Redis`` object for every cache call; this one keeps
one per server, and every instance of one configured cache in a process shares that client and
its connection pools (Django makes an instance per request under the web server, see
``_SHARED``), which takes a visible share off every request that touches the cache.

Redis is a cache here, never the record: when it is down the backend degrades instead of
failing the request. Reads miss, writes and deletes are dropped, and the calls that need an
answer (the rate-limit counter, the dispatch wake's window) raise :class:`CacheUnavailable`
for their caller to decide. The client's sockets time out within ``CACHE_SOCKET_TIMEOUT``
(settings), and a per-process circuit (:class:`RedisCircuit`) stops calling a Redis that just
failed for a backoff that doubles up to ``MAX_OPEN_SECONDS``, so an outage costs one short
timeout per backoff period rather than one per request. A warning is logged when the circuit
opens and at most every ``LOG_EVERY_SECONDS`` while it stays open; :func:`cache_outage_counts`
reads this process's counters.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from django.core.cache import BaseCache
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

logger = logging.getLogger(__name__)

T = TypeVar("T")


class CacheUnavailable(Exception):  # noqa: N818 - reads as the condition it reports
    """Redis did not answer (or the circuit is open after it just failed)."""


_counts: Counter[str] = Counter()
_counts_lock = threading.Lock()


def cache_outage_count(name: str, increment: int = 1) -> None:
    """Adds to one of this process's outage counters (see :func:`cache_outage_counts`)."""
    with _counts_lock:
        _counts[name] += increment


def cache_outage_counts() -> dict[str, int]:
    """This process's counters since it started: ``redis_errors`` (calls that failed),
    ``redis_skipped`` (calls not made while the circuit was open), and the rate limiter's
    ``throttle_failed_open:<scope>`` / ``throttle_failed_closed:<scope>``."""
    with _counts_lock:
        return dict(_counts)


class RedisCircuit:
    """Per process: after a failure, calls are refused at once for a backoff (``MIN_OPEN_SECONDS``,
    doubling per consecutive failure up to ``MAX_OPEN_SECONDS``); the first call after it tries
    Redis again, and one success closes the circuit. Thread-safe."""

    MIN_OPEN_SECONDS = 1.0
    MAX_OPEN_SECONDS = 30.0
    LOG_EVERY_SECONDS = 60.0

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._open_until = 0.0
        self._logged_at = -float("inf")
        self._skipped_since_log = 0

    def call(self, operation: Callable[[], T]) -> T:
        """``operation()``, or :class:`CacheUnavailable` if it fails with a Redis error or the
        circuit is open."""
        with self._lock:
            if self._failures and self.clock() < self._open_until:
                self._skipped_since_log += 1
                skipped = True
            else:
                skipped = False
        if skipped:
            cache_outage_count("redis_skipped")
            self._log_if_due(None)
            raise CacheUnavailable(f"{self.name}: circuit open after a failure")
        try:
            result = operation()
        except (redis.RedisError, OSError) as error:
            self._failed(error)
            raise CacheUnavailable(f"{self.name}: {error}") from error
        if self._failures:
            self._recovered()
        return result

    def _failed(self, error: BaseException) -> None:
        cache_outage_count("redis_errors")
        with self._lock:
            self._failures += 1
            backoff = min(
                self.MAX_OPEN_SECONDS, self.MIN_OPEN_SECONDS * 2 ** min(self._failures - 1, 16)
            )
            self._open_until = self.clock() + backoff
            first = self._failures == 1
        self._log_if_due(error, force=first)

    def _log_if_due(self, error: BaseException | None, *, force: bool = False) -> None:
        with self._lock:
            now = self.clock()
            if not force and now - self._logged_at < self.LOG_EVERY_SECONDS:
                return
            self._logged_at = now
            skipped, self._skipped_since_log = self._skipped_since_log, 0
            failures = self._failures
        logger.warning(
            "%s unavailable (%s): degrading; %d consecutive failure(s), %d call(s) skipped "
            "since the last warning; counters %s",
            self.name,
            error or "circuit open",
            failures,
            skipped,
            cache_outage_counts(),
        )

    def _recovered(self) -> None:
        with self._lock:
            failures, self._failures = self._failures, 0
            self._open_until = 0.0
            self._logged_at = -float("inf")
        logger.warning("%s is back after %d consecutive failure(s)", self.name, failures)


class PooledRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)  # type: ignore[attr-defined]  # RedisCacheClient internals, undeclared in django-stubs
        client = self._clients.get(index)
        if client is None:
            client = self._client(connection_pool=self._get_connection_pool(write))  # type: ignore[attr-defined]  # as above
            self._clients[index] = client
        return client


# The client (its connection pools) and the circuit of each configured cache, shared by every
# instance of it in this process. Django keeps one cache instance per thread *and context*, and
# the web server runs each request in a copy of its thread's context (a2wsgi), so without this
# every request built a new instance: a new client, a new TCP connection to Redis (8 % of the
# create's wall time in a profile) and a fresh circuit that forgot an outage.
_SHARED_LOCK = threading.Lock()
_SHARED: dict[tuple[str, ...], tuple[PooledRedisCacheClient, RedisCircuit]] = {}


class PooledRedisCache(RedisCache):
    """Reads miss, writes are dropped while Redis is unavailable (see the module docstring);
    ``incr`` and :meth:`window_hit` raise :class:`CacheUnavailable` instead. Every instance of
    one configured cache in a process shares its client and circuit (``_SHARED``)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = PooledRedisCacheClient
        servers: list[str] = self._servers  # type: ignore[attr-defined]  # set by RedisCache
        options: dict[str, Any] = self._options  # type: ignore[attr-defined]  # as above
        shared_key = (*servers, repr(sorted(options.items())), self.key_prefix)
        with _SHARED_LOCK:
            shared = _SHARED.get(shared_key)
            if shared is None:
                shared = (
                    PooledRedisCacheClient(servers, **options),
                    RedisCircuit(f"Redis cache {servers[0].rsplit('@', 1)[-1]}"),
                )
                _SHARED[shared_key] = shared
        self._shared_client, self.circuit = shared

    @property
    def _cache(self) -> PooledRedisCacheClient:  # RedisCache declares a cached_property
        return self._shared_client

    def _degrading(self, operation: Callable[[], T], fallback: T) -> T:
        try:
            return self.circuit.call(operation)
        except CacheUnavailable:
            return fallback

    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> bool:
        return self._degrading(
            lambda: super(PooledRedisCache, self).add(key, value, timeout, version), False
        )

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        return self._degrading(
            lambda: super(PooledRedisCache, self).get(key, default, version), default
        )

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> None:
        self._degrading(
            lambda: super(PooledRedisCache, self).set(key, value, timeout, version), None
        )

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> bool:
        return self._degrading(
            lambda: super(PooledRedisCache, self).touch(key, timeout, version), False
        )

    def delete(self, key: Any, version: Any = None) -> bool:
        return self._degrading(lambda: super(PooledRedisCache, self).delete(key, version), False)

    def get_many(self, keys: Any, version: Any = None) -> dict[Any, Any]:
        return self._degrading(lambda: super(PooledRedisCache, self).get_many(keys, version), {})

    def has_key(self, key: Any, version: Any = None) -> bool:
        return self._degrading(lambda: super(PooledRedisCache, self).has_key(key, version), False)

    def set_many(self, data: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> list[Any]:
        return self._degrading(
            lambda: super(PooledRedisCache, self).set_many(data, timeout, version), list(data)
        )

    def delete_many(self, keys: Any, version: Any = None) -> None:
        self._degrading(lambda: super(PooledRedisCache, self).delete_many(keys, version), None)

    def clear(self) -> None:
        self._degrading(lambda: super(PooledRedisCache, self).clear(), None)

    def incr(self, key: Any, delta: int = 1, version: Any = None) -> int:
        return self.circuit.call(lambda: super(PooledRedisCache, self).incr(key, delta, version))

    def window_hit(self, key: str, *, timeout: int, previous_key: str) -> tuple[int, int]:
        """Counts one hit on ``key`` (expiring after ``timeout`` seconds) and reads the count
        under ``previous_key``, in one round trip."""
        key = self.make_and_validate_key(key)
        previous_key = self.make_and_validate_key(previous_key)

        def hit() -> tuple[Any, Any]:
            pipeline = self._cache.get_client(key, write=True).pipeline(transaction=False)
            pipeline.incr(key)
            pipeline.expire(key, timeout)
            pipeline.get(previous_key)
            current, _expire_set, previous = pipeline.execute()
            return current, previous

        current, previous = self.circuit.call(hit)
        return int(current), int(previous or 0)


def redis_window_open(cache: PooledRedisCache, key: str, *, milliseconds: int) -> bool:
    """Opens the window ``key`` for ``milliseconds`` unless it is open already: True for the
    one caller, across every process and host on this Redis, that opened it (one ``SET NX
    PX``, timed by the Redis server's clock). :class:`CacheUnavailable` when Redis is down."""
    key = cache.make_and_validate_key(key)
    client = cache._cache.get_client(key, write=True)
    return bool(cache.circuit.call(lambda: client.set(key, 1, nx=True, px=max(1, milliseconds))))


def redis_window_open_for(
    cache: PooledRedisCache, key: str, *, milliseconds: int
) -> tuple[bool, int]:
    """Opens the window ``key`` for ``milliseconds`` unless it is open already (``SET NX PX``, as
    :func:`redis_window_open`) and reads how long it stays open (``PTTL``), in one round trip:
    ``(opened, milliseconds left)``, timed by the Redis server's clock when it answered. The time
    left is 0 or less when the window closed between the two commands.
    :class:`CacheUnavailable` when Redis is down."""
    key = cache.make_and_validate_key(key)
    client = cache._cache.get_client(key, write=True)

    def open_for() -> tuple[bool, int]:
        pipeline = client.pipeline(transaction=False)
        pipeline.set(key, 1, nx=True, px=max(1, milliseconds))
        pipeline.pttl(key)
        opened, left = pipeline.execute()
        return bool(opened), int(left)

    return cache.circuit.call(open_for)


def cache_window_hit(
    cache: BaseCache, key: str, *, timeout: int, previous_key: str
) -> tuple[int, int]:
    """``(hits in the current window including this one, hits in the previous window)``.

    One round trip on :class:`PooledRedisCache`; any other backend (local memory on the
    embedded defaults) uses ``add``/``incr``/``get``. Pass the backend itself
    (``caches["default"]``), not the ``django.core.cache.cache`` proxy. Raises
    :class:`CacheUnavailable` when a Redis backend is down.
    """
    if isinstance(cache, PooledRedisCache):
        return cache.window_hit(key, timeout=timeout, previous_key=previous_key)
    cache.add(key, 0, timeout)
    try:
        current = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout)
        current = 1
    return int(current), int(cache.get(previous_key) or 0)
