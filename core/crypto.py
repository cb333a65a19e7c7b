"""Encryption of values kept at rest (``core.fields.EncryptedTextField``): Fernet tokens
(``cryptography``: AES-128-CBC with an HMAC-SHA256) under the keys of
``settings.FIELD_ENCRYPTION_KEYS``.

* **Keys.** A list of Fernet keys, the newest first: the first encrypts, every one decrypts
  (``MultiFernet``). A key is rotated by putting the new one first, re-encrypting every stored
  value under it (``manage.py encryption_keys_rotate``), then dropping the old one.
* **Stored form.** ``enc:v1:`` followed by the token. A stored value without that prefix is
  plaintext written before encryption (or by a process still running older code) and is read as
  it is; the rotation command encrypts it.
* **Errors** name the setting (and, for a stored value, its field), never a key or a value.

Imported by the settings (the development key, the deployment check): it imports nothing of the
project and no model.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

SETTING = "FIELD_ENCRYPTION_KEYS"
STORED_PREFIX = "enc:v1:"
KEY_GENERATE_HINT = (
    'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
)


def development_key() -> str:
    """The public key ``DEBUG`` and the tests run on: derived from a fixed phrase, so it is the
    same on every checkout and protects nothing. The deployment check refuses it."""
    digest = hashlib.sha256(b"merchant-payments development field encryption key").digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")


class EncryptionKeyError(ImproperlyConfigured):
    """``FIELD_ENCRYPTION_KEYS`` is empty or malformed, or lacks the key a stored value needs."""


def encryption_keys_parse(keys: Iterable[str] | str | None) -> list[str]:
    """The configured keys in order, blanks dropped (a comma-separated string is accepted)."""
    if keys is None:
        return []
    if isinstance(keys, str):
        keys = keys.split(",")
    return [key.strip() for key in (str(key) for key in keys) if key.strip()]


def encryption_keys_problem(keys: Sequence[str]) -> str | None:
    """What is wrong with ``keys`` (already parsed), naming a key by its position only; ``None``
    when every key is a Fernet key."""
    if not keys:
        return f"{SETTING} is empty; set it to one or more Fernet keys ({KEY_GENERATE_HINT})"
    for position, key in enumerate(keys, start=1):
        try:
            Fernet(key.encode("ascii"))
        except (ValueError, TypeError, UnicodeEncodeError):
            return (
                f"{SETTING}: key {position} of {len(keys)} is not a Fernet key (32 url-safe "
                f"base64-encoded bytes; {KEY_GENERATE_HINT})"
            )
    return None


@dataclass(frozen=True)
class _Ciphers:
    every_key: MultiFernet  # decrypts under any key, encrypts under the first
    first_key: Fernet


@lru_cache(maxsize=8)
def _ciphers_for(keys: tuple[str, ...]) -> _Ciphers:
    problem = encryption_keys_problem(keys)
    if problem:
        raise EncryptionKeyError(problem)
    fernets = [Fernet(key.encode("ascii")) for key in keys]
    return _Ciphers(every_key=MultiFernet(fernets), first_key=fernets[0])


def _ciphers() -> _Ciphers:
    """The ciphers of the configured keys (built once per distinct list)."""
    return _ciphers_for(tuple(encryption_keys_parse(getattr(settings, SETTING, None))))


def value_is_encrypted(stored: str) -> bool:
    return stored.startswith(STORED_PREFIX)


def value_encrypt(plaintext: str) -> str:
    """``plaintext`` in its stored form, encrypted under the first key."""
    token = _ciphers().every_key.encrypt(plaintext.encode("utf-8"))
    return STORED_PREFIX + token.decode("ascii")


def _unreadable(label: str) -> EncryptionKeyError:
    return EncryptionKeyError(
        f"{label}: a stored value cannot be decrypted with any key in {SETTING} (it was "
        f"encrypted under a key no longer listed, or altered); add the key it was encrypted "
        f"with back to {SETTING}"
    )


def _token(stored: str, *, label: str) -> bytes:
    try:
        return stored[len(STORED_PREFIX) :].encode("ascii")
    except UnicodeEncodeError:
        raise _unreadable(label) from None


def value_decrypt(stored: str, *, label: str = "an encrypted value") -> str:
    """The plaintext of a stored value (a value without the prefix is legacy plaintext and is
    returned as it is). ``label`` names the field in the error when no key decrypts it."""
    if not value_is_encrypted(stored):
        return stored
    token = _token(stored, label=label)
    try:
        return _ciphers().every_key.decrypt(token).decode("utf-8")
    except (InvalidToken, UnicodeDecodeError):
        raise _unreadable(label) from None


class ValueState(StrEnum):
    """What ``value_reencrypt`` found a stored value to be."""

    CURRENT = "current"  # already under the first key: left as it is
    REENCRYPTED = "reencrypted"  # under another listed key: now under the first
    ENCRYPTED = "encrypted"  # legacy plaintext: now encrypted under the first key


def value_reencrypt(stored: str, *, label: str = "an encrypted value") -> tuple[str, ValueState]:
    """``(new stored form, ValueState)``: ``stored`` under the first key. Raises
    ``EncryptionKeyError`` when no listed key decrypts it."""
    if not value_is_encrypted(stored):
        return value_encrypt(stored), ValueState.ENCRYPTED
    ciphers = _ciphers()
    token = _token(stored, label=label)
    try:
        ciphers.first_key.decrypt(token)
    except InvalidToken:
        pass
    else:
        return stored, ValueState.CURRENT
    try:
        rotated = ciphers.every_key.rotate(token)
    except InvalidToken:
        raise _unreadable(label) from None
    return STORED_PREFIX + rotated.decode("ascii"), ValueState.REENCRYPTED
