"""The signatures every webhook request carries, computed in one place for deliveries of every
event type and for the test ping alike.

* **Standard Webhooks** (https://www.standardwebhooks.com/): ``webhook-id`` (the event id: the
  same on every retry and resend), ``webhook-timestamp`` (the attempt's time, integer Unix
  seconds) and ``webhook-signature``: ``v1,`` + the standard base64 of the HMAC-SHA256 of
  ``{webhook-id}.{webhook-timestamp}.{body}`` keyed with the secret's signing key
  (``merchants.keys.webhook_secret_signing_key``). During a rotation overlap the previous
  secret signs too: two signatures, space-separated, the current one first.
* **The older scheme**: ``X-Webhook-Signature``, the lowercase hex HMAC-SHA512 of the body keyed
  with the current secret's text, kept unchanged for receivers that check it.

Without a secret no signature header is sent (the id and timestamp still are). The body is
signed as the exact bytes sent.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime

from core.signing import hmac_sha512_hex_compute
from merchants.keys import webhook_secret_signing_key
from merchants.models import WebhookSettings

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
LEGACY_SIGNATURE_HEADER = "X-Webhook-Signature"
SIGNATURE_VERSION = "v1"


@dataclass(frozen=True)
class SigningSecrets:
    """The secrets that sign one request: the current one and, during a rotation overlap, the
    one it replaced (empty otherwise)."""

    current: str = ""
    previous: str = ""

    @classmethod
    def of(cls, settings_row: WebhookSettings | None, *, now: datetime) -> SigningSecrets:
        """The merchant's secrets for the mode as they sign at ``now``: the previous secret only
        while its overlap lasts."""
        if settings_row is None:
            return cls()
        expires_at = settings_row.previous_secret_expires_at
        in_overlap = expires_at is not None and now < expires_at
        return cls(
            current=settings_row.secret or "",
            previous=(settings_row.previous_secret or "") if in_overlap else "",
        )


def webhook_signature_compute(body: bytes, *, secret: str) -> str:
    """The older scheme: lowercase hex HMAC-SHA512 of the raw body, keyed with the secret."""
    return hmac_sha512_hex_compute(body, secret=secret)


def standard_signature_compute(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of "{message_id}.{timestamp}.{body}">`` under ``secret``."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(webhook_secret_signing_key(secret), signed, hashlib.sha256).digest()
    return f"{SIGNATURE_VERSION},{base64.b64encode(digest).decode('ascii')}"


def webhook_signature_headers(
    *, message_id: str, timestamp: int, body: bytes, secrets: SigningSecrets
) -> dict[str, str]:
    """The id, timestamp and signature headers of one request."""
    headers = {ID_HEADER: message_id, TIMESTAMP_HEADER: str(timestamp)}
    signers = [secret for secret in (secrets.current, secrets.previous) if secret]
    if signers:
        headers[SIGNATURE_HEADER] = " ".join(
            standard_signature_compute(
                secret=secret, message_id=message_id, timestamp=timestamp, body=body
            )
            for secret in signers
        )
    if secrets.current:
        headers[LEGACY_SIGNATURE_HEADER] = webhook_signature_compute(body, secret=secrets.current)
    return headers
