"""The JSON handlers for errors raised outside DRF views, and the envelope they answer with."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt

from core.api.renderers import build_envelope


def envelope_json_response(message: str, status: int, data: object = None) -> JsonResponse:
    """A plain Django response carrying the envelope, for views outside DRF."""
    return JsonResponse(
        build_envelope(data=data, message=message, status_code=status), status=status
    )


def _wants_html(request: HttpRequest) -> bool:
    return request.path.startswith("/checkout/")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return envelope_json_response("Bad request", 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return envelope_json_response("Forbidden resource", 403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _wants_html(request):
        return render(request, "404.html", status=404)
    return envelope_json_response("Route not found", 404)


@csrf_exempt
def api_route_not_found(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    """Every path under ``/api/`` that no route matched, for any method: the envelope 404 even
    with ``DEBUG`` on, where Django would otherwise answer its HTML debug page."""
    return envelope_json_response("Route not found", 404)


def server_error(request: HttpRequest) -> HttpResponse:
    return envelope_json_response("Internal server error", 500)
