"""Health probes and the JSON handlers for errors raised outside DRF views."""

from __future__ import annotations

import logging

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from core.api.renderers import build_envelope

logger = logging.getLogger(__name__)


def _json(message: str, status: int, data: object = None) -> JsonResponse:
    return JsonResponse(
        build_envelope(data=data, message=message, status_code=status), status=status
    )


@csrf_exempt
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return _json("ok", 200, {"alive": True})


def _database_ready() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception:  # noqa: BLE001 - any failure means not ready
        logger.warning("readiness: database unreachable", exc_info=True)
        return False
    return True


def _broker_ready() -> bool:
    from config.celery_app import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception:  # noqa: BLE001 - any failure means not ready
        logger.warning("readiness: broker unreachable", exc_info=True)
        return False
    return True


@csrf_exempt
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _database_ready(), "broker": _broker_ready()}
    if all(checks.values()):
        return _json("ready", 200, checks)
    failed = ", ".join(name for name, ok in checks.items() if not ok)
    response = _json(f"not ready: {failed} unreachable", 503)
    response["Retry-After"] = "5"
    return response


def _wants_html(request: HttpRequest) -> bool:
    return request.path.startswith("/checkout/")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _json("Bad request", 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _json("Forbidden resource", 403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _wants_html(request):
        return render(request, "404.html", status=404)
    return _json("Route not found", 404)


def server_error(request: HttpRequest) -> HttpResponse:
    return _json("Internal server error", 500)
