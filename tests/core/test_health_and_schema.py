from __future__ import annotations

import time

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient


def test_healthz_needs_no_auth(api_client: APIClient) -> None:
    response = api_client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["data"] == {"alive": True}


@pytest.fixture
def heartbeats_fresh(settings, tmp_path) -> None:
    """The worker pools and beat beat just now (readiness also asks for them)."""
    from core.heartbeats import BEAT_HEARTBEAT, heartbeat_record, worker_heartbeat_name

    settings.HEARTBEAT_STORE = "file"
    settings.HEARTBEAT_DIR = str(tmp_path / "heartbeats")
    for name in (
        worker_heartbeat_name(settings.CELERY_TASK_DEFAULT_QUEUE),
        worker_heartbeat_name(settings.WEBHOOK_QUEUE),
        BEAT_HEARTBEAT,
    ):
        heartbeat_record(name, at=time.time())


@pytest.mark.django_db
def test_readyz_checks_database_and_broker(api_client: APIClient, heartbeats_fresh) -> None:
    response = api_client.get("/readyz")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["database"] is True
    assert data["broker"] is True


@pytest.mark.slow
@pytest.mark.django_db
def test_readyz_reports_an_unreachable_broker(
    api_client: APIClient, settings, heartbeats_fresh
) -> None:
    from config.celery_app import app

    original = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"
    try:
        response = api_client.get("/readyz")
    finally:
        app.conf.broker_url = original
    assert response.status_code == 503
    assert response.json()["message"] == "not ready: broker unreachable"


@pytest.mark.django_db
def test_schema_is_served_and_valid(api_client: APIClient) -> None:
    response = api_client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    components = schema["components"]
    assert components["securitySchemes"]["SecretKeyAuth"]["scheme"] == "bearer"
    assert set(components["schemas"]["ErrorEnvelope"]["required"]) == {
        "status",
        "message",
        "data",
        "statusCode",
    }
    assert set(components["schemas"]["ForbiddenError"]["required"]) == {
        "message",
        "error",
        "statusCode",
    }


@pytest.mark.django_db
def test_schema_validates_without_warnings() -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")


def test_swagger_ui_is_served(api_client: APIClient) -> None:
    response = api_client.get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()
