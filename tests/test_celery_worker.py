"""``celery_client_reset``: this process's publishing side follows a changed configuration and
keeps every registered task, also those declared after the reset."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from celery import shared_task

from config.celery_app import app as celery_app
from tests.celery_worker import celery_client_reset


@pytest.fixture
def memory_broker() -> Iterator[None]:
    """The in-process broker for these tests, and the previous configuration afterwards."""
    previous = (
        celery_app.conf.broker_url,
        celery_app.conf.broker_transport_options,
        celery_app.conf.task_routes,
    )
    celery_app.conf.broker_url = "memory://"
    celery_app.conf.broker_transport_options = {}
    celery_client_reset()
    yield
    (
        celery_app.conf.broker_url,
        celery_app.conf.broker_transport_options,
        celery_app.conf.task_routes,
    ) = previous
    celery_client_reset()


@pytest.fixture
def task_name() -> Iterator[str]:
    """A task name of this test's own, unregistered afterwards."""
    name = f"tests.reset_probe_{uuid.uuid4().hex[:12]}"
    yield name
    if name in celery_app.tasks:
        celery_app.tasks.unregister(name)


def _task_name_of_message_in(queue: str) -> str | None:
    with celery_app.connection_for_write() as connection:
        message = connection.default_channel.basic_get(queue, no_ack=True)
    return None if message is None else message.headers["task"]


def test_a_task_declared_after_the_reset_is_registered(memory_broker: None, task_name: str) -> None:
    celery_app.finalize()  # like after the first publish: later tasks register on declaration
    celery_client_reset()

    @shared_task(name=task_name)
    def probe() -> None:
        return None

    assert task_name in celery_app.tasks
    assert probe.app is celery_app


def test_publishing_follows_routes_changed_between_resets(
    memory_broker: None, task_name: str
) -> None:
    @shared_task(name=task_name)
    def probe() -> None:
        return None

    first_queue, second_queue = (f"reset-{uuid.uuid4().hex[:12]}" for _ in range(2))
    celery_app.conf.task_routes = {task_name: {"queue": first_queue}}
    celery_client_reset()
    probe.delay()
    celery_app.conf.task_routes = {task_name: {"queue": second_queue}}
    celery_client_reset()
    probe.delay()

    assert _task_name_of_message_in(first_queue) == task_name
    assert _task_name_of_message_in(second_queue) == task_name
    assert _task_name_of_message_in(first_queue) is None
