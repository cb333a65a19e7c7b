"""The Celery application. Settings come from Django settings under the CELERY_ namespace;
worker and beat log through Django's ``LOGGING``, whose handlers redact secrets."""

import logging.config
import os
from typing import Any

from celery import Celery
from celery.signals import setup_logging, task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("merchant_payments")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@setup_logging.connect
def _logging_configure(**kwargs: Any) -> None:
    """Worker and beat log through ``settings.LOGGING`` (level ``LOG_LEVEL``).

    With a receiver on this signal Celery installs none of its own handlers: without it, the
    worker replaces the root logger's handlers with its own and gives task loggers a handler
    of their own, and neither runs the redaction filter. Output that tasks print still goes to
    the ``celery.redirected`` logger, and from there through the same handlers.
    """
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


@task_prerun.connect
@task_postrun.connect
def _database_connections_recycle(task: Any = None, **kwargs: Any) -> None:
    """Database connections in the worker follow the web's rules: kept for ``CONN_MAX_AGE``,
    closed when unusable, checked before reuse (``CONN_HEALTH_CHECKS``).

    Celery's Django fixup closes every connection around every task unless
    ``CELERY_DB_REUSE_MAX`` is set, which cost each task a new PostgreSQL backend. Eager tasks
    run inside their caller's request or transaction and leave its connection alone.
    """
    if task is not None and getattr(task.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()
