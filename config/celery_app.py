"""The Celery application. Settings come from Django settings under the CELERY_ namespace;
worker and beat log through Django's ``LOGGING``, whose handlers redact secrets.

Also wired here: the heartbeats of worker pools and beat (``core.heartbeats``; read by
``/readyz`` and ``/metrics``), and the request id that follows a request into the tasks it
queues (``core.request_id``)."""

import contextlib
import logging.config
import os
from typing import Any

from celery import Celery
from celery.signals import (
    beat_init,
    before_task_publish,
    setup_logging,
    task_postrun,
    task_prerun,
    worker_ready,
    worker_shutdown,
)

from config.celery_broker import (
    BROKER_DELAY_MIN_SECONDS,
    broker_is_amqp,
    delayed_delivery_routes_ensure,
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")


class PaymentsCelery(Celery):
    """Celery, with two rules for a RabbitMQ broker (``config.celery_broker``):

    - every publish gives up after ``broker_publish_timeout`` seconds (the write, and the wait
      for RabbitMQ's confirm), where kombu would wait for ever; the caller's retry policy and
      its ``except`` (logged; the work left to a sweeper) take it from there;
    - a countdown under one second is made one second where delays are kept by the broker
      (quorum queues: Celery's native delayed delivery counts whole seconds and refuses a
      shorter one). A task never starts before its countdown; it may start up to a second
      later than asked, as a payout dispatch round the wake times for its window's end does;
    - before a delayed publish, the delay's route to its queue exists
      (``config.celery_broker.delayed_delivery_routes_ensure``).
    """

    def send_task(self, name: str, *args: Any, **options: Any) -> Any:
        if broker_is_amqp(str(self.conf.broker_url)):
            publish_timeout = self.conf.get("broker_publish_timeout")
            if publish_timeout:
                options.setdefault("timeout", publish_timeout)
                options.setdefault("confirm_timeout", publish_timeout)
            countdown = options.get("countdown")
            delays_in_broker = self.conf.get("task_default_queue_type") == "quorum"
            short = countdown is not None and 0 < countdown < BROKER_DELAY_MIN_SECONDS
            if delays_in_broker and short:
                options["countdown"] = BROKER_DELAY_MIN_SECONDS
            if delays_in_broker and (options.get("countdown") or options.get("eta")):
                delayed_delivery_routes_ensure(self, self._routed_queue(name, args, options))
        return super().send_task(name, *args, **options)

    def _routed_queue(self, name: str, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        """The queue the router sends task ``name`` to, as ``send_task`` will route it."""
        destination = {
            key: options[key]
            for key in ("queue", "exchange", "routing_key", "exchange_type")
            if options.get(key) is not None
        }
        task_args = args[0] if args else options.get("args")
        task_kwargs = args[1] if len(args) > 1 else options.get("kwargs")
        route_name = options.get("route_name") or name
        routed = self.amqp.router.route(
            destination, route_name, task_args or (), task_kwargs or {}, options.get("task_type")
        )
        return routed.get("queue")


app = PaymentsCelery("merchant_payments")
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


# --- Heartbeats ---------------------------------------------------------------------------------

_timers: list[Any] = []
_in_beat = False


@worker_ready.connect
def _worker_heartbeat_start(sender: Any = None, **kwargs: Any) -> None:
    """A worker records a heartbeat for each queue it consumes (``worker:<queue>``) every
    ``HEARTBEAT_INTERVAL_SECONDS``, from a thread of its main process, from the moment it is
    ready to take tasks until it shuts down."""
    from core.heartbeats import heartbeat_timer_start, worker_heartbeat_name

    consumer = sender
    queues = sorted((consumer.app if consumer is not None else app).amqp.queues.consume_from)
    names = [worker_heartbeat_name(queue) for queue in queues]
    _timers.append(heartbeat_timer_start(lambda: names))


# The longest a worker's event loop sleeps in one poll once this runs (see below).
WORKER_LOOP_WAKE_SECONDS = 1.0


@worker_ready.connect
def _worker_loop_wake(sender: Any = None, **kwargs: Any) -> None:
    """The worker's event loop wakes at least every ``WORKER_LOOP_WAKE_SECONDS``, so a SIGTERM
    starts the warm shutdown within that. The loop notices the signal only after its poll
    returns; on RabbitMQ nothing else wakes an idle worker for up to 10 s (kombu's longest
    poll), which held every restart that long (Redis's transport wakes it every second)."""
    hub = getattr(sender, "hub", None)
    if hub is not None and broker_is_amqp(str(app.conf.broker_url)):
        hub.call_repeatedly(WORKER_LOOP_WAKE_SECONDS, _loop_wake_noop)


def _loop_wake_noop() -> None:
    return None


@worker_shutdown.connect
def _worker_heartbeat_stop(**kwargs: Any) -> None:
    while _timers:
        _timers.pop().stop()


@beat_init.connect
def _beat_heartbeat_start(**kwargs: Any) -> None:
    """Beat records its own heartbeat (``beat``) every ``HEARTBEAT_INTERVAL_SECONDS``."""
    global _in_beat
    from core.heartbeats import BEAT_HEARTBEAT, heartbeat_timer_start

    _in_beat = True
    _timers.append(heartbeat_timer_start(lambda: [BEAT_HEARTBEAT]))


# --- The request id -----------------------------------------------------------------------------

REQUEST_ID_HEADER = "request_id"


@before_task_publish.connect
def _request_id_publish(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """A task queued while serving a request carries the request's id in its headers. In beat,
    each publish of a schedule entry is also recorded as that entry's last run."""
    from core.request_id import request_id_get

    request_id = request_id_get()
    if headers is not None and request_id and REQUEST_ID_HEADER not in headers:
        headers[REQUEST_ID_HEADER] = request_id
    if _in_beat:
        _beat_entry_sent(headers or {})


def _beat_entry_sent(headers: dict[str, Any]) -> None:
    from django.conf import settings

    from core.heartbeats import beat_task_heartbeat_name, heartbeat_record

    task = headers.get("task")
    for entry, spec in (settings.CELERY_BEAT_SCHEDULE or {}).items():
        if spec.get("task") == task:
            heartbeat_record(beat_task_heartbeat_name(entry))


@task_prerun.connect
def _request_id_restore(task: Any = None, **kwargs: Any) -> None:
    """In the worker, the task's records carry the id of the request that queued it."""
    if task is None or getattr(task.request, "is_eager", False):
        return
    from core.request_id import request_id_set, request_id_valid

    task.request._request_id_token = request_id_set(
        request_id_valid(getattr(task.request, REQUEST_ID_HEADER, None))
    )


@task_postrun.connect
def _request_id_clear(task: Any = None, **kwargs: Any) -> None:
    token = getattr(getattr(task, "request", None), "_request_id_token", None)
    if token is None:
        return
    from core.request_id import request_id_reset

    # Set in another context (nothing of it left to undo here): ValueError.
    with contextlib.suppress(ValueError):
        request_id_reset(token)
