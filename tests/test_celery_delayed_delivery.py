"""On RabbitMQ a countdown is kept by the broker (Celery's native delayed delivery), and a
delayed message that finds no route to its queue is dropped without an error. The publishing
process makes the route itself (``config.celery_broker.delayed_delivery_routes_ensure``), so a
delayed task arrives on a broker no worker has set up yet, and on a queue no worker has bound.
No worker runs here: the message is read from its queue. The first case deletes the delay
exchanges and queues on the machine's RabbitMQ (the publish declares them again); no other test
of the parallel lane delays a task on RabbitMQ."""

from __future__ import annotations

import time
from typing import Any

import pytest
from kombu import Connection
from kombu.transport.native_delayed_delivery import (
    MAX_LEVEL,
    declare_native_delayed_delivery_exchanges_and_queues,
    level_name,
)

from config.celery_app import app as celery_app
from config.celery_broker import delayed_delivery_forget
from tests.celery_worker import (
    RABBITMQ_URL,
    celery_publishing_to,
    rabbitmq_require,
    unavailable_for,
    unique_queue,
)

# A countdown runs for a whole second at least; every case waits for one.
pytestmark = pytest.mark.slow

TASK = "payouts.tasks.payouts_dispatch_round_task"


@pytest.fixture(autouse=True)
def _rabbitmq() -> None:
    rabbitmq_require(RABBITMQ_URL, unavailable=unavailable_for("delayed delivery on RabbitMQ"))


def _delay_topology_delete() -> None:
    """Deletes Celery's delay exchanges and queues, as on a broker that has never seen a worker
    (the next publish of a countdown declares them again)."""
    with Connection(RABBITMQ_URL, connect_timeout=2) as client:
        channel = client.channel()
        for level in range(MAX_LEVEL + 1):
            channel.queue_delete(level_name(level))
            channel.exchange_delete(level_name(level))
        channel.exchange_delete("celery_delayed_delivery")
        channel.close()
    delayed_delivery_forget()


def _delay_topology_declare() -> None:
    """Declares the delay exchanges and queues, as a worker of another queue did before."""
    with Connection(RABBITMQ_URL, connect_timeout=2) as client:
        declare_native_delayed_delivery_exchanges_and_queues(client, "quorum")


def _message_wait(queue: str, *, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    with Connection(RABBITMQ_URL, connect_timeout=2) as client:
        channel = client.channel()
        while time.monotonic() < deadline:
            message = channel.basic_get(queue, no_ack=True)
            if message is not None:
                return message
            time.sleep(0.1)
    raise AssertionError(f"no message reached {queue} within {timeout:.0f}s")


@pytest.mark.parametrize("broker_state", ["never-set-up", "set-up-but-queue-new"])
def test_a_countdown_published_before_any_worker_reaches_its_queue(broker_state: str) -> None:
    queue = unique_queue("delayed")
    if broker_state == "never-set-up":
        _delay_topology_delete()
    else:
        _delay_topology_declare()
    with celery_publishing_to(RABBITMQ_URL, queue=queue, task_patterns=["payouts.tasks.*"]):
        sent_at = time.monotonic()
        celery_app.send_task(TASK, countdown=1)
        message = _message_wait(queue, timeout=15)
        waited = time.monotonic() - sent_at

    assert message.headers["task"] == TASK
    assert waited >= 0.9  # kept by the broker for its countdown, not delivered at once
