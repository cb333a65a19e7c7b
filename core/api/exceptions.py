"""Turns every exception raised in a DRF view into the envelope (or the payment-item 403 body)."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response
from rest_framework.views import set_rollback

from core.api.auth_styles import FORBIDDEN_MESSAGE, UNAUTHORIZED_MESSAGE, AuthErrorStyle
from core.api.parsers import MALFORMED_JSON_MESSAGE, MalformedJSONError
from core.api.renderers import build_envelope
from core.exceptions import ApplicationError

logger = logging.getLogger(__name__)

INTERNAL_ERROR_MESSAGE = "Internal server error"


def _envelope_response(
    message: str, status_code: int, headers: dict[str, str] | None = None
) -> Response:
    response = Response(
        build_envelope(data=None, message=message, status_code=status_code),
        status=status_code,
        headers=headers,
    )
    response.envelope_ready = True  # type: ignore[attr-defined]  # a marker the envelope renderer reads
    return response


def _forbidden_bare_response(message: str) -> Response:
    """The payment-item routes' 403: ``{message, error, statusCode}`` only."""
    response = Response({"message": message, "error": "Forbidden", "statusCode": 403}, status=403)
    response.envelope_ready = True  # type: ignore[attr-defined]  # as above
    return response


def auth_failure_response(style: AuthErrorStyle) -> Response:
    if style == AuthErrorStyle.FORBIDDEN_BARE:
        return _forbidden_bare_response(FORBIDDEN_MESSAGE)
    if style == AuthErrorStyle.FORBIDDEN:
        return _envelope_response(FORBIDDEN_MESSAGE, 403)
    return _envelope_response(UNAUTHORIZED_MESSAGE, 401, {"WWW-Authenticate": 'Bearer realm="api"'})


def _flatten_validation_errors(detail: Any, prefix: str = "") -> list[str]:
    """``{"amount": ["must be ..."]}`` becomes ``["amount: must be ..."]``; an element of a
    list is named by its index in brackets (``items[3].amount``), whether DRF reports it in a
    list or, as a ``ListField`` does, in a dict keyed by the index."""
    if isinstance(detail, dict):
        messages: list[str] = []
        for field, value in detail.items():
            if isinstance(field, int):
                name = f"{prefix}[{field}]"
            else:
                name = f"{prefix}.{field}" if prefix else str(field)
            if field == "non_field_errors":
                name = prefix
            messages.extend(_flatten_validation_errors(value, name))
        return messages
    if isinstance(detail, list):
        messages = []
        for index, value in enumerate(detail):
            if isinstance(value, dict | list):
                messages.extend(_flatten_validation_errors(value, f"{prefix}[{index}]"))
            else:
                messages.extend(_flatten_validation_errors(value, prefix))
        return messages
    text = str(detail)
    return [f"{prefix}: {text}" if prefix else text]


def validation_message(detail: Any) -> str:
    return "; ".join(_flatten_validation_errors(detail)) or "Invalid request"


def envelope_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    view = context.get("view")
    set_rollback()

    if isinstance(exc, drf_exceptions.NotAuthenticated | drf_exceptions.AuthenticationFailed):
        style = getattr(view, "auth_error_style", AuthErrorStyle.UNAUTHORIZED)
        return auth_failure_response(style)

    if isinstance(exc, drf_exceptions.PermissionDenied) and (
        getattr(view, "auth_error_style", None) == AuthErrorStyle.FORBIDDEN_BARE
    ):
        # A key lacking a route's scope, on a route whose every 403 is the bare shape.
        return _forbidden_bare_response(str(exc.detail))

    if isinstance(exc, ApplicationError):
        return _envelope_response(exc.message, exc.status, exc.headers)

    if isinstance(exc, Http404):
        return _envelope_response(str(exc) or "Not found", 404)

    if isinstance(exc, DjangoPermissionDenied):
        return _envelope_response(FORBIDDEN_MESSAGE, 403)

    if isinstance(exc, drf_exceptions.ValidationError):
        return _envelope_response(validation_message(exc.detail), 400)

    if isinstance(exc, drf_exceptions.APIException):
        headers: dict[str, str] = {}
        wait = getattr(exc, "wait", None)
        if wait is not None:
            headers["Retry-After"] = str(int(wait))
        if isinstance(exc, MalformedJSONError):
            message = str(exc.detail)
        elif isinstance(exc, drf_exceptions.ParseError):
            message = MALFORMED_JSON_MESSAGE
        elif isinstance(exc.detail, dict | list):
            message = validation_message(exc.detail)
        else:
            message = str(exc.detail)
        return _envelope_response(message, exc.status_code, headers)

    logger.exception("Unhandled error in %s", type(view).__name__ if view else "view")
    return _envelope_response(INTERNAL_ERROR_MESSAGE, 500)
