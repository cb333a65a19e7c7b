"""Rate limits per secret key and route group (``THROTTLE_RATES`` in settings).

A view names its group with ``throttle_scope``; otherwise reads (GET/HEAD/OPTIONS) count against
``read`` and everything else against ``write``. The counters live in the default cache: Redis in
production (``CACHE_URL``), local memory on the embedded defaults.

The limit is a sliding window, estimated from two fixed windows: the hits of the current window
plus the previous window's hits weighted by how much of it still overlaps the last ``duration``
seconds. It costs one cache round trip per request (a counter increment), where a log of
timestamps costs a read and a write of the whole log. Refused requests count too, so a client
that keeps hammering stays limited until it slows down.
"""

from __future__ import annotations

import math
import time
from typing import Any, cast

from django.core.cache import caches
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from core.cache import cache_window_hit


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
        current, previous = cache_window_hit(
            caches["default"],
            f"{key}:{window}",
            timeout=2 * self.duration,
            previous_key=f"{key}:{window - 1}",
        )
        overlap = 1 - elapsed / self.duration
        if current + previous * overlap <= self.num_requests:
            return True
        self.retry_after = self._seconds_until_allowed(
            current=current, previous=previous, elapsed=elapsed
        )
        return False

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
        secret_key = request.auth
        if secret_key is None or not hasattr(secret_key, "pk"):
            return None  # unauthenticated requests are refused before they cost anything
        return f"throttle:{self.scope}:{secret_key.pk}"
