"""Health probes: ``/healthz`` (the process answers) and ``/readyz`` (the database and the
broker are reachable, a worker of the money queue and beat beat recently).

A worker pool or beat is seen when its heartbeat (``core.heartbeats``, recorded by
``config.celery_app``) is younger than ``WORKER_HEARTBEAT_STALE_SECONDS`` /
``BEAT_HEARTBEAT_STALE_SECONDS`` (30). The money worker (the default queue) is required; every
other pool (``webhooks``) is reported beside it and leaves readiness alone."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from config.celery_app import app as celery_app
from config.metrics import project_queues
from core.api.views import envelope_json_response
from core.heartbeats import BEAT_HEARTBEAT, heartbeat_age, worker_heartbeat_name

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


def _heartbeat_fresh(name: str, *, stale_after: float) -> bool:
    age = heartbeat_age(name)
    return age is not None and age < stale_after


def _pools_seen() -> dict[str, bool]:
    """``worker`` (the default queue's pool), then ``<queue>_worker`` for every other queue."""
    stale_after = float(settings.WORKER_HEARTBEAT_STALE_SECONDS)
    default, *others = project_queues()
    seen = {"worker": _heartbeat_fresh(worker_heartbeat_name(default), stale_after=stale_after)}
    for queue in others:
        seen[f"{queue}_worker"] = _heartbeat_fresh(
            worker_heartbeat_name(queue), stale_after=stale_after
        )
    return seen


@csrf_exempt
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """200 with every check when the database, the broker, the money worker and beat are
    fine; else 503 naming the failed parts (``database``, ``broker`` unreachable; ``worker``,
    ``beat`` not seen)."""
    reachable = {"database": _database_ready(), "broker": _broker_ready()}
    pools = _pools_seen()
    seen = {
        "worker": pools.pop("worker"),
        "beat": _heartbeat_fresh(
            BEAT_HEARTBEAT, stale_after=float(settings.BEAT_HEARTBEAT_STALE_SECONDS)
        ),
    }
    checks = {**reachable, **seen, **pools}
    if all(reachable.values()) and all(seen.values()):
        return envelope_json_response("ready", 200, checks)
    failures = [f"{name} unreachable" for name, ok in reachable.items() if not ok]
    failures += [f"{name} not seen" for name, ok in seen.items() if not ok]
    response = envelope_json_response(f"not ready: {', '.join(failures)}", 503)
    response["Retry-After"] = "5"
    return response
