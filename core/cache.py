"""The Redis cache backend (``CACHE_URL=redis://…``) with one client per process, the counter
the rate limits use, and the shared window the dispatch wake opens.

Django's Redis client builds a new ``redis.Redis`` object for every cache call; this one keeps
one per server (the connection pool was already shared), which takes a visible share off every
request that touches the cache.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import BaseCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient


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


class PooledRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = PooledRedisCacheClient

    def window_hit(self, key: str, *, timeout: int, previous_key: str) -> tuple[int, int]:
        """Counts one hit on ``key`` (expiring after ``timeout`` seconds) and reads the count
        under ``previous_key``, in one round trip."""
        key = self.make_and_validate_key(key)
        previous_key = self.make_and_validate_key(previous_key)
        pipeline = self._cache.get_client(key, write=True).pipeline(transaction=False)
        pipeline.incr(key)
        pipeline.expire(key, timeout)
        pipeline.get(previous_key)
        current, _expire_set, previous = pipeline.execute()
        return int(current), int(previous or 0)


def redis_window_open(cache: PooledRedisCache, key: str, *, milliseconds: int) -> bool:
    """Opens the window ``key`` for ``milliseconds`` unless it is open already: True for the
    one caller, across every process and host on this Redis, that opened it (one ``SET NX
    PX``, timed by the Redis server's clock)."""
    key = cache.make_and_validate_key(key)
    client = cache._cache.get_client(key, write=True)
    return bool(client.set(key, 1, nx=True, px=max(1, milliseconds)))


def cache_window_hit(
    cache: BaseCache, key: str, *, timeout: int, previous_key: str
) -> tuple[int, int]:
    """``(hits in the current window including this one, hits in the previous window)``.

    One round trip on :class:`PooledRedisCache`; any other backend (local memory on the
    embedded defaults) uses ``add``/``incr``/``get``. Pass the backend itself
    (``caches["default"]``), not the ``django.core.cache.cache`` proxy.
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
