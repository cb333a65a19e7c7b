"""``/metrics``: Prometheus text of the counted metrics (``core.metrics``, summed over every
process) and of gauges read at scrape time:

- payouts not yet final, by status, and the age of the oldest of each status (a payout held by
  the merchant counts from its release);
- pending webhook deliveries and the age of the oldest due one;
- Celery queue depth per queue (Redis broker: ``LLEN`` of the queue's keys; RabbitMQ: the ready
  messages of a passive declare; filesystem broker: its message files; other brokers: not
  reported);
- the heartbeats of the worker pools (per queue) and of beat, and when beat last sent each of
  its tasks (``core.heartbeats``).

Database reads are a few indexed aggregates on pending rows, under a short statement timeout
(``METRICS_STATEMENT_TIMEOUT_MS``) on PostgreSQL. A part that cannot be read is left out and
``metrics_collector_up{part}`` says 0, so one slow part never hides the rest.

Access: with ``METRICS_TOKEN`` set, only ``Authorization: Bearer <METRICS_TOKEN>``; without it,
only callers on the loopback interface (``REMOTE_ADDR`` 127.0.0.1 or ::1).
"""

from __future__ import annotations

import hmac
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Min
from django.db.models.functions import Greatest
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from config.celery_app import app as celery_app
from config.celery_broker import broker_is_amqp
from core.api.views import envelope_json_response
from core.heartbeats import (
    BEAT_HEARTBEAT,
    beat_task_heartbeat_name,
    heartbeat_last,
    worker_heartbeat_name,
)
from core.metrics import metrics_registry
from payouts.models import PENDING_STATUSES, Payout, payout_dispatchable_q
from webhooks.models import DeliveryStatus, WebhookDelivery

logger = logging.getLogger(__name__)

LOOPBACK_ADDRESSES = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})
# kombu's Redis transport keeps a queue's messages of priority 0 under the queue's name and
# the others under the name, this separator and the priority step.
REDIS_PRIORITY_SEPARATOR = "\x06\x16"
REDIS_PRIORITY_STEPS = (3, 6, 9)


def project_queues() -> list[str]:
    """The default queue, then every queue ``CELERY_TASK_ROUTES`` names."""
    default = settings.CELERY_TASK_DEFAULT_QUEUE
    routes = getattr(settings, "CELERY_TASK_ROUTES", None) or {}
    named = sorted({route["queue"] for route in routes.values() if "queue" in route} - {default})
    return [default, *named]


# --- Readings ---------------------------------------------------------------------------------


def _statement_timeout() -> None:
    if connection.vendor == "postgresql":
        milliseconds = int(settings.METRICS_STATEMENT_TIMEOUT_MS)
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL statement_timeout = {milliseconds}")


def payouts_pending_read() -> list[tuple[str, int, float | None]]:
    """(status, count, age of the oldest in seconds) for every status not yet final."""
    now = timezone.now()
    with transaction.atomic():
        _statement_timeout()
        rows = {
            row["status"]: row
            for row in Payout.objects.filter(status__in=PENDING_STATUSES)
            .order_by()
            .values("status")
            .annotate(
                count=Count("id"),
                # A payout the merchant holds (approval pending, scheduled for later) is not
                # waiting on us: the age counts from when it was free to go.
                oldest=Min(
                    Greatest("created_at", "approved_at", "scheduled_for"),
                    filter=payout_dispatchable_q(now=now),
                ),
            )
        }
    result = []
    for status in PENDING_STATUSES:
        row = rows.get(status)
        oldest = row["oldest"] if row else None
        age = (now - oldest).total_seconds() if oldest is not None else None
        result.append((str(status), row["count"] if row else 0, age))
    return result


def webhook_backlog_read() -> tuple[int, float | None]:
    """Pending deliveries, and the seconds since the oldest due one fell due (None if none
    is due)."""
    now = timezone.now()
    with transaction.atomic():
        _statement_timeout()
        pending = WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING)
        count = pending.count()
        oldest_due = (
            pending.filter(next_attempt_at__lte=now)
            .order_by()
            .aggregate(oldest=Min("next_attempt_at"))["oldest"]
        )
    return count, (now - oldest_due).total_seconds() if oldest_due is not None else None


def queue_depths_read() -> dict[str, int] | None:
    """Messages waiting per project queue, or None for a broker this cannot read."""
    url = str(celery_app.conf.broker_url or "")
    queues = project_queues()
    if url.startswith(("redis://", "rediss://", "unix://")):
        import redis

        client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        try:
            pipeline = client.pipeline(transaction=False)
            for queue in queues:
                pipeline.llen(queue)
                for step in REDIS_PRIORITY_STEPS:
                    pipeline.llen(f"{queue}{REDIS_PRIORITY_SEPARATOR}{step}")
            lengths = pipeline.execute()
        finally:
            client.close()
        per = 1 + len(REDIS_PRIORITY_STEPS)
        return {
            queue: sum(lengths[index * per : (index + 1) * per])
            for index, queue in enumerate(queues)
        }
    if url.startswith("filesystem://"):
        options = celery_app.conf.broker_transport_options or {}
        folder = Path(options.get("data_folder_in", settings.CELERY_BROKER_DIR / "out"))
        counts = dict.fromkeys(queues, 0)
        with os.scandir(folder) as entries:
            for entry in entries:
                # kombu names a message file "<time>_<uuid>.<queue>.msg".
                name = entry.name
                if name.endswith(".msg"):
                    queue = name[: -len(".msg")].split(".", 1)[-1]
                    if queue in counts:
                        counts[queue] += 1
        return counts
    if broker_is_amqp(url):
        return _rabbitmq_queue_depths(queues)
    return None


