"""Request-level guards that run before any view."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


def _error_json(message: str, status: int) -> JsonResponse:
    return JsonResponse(
        {"status": False, "message": message, "data": None, "statusCode": status}, status=status
    )


class RequestBodyLimitMiddleware:
    """Refuses bodies larger than REQUEST_BODY_MAX_BYTES with a 413 envelope, before parsing."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.REQUEST_BODY_MAX_BYTES
        raw_length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(raw_length)
        except ValueError:
            return _error_json("Content-Length header is not a valid integer", 400)
        if length > limit and not request.path.startswith("/admin/"):
            return _error_json(f"Request body exceeds the limit of {limit} bytes", 413)
        return self.get_response(request)
