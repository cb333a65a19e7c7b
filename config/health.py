"""Health probes: ``/healthz`` (the process answers) and ``/readyz`` (the database and the
broker are reachable)."""

from __future__ import annotations

import logging

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from config.celery_app import app as celery_app
from core.api.views import envelope_json_response

logger = logging.getLogger(__name__)


@csrf_exempt
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return envelope_json_response("ok", 200, {"alive": True})


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
    try:
        with celery_app.connection_for_write() as conn:
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
        return envelope_json_response("ready", 200, checks)
    failed = ", ".join(name for name, ok in checks.items() if not ok)
    response = envelope_json_response(f"not ready: {failed} unreachable", 503)
    response["Retry-After"] = "5"
    return response
