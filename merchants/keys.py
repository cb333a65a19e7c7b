"""Secret-key material: generation and hashing. Nothing here touches the database."""

from __future__ import annotations

import hashlib
import secrets

KEY_RANDOM_BYTES = 32
VISIBLE_PREFIX_LENGTH = 12
WEBHOOK_SECRET_PREFIX = "whsec_"  # noqa: S105


SECRET_KEY_MARK = "sk"  # noqa: S105
RESTRICTED_KEY_MARK = "rk"
# What every key the service issues starts with: its kind's mark and its mode.
KEY_STARTS = ("sk_test_", "sk_live_", "rk_test_", "rk_live_")


def secret_key_generate(*, mode: str, restricted: bool = False) -> str:
    """A new key's plaintext: ``sk_<mode>_…`` for a secret key, ``rk_<mode>_…`` for a
    restricted one."""
    mark = RESTRICTED_KEY_MARK if restricted else SECRET_KEY_MARK
    return f"{mark}_{mode}_{secrets.token_urlsafe(KEY_RANDOM_BYTES)}"


def secret_key_hash(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


def secret_key_prefix(plaintext: str) -> str:
    return plaintext[:VISIBLE_PREFIX_LENGTH]


def webhook_secret_generate() -> str:
    return f"{WEBHOOK_SECRET_PREFIX}{secrets.token_urlsafe(KEY_RANDOM_BYTES)}"
