"""Secret-key material: generation and hashing. Nothing here touches the database."""

from __future__ import annotations

import hashlib
import secrets

KEY_RANDOM_BYTES = 32
VISIBLE_PREFIX_LENGTH = 12
WEBHOOK_SECRET_PREFIX = "whsec_"  # noqa: S105


def secret_key_generate(*, mode: str) -> str:
    return f"sk_{mode}_{secrets.token_urlsafe(KEY_RANDOM_BYTES)}"


def secret_key_hash(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


def secret_key_prefix(plaintext: str) -> str:
    return plaintext[:VISIBLE_PREFIX_LENGTH]


def webhook_secret_generate() -> str:
    return f"{WEBHOOK_SECRET_PREFIX}{secrets.token_urlsafe(KEY_RANDOM_BYTES)}"
