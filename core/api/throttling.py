"""Rate limits per secret key and route group (``THROTTLE_RATES`` in settings).

A view names its group with ``throttle_scope``; otherwise reads (GET/HEAD/OPTIONS) count against
``read`` and everything else against ``write``. The counters live in the default cache: Redis in
production (``CACHE_URL``), local memory on the embedded defaults.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


class SecretKeyRateThrottle(SimpleRateThrottle):
    def __init__(self) -> None:  # the scope is known only per request
        self.scope = ""

    def allow_request(self, request: Request, view: Any) -> bool:
        self.scope = getattr(view, "throttle_scope", None) or (
            "read" if request.method in SAFE_METHODS else "write"
        )
        self.rate = self.THROTTLE_RATES.get(self.scope)
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        secret_key = request.auth
        if secret_key is None or not hasattr(secret_key, "pk"):
            return None  # unauthenticated requests are refused before they cost anything
        return f"throttle:{self.scope}:{secret_key.pk}"
