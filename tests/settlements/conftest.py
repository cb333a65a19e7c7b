from __future__ import annotations

from collections.abc import Iterator

import pytest

from config.celery_app import app as celery_app
from tests.collections_app.helpers import celery_client_reset


@pytest.fixture(scope="session", autouse=True)
def _in_memory_broker() -> Iterator[None]:
    """Tasks enqueued on commit by these tests go to an in-process broker, never to the
    developer's ``var/broker`` queue."""
    previous = (celery_app.conf.broker_url, celery_app.conf.broker_transport_options)
    celery_app.conf.broker_url = "memory://localhost/"
    celery_app.conf.broker_transport_options = {}
    celery_client_reset()
    yield
    celery_app.conf.broker_url, celery_app.conf.broker_transport_options = previous
    celery_client_reset()
