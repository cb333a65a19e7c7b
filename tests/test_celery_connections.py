"""Database connections in Celery workers: reused across tasks like the web's (CONN_MAX_AGE),
closed when obsolete. Celery's Django fixup alone would reconnect for every task."""

from __future__ import annotations

import time

import pytest
from celery.signals import task_postrun, task_prerun
from django.db import connection

from config.celery_app import app

# Real tasks run through a worker's connection handling: seconds each.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_fixup_closes_connections_only_every_thousand_tasks() -> None:
    assert app.conf.get("CELERY_DB_REUSE_MAX") == 1000


def test_a_connection_within_its_max_age_survives_a_task() -> None:
    first = _backend_pid()
    connection.close_at = time.monotonic() + 60  # as with CONN_MAX_AGE=60
    task_prerun.send(sender=None, task_id="t1", task=None)
    task_postrun.send(sender=None, task_id="t1", task=None)
    assert connection.connection is not None
    assert _backend_pid() == first


def test_an_obsolete_connection_is_closed_after_a_task() -> None:
    _backend_pid()
    connection.close_at = time.monotonic() - 1  # past CONN_MAX_AGE
    task_postrun.send(sender=None, task_id="t2", task=None)
    assert connection.connection is None


def test_an_eager_task_leaves_its_callers_connection_open() -> None:
    from payouts.tasks import payouts_dispatch_stuck_task

    _backend_pid()
    connection.close_at = time.monotonic() - 1  # obsolete, yet the caller is still using it
    payouts_dispatch_stuck_task.apply()
    assert connection.connection is not None
