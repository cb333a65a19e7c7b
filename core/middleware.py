"""Request-level guards that run before any view."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse

from core.api.request_text import path_names_nothing

JSON_API_PREFIX = "/api/v1/"


def _error_json(message: str, status: int) -> JsonResponse:
    return JsonResponse(
        {"status": False, "message": message, "data": None, "statusCode": status}, status=status
    )


class RequestGuardMiddleware:
    """Refuses, before any view or parser runs:

    * bodies larger than ``REQUEST_BODY_MAX_BYTES`` (or the path's own limit in
      ``REQUEST_BODY_MAX_BYTES_BY_PATH``) (413 in the envelope) and a
      ``Content-Length`` that is not a non-negative integer (400);
    * outside the JSON API, a path holding control characters (NUL included): it names
      nothing, so it is the 404 page (HTML under ``/checkout/``). The JSON API checks its
      paths, query strings and headers after authentication (``core.api.request_text``).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = getattr(settings, "REQUEST_BODY_MAX_BYTES_BY_PATH", {}).get(
            request.path, settings.REQUEST_BODY_MAX_BYTES
        )
        raw_length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(raw_length)
        except ValueError:
            length = -1
        if length < 0:
            return _error_json("Content-Length header is not a valid integer", 400)
        if length > limit and not request.path.startswith("/admin/"):
            return _error_json(f"Request body exceeds the limit of {limit} bytes", 413)
        if not request.path.startswith(JSON_API_PREFIX) and path_names_nothing(request.path_info):
            raise Http404("Not found")
        return self.get_response(request)
