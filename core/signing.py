"""Hex HMAC-SHA512 signatures of raw request bodies: the Paystack webhook signature and the
funding-notification signature are both this one computation, keyed with different secrets.

The check never raises for what a caller sends: a missing, empty, non-ASCII or non-hex
signature is simply not valid. Comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import string

SHA512_HEX_LENGTH = 128
_HEX_DIGITS = frozenset(string.hexdigits)


def hmac_sha512_hex_compute(body: bytes, *, secret: str) -> str:
    """Lower-case hex HMAC-SHA512 of ``body`` keyed with ``secret`` (UTF-8)."""
    return hmac.new(secret.encode("utf-8"), body, hashlib.sha512).hexdigest()


def hmac_sha512_hex_valid(body: bytes, signature: str | None, *, secret: str) -> bool:
    """True when ``signature`` is the hex HMAC-SHA512 of ``body`` under ``secret``.

    Letter case and surrounding whitespace of the signature do not matter. Without a secret
    nothing is valid.
    """
    if not secret or not isinstance(signature, str):
        return False
    candidate = signature.strip()
    if (
        len(candidate) != SHA512_HEX_LENGTH
        or not candidate.isascii()
        or not _HEX_DIGITS.issuperset(candidate)
    ):
        return False
    expected = hmac_sha512_hex_compute(body, secret=secret)
    return hmac.compare_digest(expected.encode("ascii"), candidate.lower().encode("ascii"))
