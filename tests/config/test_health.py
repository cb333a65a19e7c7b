"""/readyz: the database, the broker, the money worker's and beat's heartbeats."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from core.heartbeats import BEAT_HEARTBEAT, heartbeat_record, worker_heartbeat_name


def _beat_all(*, age: float = 0.0) -> None:
    at = time.time() - age
    heartbeat_record(worker_heartbeat_name(settings.CELERY_TASK_DEFAULT_QUEUE), at=at)
    heartbeat_record(worker_heartbeat_name(settings.WEBHOOK_QUEUE), at=at)
    heartbeat_record(BEAT_HEARTBEAT, at=at)


@pytest.mark.django_db
def test_ready_when_every_part_is_fine(api_client: APIClient) -> None:
    _beat_all()
    response = api_client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["data"] == {
        "database": True,
        "broker": True,
        "worker": True,
        "beat": True,
        "webhooks_worker": True,
    }


@pytest.mark.django_db
def test_not_ready_names_the_worker_when_its_heartbeat_is_stale(api_client: APIClient) -> None:
    _beat_all()
    stale = settings.WORKER_HEARTBEAT_STALE_SECONDS + 1
    heartbeat_record(
        worker_heartbeat_name(settings.CELERY_TASK_DEFAULT_QUEUE), at=time.time() - stale
    )
    response = api_client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["message"] == "not ready: worker not seen"
    assert response["Retry-After"] == "5"


@pytest.mark.django_db
def test_not_ready_when_no_worker_was_ever_seen(api_client: APIClient) -> None:
    heartbeat_record(BEAT_HEARTBEAT)
    response = api_client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["message"] == "not ready: worker not seen"


@pytest.mark.django_db
def test_not_ready_names_beat_when_its_heartbeat_is_stale(api_client: APIClient) -> None:
    _beat_all()
    heartbeat_record(BEAT_HEARTBEAT, at=time.time() - settings.BEAT_HEARTBEAT_STALE_SECONDS - 1)
    response = api_client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["message"] == "not ready: beat not seen"


@pytest.mark.django_db
def test_a_stopped_webhook_pool_is_reported_but_leaves_readiness(api_client: APIClient) -> None:
    _beat_all()
    heartbeat_record(worker_heartbeat_name(settings.WEBHOOK_QUEUE), at=time.time() - 3600)
    response = api_client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["data"]["webhooks_worker"] is False


@pytest.mark.django_db
def test_the_staleness_threshold_is_a_setting(api_client: APIClient, settings) -> None:
    _beat_all(age=3)
    settings.WORKER_HEARTBEAT_STALE_SECONDS = 2
    response = api_client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["message"] == "not ready: worker not seen"


@pytest.mark.slow  # waits for a broker connection to time out
@pytest.mark.django_db
def test_an_unreachable_broker_and_a_missing_worker_are_both_named(
    api_client: APIClient,
) -> None:
    from config.celery_app import app

    heartbeat_record(BEAT_HEARTBEAT)
    original = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"
    try:
        response = api_client.get("/readyz")
    finally:
        app.conf.broker_url = original
    assert response.status_code == 503
    assert response.json()["message"] == "not ready: broker unreachable, worker not seen"
