"""OpenAPI examples of the keys routes (plaintexts shortened, never real)."""

from __future__ import annotations

from typing import Any

SECRET_KEY: dict[str, Any] = {
    "id": 7,
    "name": "",
    "kind": "secret",
    "prefix": "sk_test_Qm3v",
    "scopes": [
        "read",
        "payouts:write",
        "payouts:approve",
        "collections:write",
        "refunds:write",
        "beneficiaries:write",
        "webhooks:write",
        "sweeps:write",
        "alerts:write",
        "keys:write",
        "test_helpers:write",
    ],
    "created_at": "2026-11-27T10:02:11.402000+01:00",
    "expires_at": None,
}

ROLLED_KEY: dict[str, Any] = {
    **SECRET_KEY,
    "id": 3,
    "prefix": "sk_test_8Hd2",
    "created_at": "2026-06-01T09:00:00.000000+01:00",
    "expires_at": "2026-11-28T10:02:11.398000+01:00",
}

RESTRICTED_KEY: dict[str, Any] = {
    "id": 9,
    "name": "reporting dashboard",
    "kind": "restricted",
    "prefix": "rk_test_c41X",
    "scopes": ["read"],
    "created_at": "2026-11-27T10:05:40.118000+01:00",
    "expires_at": None,
}

ROLL_REQUEST = {"expires_in_hours": 24}
ROLLED = {"key": SECRET_KEY, "secret": "sk_test_Qm3v…", "rolled_key": ROLLED_KEY}

CREATE_REQUEST = {"name": "reporting dashboard", "scopes": ["read"]}
CREATED = {"key": RESTRICTED_KEY, "secret": "rk_test_c41X…"}
