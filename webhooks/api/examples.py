"""OpenAPI examples of the webhook settings routes: the settings, a rotation with its secret
shown once, and test pings answered and refused."""

from __future__ import annotations

from typing import Any

SETTINGS_RETRIEVED = "Webhook settings retrieved successfully"
SETTINGS_UPDATED = "Webhook settings updated"
ROTATED_MESSAGE = "Webhook secret rotated: store it now, it is not shown again"
PING_SENT = "Test ping sent"

EXAMPLE_URL = "https://merchant.example.com/webhooks"
# Not a real secret: the shape of one (whsec_ + the base64 of 32 bytes).
EXAMPLE_SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" + "Sk9lA9sEk0E="

SETTINGS_EXAMPLE: dict[str, Any] = {
    "mode": "test",
    "url": EXAMPLE_URL,
    "secret_set": True,
    "previous_secret_expires_at": None,
    "updated_at": "2026-11-22T10:15:02.118204+01:00",
}
SETTINGS_IN_OVERLAP_EXAMPLE: dict[str, Any] = {
    **SETTINGS_EXAMPLE,
    "previous_secret_expires_at": "2026-11-23T10:15:02.118204+01:00",
}
SETTINGS_SAVED_EXAMPLE: dict[str, Any] = {**SETTINGS_EXAMPLE, "secret": None}
SETTINGS_FIRST_SAVED_EXAMPLE: dict[str, Any] = {**SETTINGS_EXAMPLE, "secret": EXAMPLE_SECRET}
ROTATED_EXAMPLE: dict[str, Any] = {**SETTINGS_IN_OVERLAP_EXAMPLE, "secret": EXAMPLE_SECRET}
PING_ANSWERED_EXAMPLE: dict[str, Any] = {
    "event_id": "evt_5c1d0e7a9b3f42d8a61c0b7e",
    "url": EXAMPLE_URL,
    "sent": True,
    "succeeded": True,
    "status_code": 200,
    "latency_ms": 143,
    "error": "",
    "response_excerpt": '{"received":true}',
}
PING_TIMED_OUT_EXAMPLE: dict[str, Any] = {
    **PING_ANSWERED_EXAMPLE,
    "succeeded": False,
    "status_code": None,
    "latency_ms": 10002,
    "error": "timeout: no complete answer within the 10 s deadline",
    "response_excerpt": "",
}
