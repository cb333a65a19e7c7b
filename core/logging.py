"""A logging filter that keeps secret keys and Authorization headers out of every log line."""

from __future__ import annotations

import logging
import re

REDACTED = "[REDACTED]"

_SECRET_PATTERNS = (
    # Authorization headers in any casing, with any scheme.
    re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)[^'\",}\n]+"),
    re.compile(r"(?i)(HTTP_AUTHORIZATION['\"]?\s*[:=]\s*['\"]?)[^'\",}\n]+"),
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"),
    # Merchant secret keys and webhook secrets wherever they appear, even glued to other text.
    re.compile(r"()sk_(?:test|live)_[A-Za-z0-9_-]+"),
    re.compile(r"()whsec_[A-Za-z0-9_-]+"),
)


def redact_secrets(text: str) -> str:
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda match: f"{match.group(1)}{REDACTED}", text)
    return text


class SecretRedactingFilter(logging.Filter):
    """Renders the record's message, redacts secrets from it and from any exception text."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format string must not hide the record
            message = str(record.msg)
        record.msg = redact_secrets(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_secrets(record.exc_text)
        return True
