"""Secret-key material: generation and hashing of merchant keys, and the webhook signing secret's
format. Nothing here touches the database.

A webhook secret is ``whsec_`` followed by the standard base64 of 32 random bytes (the Standard
Webhooks format: its libraries take the secret as it is). Its signing key is those bytes.
Secrets issued before that format (``whsec_`` and URL-safe base64 without padding, which is
never valid standard base64) sign with the UTF-8 bytes of the whole secret instead, until their
first rotation replaces them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets

KEY_RANDOM_BYTES = 32
WEBHOOK_SECRET_RANDOM_BYTES = 32
# The shortest key a secret in the current format may carry (Standard Webhooks: 24 to 64 bytes).
WEBHOOK_SECRET_MIN_BYTES = 24
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
    """``whsec_`` + the standard base64 of 32 random bytes."""
    key = secrets.token_bytes(WEBHOOK_SECRET_RANDOM_BYTES)
    return WEBHOOK_SECRET_PREFIX + base64.b64encode(key).decode("ascii")


def webhook_secret_is_standard(secret: str) -> bool:
    """True for a secret in the Standard Webhooks format (what ``webhook_secret_generate``
    issues); False for one issued before it."""
    return _standard_key(secret) is not None


def _standard_key(secret: str) -> bytes | None:
    if not secret.startswith(WEBHOOK_SECRET_PREFIX):
        return None
    encoded = secret[len(WEBHOOK_SECRET_PREFIX) :]
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(key) < WEBHOOK_SECRET_MIN_BYTES or base64.b64encode(key).decode("ascii") != encoded:
        return None
    return key


def webhook_secret_signing_key(secret: str) -> bytes:
    """The HMAC key of the ``webhook-signature`` header: the bytes a current-format secret
    encodes, or the UTF-8 bytes of a secret issued before that format."""
    key = _standard_key(secret)
    return key if key is not None else secret.encode("utf-8")
