"""The bench's Celery broker: Redis (``BENCH_REDIS_URL``, the default) or RabbitMQ
(``BENCH_BROKER=rabbitmq``, at ``BENCH_RABBITMQ_URL``, default
``amqp://guest:guest@127.0.0.1:5672//``).

On RabbitMQ the gunicorn and Celery processes get the production settings for it
(``config.celery_broker``: quorum queues, publisher confirms, delays kept by the broker) through
``CELERY_BROKER_URL``. The RabbitMQ may be shared, so the run's default and webhooks queues are
named for the run (``bench-<salt>``, ``bench-webhooks-<salt>``; the Procfile's worker lines read
them from ``CELERY_DEFAULT_QUEUE`` and ``WEBHOOK_QUEUE``) and deleted, with their exchanges,
afterwards. The cache stays on Redis either way. The report names the broker and its version.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from benchmarks.harness.config import Config

BROKERS = ("redis", "rabbitmq")
RABBITMQ_URL = os.environ.get("BENCH_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672//")


def broker_kind() -> str:
    kind = os.environ.get("BENCH_BROKER", "redis") or "redis"
    if kind not in BROKERS:
        raise ValueError(f"BENCH_BROKER must be one of {', '.join(BROKERS)}, not {kind!r}")
    return kind


def broker_url(cfg: Config) -> str:
    return RABBITMQ_URL if broker_kind() == "rabbitmq" else cfg.redis_url


def bench_queues(cfg: Config) -> dict[str, str]:
    """The run's own queues on RabbitMQ (``CELERY_DEFAULT_QUEUE``, ``WEBHOOK_QUEUE``); on Redis,
    whose database the bench flushes, the project's names."""
    if broker_kind() != "rabbitmq":
        return {}
    return {
        "CELERY_DEFAULT_QUEUE": f"bench-{cfg.salt}",
        "WEBHOOK_QUEUE": f"bench-webhooks-{cfg.salt}",
    }


def broker_env(cfg: Config) -> dict[str, str]:
    """What the service processes get for the broker: its URL, and the run's queues."""
    return {"CELERY_BROKER_URL": broker_url(cfg), **bench_queues(cfg)}


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def broker_describe(cfg: Config) -> dict[str, Any]:
    """The broker for the report: kind, URL (no password), server version, queue type."""
    kind = broker_kind()
    described: dict[str, Any] = {"kind": kind, "url": _without_password(broker_url(cfg))}
    if kind == "rabbitmq":
        from kombu import Connection

        with Connection(RABBITMQ_URL, connect_timeout=5) as connection:
            connection.ensure_connection(max_retries=1)
            properties = connection.connection.server_properties
        described["version"] = str(properties.get("version", "?"))
        described["queues"] = "quorum, publisher confirms"
        described["queue_names"] = bench_queues(cfg)
    return described


def broker_cleanup(cfg: Config) -> None:
    """Deletes the run's queues and their exchanges from RabbitMQ (nothing on Redis)."""
    if broker_kind() != "rabbitmq":
        return
    from kombu import Connection

    with Connection(RABBITMQ_URL, connect_timeout=5) as connection:
        channel = connection.channel()
        for queue in bench_queues(cfg).values():
            channel.queue_delete(queue)
            channel.exchange_delete(queue)
        channel.close()
