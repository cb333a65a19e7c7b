"""The request id: one id per request, carried by every log record the request writes and by
every task it queues (``config.celery_app`` copies it into the task's headers and restores it
in the worker).

``RequestIdMiddleware`` accepts the caller's ``X-Request-ID`` when it is a short token
(``REQUEST_ID_PATTERN``: letters, digits, ``.``, ``_``, ``:``, ``-``; at most
``REQUEST_ID_MAX_LENGTH`` characters), else makes one, and echoes it on the response.
``RequestIdLogFilter`` puts it on each record as ``record.request_id`` (``-`` outside a
request or task).
"""

from __future__ import annotations

import contextvars
import logging
import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

HEADER = "X-Request-ID"
META_KEY = "HTTP_X_REQUEST_ID"
REQUEST_ID_MAX_LENGTH = 64
REQUEST_ID_PATTERN = re.compile(rf"[A-Za-z0-9._:-]{{1,{REQUEST_ID_MAX_LENGTH}}}")
NO_REQUEST_ID = "-"

_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)


def request_id_get() -> str | None:
    """The id of the request or task this code runs for, if any."""
    return _current.get()


def request_id_set(value: str | None) -> contextvars.Token[str | None]:
    """Makes ``value`` the current id; returns the token that ``request_id_reset`` takes."""
    return _current.set(value)


def request_id_reset(token: contextvars.Token[str | None]) -> None:
    _current.reset(token)


def request_id_valid(value: object) -> str | None:
    """``value`` if it is an acceptable request id, else ``None``."""
    if isinstance(value, str) and REQUEST_ID_PATTERN.fullmatch(value):
        return value
    return None


def request_id_new() -> str:
    return uuid.uuid4().hex


class RequestIdMiddleware:
    """Gives the request its id (the caller's valid ``X-Request-ID`` or a new one), current
    for the whole request, and echoes it in the response's ``X-Request-ID``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        value = request_id_valid(request.META.get(META_KEY)) or request_id_new()
        request.request_id = value  # type: ignore[attr-defined]
        token = request_id_set(value)
        try:
            response = self.get_response(request)
        finally:
            request_id_reset(token)
        response[HEADER] = value
        return response


class RequestIdLogFilter(logging.Filter):
    """Sets ``record.request_id`` to the current id (``-`` when there is none)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            record.request_id = request_id_get() or NO_REQUEST_ID
        return True
