"""Celery's configuration for a RabbitMQ broker (``CELERY_BROKER_URL=amqp://…``), in one place
for the settings and for anything that points Celery at RabbitMQ later (the tests, the bench).

- **Quorum queues.** Every queue the service declares is a quorum queue (``x-queue-type:
  quorum``): the default queue (``CELERY_DEFAULT_QUEUE``), the webhooks queue and any other
  routed queue (Celery declares those as "missing" queues). A quorum queue is replicated by Raft
  across the cluster's nodes and survives the loss of a minority of them; a classic queue lives
  on one node.
- **Acks late** (``CELERY_TASK_ACKS_LATE``, set for every broker): a task is acknowledged after it
  ran, so one a killed worker held goes back to the queue. RabbitMQ requeues it the moment the
  worker's connection closes; Redis only after its visibility timeout.
- **Publisher confirms** (``confirm_publish``): a publish returns once RabbitMQ has taken the
  message (on a quorum queue: written by a majority of its replicas), else it raises, and the
  caller logs it and leaves the work to its sweeper.
- **Timeouts.** A connect gives up after ``CELERY_BROKER_CONNECT_TIMEOUT`` and a publish (the
  write and the wait for its confirm) after ``CELERY_BROKER_PUBLISH_TIMEOUT``, so with RabbitMQ
  down or unreachable a create still answers (the enqueue failure is logged) instead of hanging.
- **No global QoS.** Quorum queues refuse a channel-wide prefetch; Celery sees quorum queues
  (``worker_detect_quorum_queues``) and sets the prefetch per consumer, where it stays fixed at
  concurrency × ``CELERY_WORKER_PREFETCH_MULTIPLIER``.
- **Delays in the broker.** With a fixed prefetch a worker must not hold a task whose countdown
  has not run out (it would keep a slot for that long), so countdowns and retries are kept by
  RabbitMQ (Celery's native delayed delivery: the ``celery_delayed_*`` quorum queues, declared
  by each worker at start). That needs topic exchanges, and it counts whole seconds:
  ``config.celery_app`` makes a countdown under one second one second.
- **Delays are routed before they are sent.** A worker declares the ``celery_delayed_*``
  exchanges and queues and binds its queues to them only once it has started consuming, and
  a delayed message that finds no route is dropped by RabbitMQ without an error (or, with no
  ``celery_delayed_27`` exchange yet, its publish fails). So the process that publishes a
  countdown first makes sure of the route itself (``delayed_delivery_routes_ensure``): on a
  broker that has never seen a worker, a web server's first delayed dispatch round arrives,
  and a retry a worker sends in its first second (before its own setup has bound the queue)
  is not lost. Once per process for the topology and once for each queue; idempotent on
  RabbitMQ's side.
- **Long tasks.** RabbitMQ closes the channel of a consumer that holds a delivery unacknowledged
  for longer than its ``consumer_timeout`` (30 minutes by default), and the task goes back to
  the queue. Every task here has a hard time limit far below that (at most a few minutes,
  ``CELERY_TASK_TIME_LIMIT`` for the rest); keep ``consumer_timeout`` above the longest one,
  plus the longest countdown a worker still holds (none, with delays kept by the broker).
"""

from __future__ import annotations

import threading
from typing import Any

from kombu import Queue
from kombu.transport.native_delayed_delivery import (
    bind_queue_to_native_delayed_delivery_exchange,
    declare_native_delayed_delivery_exchanges_and_queues,
)

AMQP_SCHEMES = ("amqp://", "amqps://", "pyamqp://")
# Celery's native delayed delivery counts whole seconds: a shorter countdown is made this.
BROKER_DELAY_MIN_SECONDS = 1


def broker_is_amqp(url: str) -> bool:
    return url.startswith(AMQP_SCHEMES)


def amqp_celery_config(*, connect_timeout: float, publish_timeout: float) -> dict[str, Any]:
    """Celery's settings for RabbitMQ, by their lower-case names (``app.conf`` keys; in Django
    settings each is ``CELERY_`` + the name in capitals)."""
    return {
        "task_default_queue_type": "quorum",
        "task_create_missing_queue_type": "quorum",
        "task_default_exchange_type": "topic",
        "task_create_missing_queue_exchange_type": "topic",
        "worker_detect_quorum_queues": True,
        "broker_native_delayed_delivery_queue_type": "quorum",
        "broker_connection_timeout": connect_timeout,
        "broker_transport_options": {
            "confirm_publish": True,
            "connect_timeout": connect_timeout,
        },
        "broker_publish_timeout": publish_timeout,
    }


# What this process has already declared: the topology per broker URL, the route per
# (broker URL, queue name).
_delayed_topology_ready: set[str] = set()
_delayed_routes_ready: set[tuple[str, str]] = set()
_delayed_lock = threading.Lock()


def delayed_delivery_routes_ensure(app: Any, routed_queue: Queue | None) -> None:
    """Makes sure a delayed message from this process reaches its queue: Celery's delay
    exchanges and queues exist, and ``routed_queue`` and every queue the app knows (the ones a
    worker would bind) are declared and bound to the delivery exchange. Raises what the broker
    raises; the caller's publish would have failed the same way."""
    broker_url = str(app.conf.broker_url)
    queues = [queue for queue in app.amqp.queues.values() if queue.name]
    if routed_queue is not None and routed_queue.name:
        queues.append(routed_queue)
    missing = [queue for queue in queues if (broker_url, queue.name) not in _delayed_routes_ready]
    if broker_url in _delayed_topology_ready and not missing:
        return
    with _delayed_lock, app.connection_for_write() as connection:
        if broker_url not in _delayed_topology_ready:
            declare_native_delayed_delivery_exchanges_and_queues(
                connection, app.conf.broker_native_delayed_delivery_queue_type
            )
            _delayed_topology_ready.add(broker_url)
        for queue in missing:
            if (broker_url, queue.name) in _delayed_routes_ready:
                continue
            queue.bind(connection.default_channel).declare()
            bind_queue_to_native_delayed_delivery_exchange(connection, queue)
            _delayed_routes_ready.add((broker_url, queue.name))


def delayed_delivery_forget() -> None:
    """Forgets what this process declared (after the topology was deleted on the broker)."""
    with _delayed_lock:
        _delayed_topology_ready.clear()
        _delayed_routes_ready.clear()
