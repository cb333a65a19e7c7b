"""Rate limits per secret key and route group (``THROTTLE_RATES`` in settings).

A view names its group with ``throttle_scope``; otherwise reads (GET/HEAD/OPTIONS) count against
``read`` and everything else against ``write``. The counters live in the default cache: Redis in
production (``CACHE_URL``), local memory on the embedded defaults.

The limit is a sliding window, estimated from two fixed windows: the hits of the current window
plus the previous window's hits weighted by how much of it still overlaps the last ``duration``
seconds. It costs one cache round trip per request (a counter increment), where a log of
timestamps costs a read and a write of the whole log. Refused requests count too, so a client
that keeps hammering stays limited until it slows down.

When the cache is down (``core.cache.CacheUnavailable``) a scope listed in
``THROTTLE_FAIL_CLOSED_SCOPES`` (name enquiry by default: each one costs a provider call) is
refused with 503 and ``Retry-After``; every other scope fails open, so reads and payout
creates keep answering. Either way the request is counted in ``cache_outage_counts()``
(``throttle_failed_open:<scope>`` / ``throttle_failed_closed:<scope>``) and a warning is
logged at most once per ``OUTAGE_LOG_EVERY_SECONDS`` per process.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any, cast

from django.conf import settings
from django.core.cache import caches
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from core.cache import CacheUnavailable, cache_outage_count, cache_outage_counts, cache_window_hit
from core.exceptions import ServiceUnavailableError

logger = logging.getLogger(__name__)

OUTAGE_LOG_EVERY_SECONDS = 60.0
OUTAGE_RETRY_AFTER_SECONDS = 5
_outage_log_lock = threading.Lock()
_outage_logged_at = -math.inf


def _outage_log(scope: str, *, failed_closed: bool) -> None:
    """One warning per ``OUTAGE_LOG_EVERY_SECONDS`` per process, with the counters."""
    global _outage_logged_at
    with _outage_log_lock:
        now = time.monotonic()
        if now - _outage_logged_at < OUTAGE_LOG_EVERY_SECONDS:
            return
        _outage_logged_at = now
    logger.warning(
        "rate limits cannot be checked (cache unavailable): scope %s %s; counters %s",
        scope,
        "refused with 503" if failed_closed else "let through",
        cache_outage_counts(),
    )


class SecretKeyRateThrottle(SimpleRateThrottle):
    num_requests: int  # parsed from a rate that is set: never None where read
    duration: int

    def __init__(self) -> None:  # the scope is known only per request
        self.scope = ""
        self.retry_after: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        self.scope = getattr(view, "throttle_scope", None) or (
            "read" if request.method in SAFE_METHODS else "write"
        )
        self.rate = self.THROTTLE_RATES.get(self.scope)
        if self.rate is None:
            return True
        self.num_requests, self.duration = cast(tuple[int, int], self.parse_rate(self.rate))
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        now = time.time()
        window = int(now // self.duration)
        elapsed = now - window * self.duration
        try:
            current, previous = cache_window_hit(
                caches["default"],
                f"{key}:{window}",
                timeout=2 * self.duration,
                previous_key=f"{key}:{window - 1}",
            )
        except CacheUnavailable:
            return self._cache_unavailable()
        overlap = 1 - elapsed / self.duration
        if current + previous * overlap <= self.num_requests:
            return True
        self.retry_after = self._seconds_until_allowed(
            current=current, previous=previous, elapsed=elapsed
        )
        return False

    def _cache_unavailable(self) -> bool:
        """Fails open (True) or, for ``THROTTLE_FAIL_CLOSED_SCOPES``, closed with 503."""
        scope = self.scope or ""
        failed_closed = scope in settings.THROTTLE_FAIL_CLOSED_SCOPES
        cache_outage_count(f"throttle_failed_{'closed' if failed_closed else 'open'}:{scope}")
        _outage_log(scope, failed_closed=failed_closed)
        if failed_closed:
            raise ServiceUnavailableError(
                "Temporarily unavailable; try again shortly",
                retry_after_seconds=OUTAGE_RETRY_AFTER_SECONDS,
            )
        return True

    def _seconds_until_allowed(self, *, current: int, previous: int, elapsed: float) -> float:
        """How long until one more request would be allowed, if none is sent meanwhile."""
        limit, duration = self.num_requests, self.duration
        remaining_window = duration - elapsed
        room = limit - current - 1
        if room >= 0 and previous > 0:
            # Still in this window: current + 1 + previous × (1 − (elapsed + t)/duration) ≤ limit
            wait = duration * (1 - room / previous) - elapsed
            if wait < remaining_window:
                return max(wait, 0.0)
        # In the next window this window's hits weigh as the previous ones.
        next_window_wait = max(0.0, duration * (1 - (limit - 1) / current)) if current else 0.0
        return remaining_window + next_window_wait

    def wait(self) -> float | None:
        if self.retry_after is None:
            return None
        return float(max(1, math.ceil(self.retry_after)))

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        """One budget per merchant and mode, shared by all its keys (the secret key, a rolled
        one still answering, restricted ones): more keys never buy more requests."""
        key: Any = request.auth
        merchant = getattr(key, "merchant", None)
        if key is None or merchant is None or not hasattr(key, "mode"):
            return None  # unauthenticated requests are refused before they cost anything
        return f"throttle:{self.scope}:{merchant.pk}:{key.mode}"
