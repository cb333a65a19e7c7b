"""The request id: accepted or made by the middleware, echoed, on every log record, copied
into the headers of the tasks a request queues and restored in the worker."""

from __future__ import annotations

import importlib
import logging
from types import SimpleNamespace

import pytest
from django.test import Client

from core.request_id import (
    REQUEST_ID_MAX_LENGTH,
    RequestIdLogFilter,
    request_id_get,
    request_id_reset,
    request_id_set,
)

# The module (``config.celery_app`` the attribute is the Celery app itself).
celery_app = importlib.import_module("config.celery_app")


def test_a_valid_request_id_is_accepted_and_echoed() -> None:
    response = Client().get("/healthz", HTTP_X_REQUEST_ID="abc-123.def_4:5")
    assert response["X-Request-ID"] == "abc-123.def_4:5"


@pytest.mark.parametrize(
    "given",
    [
        "",
        "has space",
        "new\nline",
        "x" * (REQUEST_ID_MAX_LENGTH + 1),
        "<script>",
        "ünïcode",
    ],
)
def test_an_invalid_request_id_is_replaced(given: str) -> None:
    response = Client().get("/healthz", HTTP_X_REQUEST_ID=given)
    echoed = response["X-Request-ID"]
    assert echoed != given
    assert len(echoed) == 32 and echoed.isalnum()


def test_a_request_without_an_id_gets_a_new_one_each_time() -> None:
    first = Client().get("/healthz")["X-Request-ID"]
    second = Client().get("/healthz")["X-Request-ID"]
    assert first and second and first != second


def test_the_id_is_current_only_during_the_request() -> None:
    Client().get("/healthz", HTTP_X_REQUEST_ID="during-request")
    assert request_id_get() is None


def test_log_records_carry_the_current_id() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "message", None, None)
    token = request_id_set("req-42")
    try:
        RequestIdLogFilter().filter(record)
    finally:
        request_id_reset(token)
    assert record.request_id == "req-42"
    outside = logging.LogRecord("x", logging.INFO, __file__, 1, "message", None, None)
    RequestIdLogFilter().filter(outside)
    assert outside.request_id == "-"


def test_a_published_task_carries_the_id_in_its_headers() -> None:
    headers: dict[str, object] = {"task": "payouts.tasks.payout_dispatch_task"}
    token = request_id_set("req-publish")
    try:
        celery_app._request_id_publish(headers=headers)
    finally:
        request_id_reset(token)
    assert headers[celery_app.REQUEST_ID_HEADER] == "req-publish"


def test_a_task_outside_a_request_carries_no_id() -> None:
    headers: dict[str, object] = {"task": "payouts.tasks.payout_dispatch_task"}
    celery_app._request_id_publish(headers=headers)
    assert celery_app.REQUEST_ID_HEADER not in headers


def test_the_worker_restores_the_id_for_the_task_and_clears_it_after() -> None:
    task = SimpleNamespace(request=SimpleNamespace(is_eager=False, request_id="req-worker"))
    celery_app._request_id_restore(task=task)
    assert request_id_get() == "req-worker"
    celery_app._request_id_clear(task=task)
    assert request_id_get() is None


def test_the_worker_refuses_an_invalid_id_from_a_header() -> None:
    task = SimpleNamespace(request=SimpleNamespace(is_eager=False, request_id="bad id\n"))
    celery_app._request_id_restore(task=task)
    try:
        assert request_id_get() is None
    finally:
        celery_app._request_id_clear(task=task)