def _rabbitmq_queue_depths(queues: list[str]) -> dict[str, int]:
    """Ready messages per queue (a passive declare; a queue not declared yet holds none).
    Messages a worker holds unacknowledged are not counted."""
    from amqp.exceptions import NotFound

    counts = dict.fromkeys(queues, 0)
    with celery_app.connection_for_read() as connection:
        connection.ensure_connection(max_retries=1, timeout=2)
        channel: Any = connection.channel()  # py-amqp's channel: queue_declare, close
        try:
            for queue in queues:
                try:
                    counts[queue] = channel.queue_declare(queue, passive=True).message_count
                except NotFound:  # RabbitMQ closed the channel with the 404: open another
                    channel = connection.channel()
        finally:
            channel.close()
    return counts


# --- The collector ----------------------------------------------------------------------------


class ServiceStateCollector(Collector):
    """Gauges read when ``/metrics`` is scraped."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "metrics_collector_up",
            "Whether a part of the scrape-time metrics could be read (1) or not (0).",
            labels=["part"],
        )
        for part, collect in self._parts():
            try:
                families = list(collect())
            except Exception:  # noqa: BLE001 - one unreadable part must not hide the rest
                logger.warning("metrics: %s unreadable", part, exc_info=True)
                up.add_metric([part], 0)
                continue
            up.add_metric([part], 1)
            yield from families
        yield up

    def _parts(self) -> list[tuple[str, Callable[[], Iterator[Metric]]]]:
        return [
            ("payouts", self._payouts),
            ("webhooks", self._webhooks),
            ("queues", self._queues),
            ("heartbeats", self._heartbeats),
        ]

    def _payouts(self) -> Iterator[Metric]:
        count = GaugeMetricFamily(
            "payouts_pending", "Payouts not yet final, by status.", labels=["status"]
        )
        oldest = GaugeMetricFamily(
            "payouts_pending_oldest_age_seconds",
            "Age of the oldest payout in each status not yet final (0 when there is none).",
            labels=["status"],
        )
        for status, number, age in payouts_pending_read():
            count.add_metric([status], number)
            oldest.add_metric([status], age or 0.0)
        yield count
        yield oldest

    def _webhooks(self) -> Iterator[Metric]:
        pending, oldest_due = webhook_backlog_read()
        yield GaugeMetricFamily(
            "webhook_deliveries_pending",
            "Webhook deliveries with an attempt still to make.",
            value=pending,
        )
        yield GaugeMetricFamily(
            "webhook_deliveries_oldest_due_age_seconds",
            "How long the oldest due webhook delivery has been due (0 when none is due).",
            value=oldest_due or 0.0,
        )

    def _queues(self) -> Iterator[Metric]:
        depths = queue_depths_read()
        if depths is None:
            return
        family = GaugeMetricFamily(
            "celery_queue_length", "Messages waiting in a Celery queue.", labels=["queue"]
        )
        for queue, depth in depths.items():
            family.add_metric([queue], depth)
        yield family

    def _heartbeats(self) -> Iterator[Metric]:
        workers = GaugeMetricFamily(
            "celery_worker_heartbeat_timestamp_seconds",
            "When a worker consuming the queue last beat (Unix time; absent if never).",
            labels=["queue"],
        )
        for queue in project_queues():
            last = heartbeat_last(worker_heartbeat_name(queue))
            if last is not None:
                workers.add_metric([queue], last)
        yield workers
        beat = GaugeMetricFamily(
            "celery_beat_heartbeat_timestamp_seconds",
            "When beat last beat (Unix time; absent if never).",
        )
        last = heartbeat_last(BEAT_HEARTBEAT)
        if last is not None:
            beat.add_metric([], last)
        yield beat
        tasks = GaugeMetricFamily(
            "celery_beat_task_last_sent_timestamp_seconds",
            "When beat last sent each schedule entry (Unix time; absent if never).",
            labels=["entry", "task"],
        )
        for entry, spec in sorted((settings.CELERY_BEAT_SCHEDULE or {}).items()):
            last = heartbeat_last(beat_task_heartbeat_name(entry))
            if last is not None:
                tasks.add_metric([entry, spec["task"]], last)
        yield tasks


# --- The view ---------------------------------------------------------------------------------


def metrics_allowed(request: HttpRequest) -> JsonResponse | None:
    """None when the caller may read the metrics, else the answer to give."""
    token = str(getattr(settings, "METRICS_TOKEN", "") or "")
    if token:
        scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), token):
            return None
        response = envelope_json_response("A valid metrics token is required", 401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    if request.META.get("REMOTE_ADDR") in LOOPBACK_ADDRESSES:
        return None
    return envelope_json_response("Metrics are served on the loopback interface only", 403)


@csrf_exempt
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    refused = metrics_allowed(request)
    if refused is not None:
        return refused
    started = time.perf_counter()
    state = CollectorRegistry(auto_describe=False)
    state.register(ServiceStateCollector())
    output = generate_latest(metrics_registry()) + generate_latest(state)
    logger.debug("metrics scraped in %.3fs", time.perf_counter() - started)
    return HttpResponse(output, content_type=CONTENT_TYPE_LATEST)
