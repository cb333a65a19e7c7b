"""One raw request/answer pair with a third-party provider, kept for audit on the payout or
collection it concerns. Adapters build it without secrets (no key, no ``Authorization``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

RAW_BODY_MAX_CHARS = 4000


@dataclass(frozen=True)
class ProviderExchange:
    operation: str
    http_status: int | None
    body: Any
    error: str = ""
    at: str = field(default_factory=lambda: timezone.localtime().isoformat())

    def as_dict(self) -> dict[str, Any]:
        """The exchange as stored: JSON-ready and storable on every backend (a NUL anywhere
        becomes U+FFFD, since PostgreSQL's jsonb refuses ``\u0000``)."""
        body = self.body
        if isinstance(body, str) and len(body) > RAW_BODY_MAX_CHARS:
            body = body[:RAW_BODY_MAX_CHARS] + "…"
        return {
            "operation": _storable(self.operation),
            "http_status": self.http_status,
            "body": _storable(body),
            "error": _storable(self.error),
            "at": self.at,
        }


def _storable(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(item) for item in value]
    return value
