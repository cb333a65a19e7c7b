"""Logging: the filter that keeps secret keys and Authorization headers out of every log line
(on every handler), the JSON formatter (``LOG_FORMAT=json``), and the filter that turns the
lines of idle routine task runs into DEBUG."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from datetime import UTC, datetime

REDACTED = "[REDACTED]"

_SECRET_PATTERNS = (
    # Authorization headers in any casing, with any scheme.
    re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)[^'\",}\n]+"),
    re.compile(r"(?i)(HTTP_AUTHORIZATION['\"]?\s*[:=]\s*['\"]?)[^'\",}\n]+"),
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"),
    # Merchant keys (secret and restricted) and webhook secrets wherever they appear, even glued
    # to other text.
    re.compile(r"()[sr]k_(?:test|live)_[A-Za-z0-9_-]+"),
    # Webhook secrets: standard base64 (+, /, = padding) and the older URL-safe form (-, _).
    re.compile(r"()whsec_[A-Za-z0-9_+/=-]+"),
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


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``,
    ``request_id`` and, when there is one, ``exception``. The message and exception text are
    taken as the redaction filter left them (it runs on the handler before any formatter)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": redact_secrets(record.getMessage()),
            "request_id": getattr(record, "request_id", None) or "-",
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_secrets(self.formatException(record.exc_info))
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = redact_secrets(self.formatStack(record.stack_info))
        return json.dumps(entry, ensure_ascii=False, default=str)


# A routine task's result leads with how much it did ("dispatch_round: 0 payout(s) claimed",
# "Considered 0 stuck payout(s) …", 0): its first number is 0 (or it has none) when idle.
_FIRST_NUMBER = re.compile(r"\d+")
_BEAT_SENDING = "Scheduler: Sending due task"


def result_is_idle(result_text: str) -> bool:
    """A routine task's (``repr``'d) result says it did nothing."""
    number = _FIRST_NUMBER.search(result_text)
    return number is None or int(number.group()) == 0


class RoutineTaskLogFilter(logging.Filter):
    """On Celery's own loggers (``celery.beat``, ``celery.worker.strategy``,
    ``celery.app.trace``): the lines that routine (beat-scheduled) task runs write every few
    seconds become DEBUG: beat's "Sending due task", the worker's "received", and "succeeded"
    when the result says the run did nothing (``result_is_idle``). A run that did something,
    a failure and a retry stay as they were. ``tasks`` names the routine tasks (default: every
    task of ``CELERY_BEAT_SCHEDULE``)."""

    def __init__(self, tasks: Iterable[str] | None = None) -> None:
        super().__init__()
        self._tasks = None if tasks is None else frozenset(tasks)

    def _routine(self) -> frozenset[str]:
        if self._tasks is None:
            from django.conf import settings

            schedule = getattr(settings, "CELERY_BEAT_SCHEDULE", {}) or {}
            self._tasks = frozenset(entry["task"] for entry in schedule.values())
        return self._tasks

    def _idle(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return False
        message = record.msg if isinstance(record.msg, str) else ""
        if message.startswith(_BEAT_SENDING):
            return True
        data = getattr(record, "data", None)
        if not isinstance(data, dict) or data.get("name") not in self._routine():
            return False
        if message.endswith("] received"):
            return True
        if "] succeeded in " in message:
            return result_is_idle(str(data.get("return_value", "")))
        return False

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._idle(record):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno = logging.DEBUG
        record.levelname = logging.getLevelName(logging.DEBUG)
        return True
