"""LOG_FORMAT=json, and the lines of idle routine task runs at DEBUG."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from core.logging import (
    JsonFormatter,
    RoutineTaskLogFilter,
    SecretRedactingFilter,
    result_is_idle,
)
from core.request_id import RequestIdLogFilter, request_id_reset, request_id_set

KEY = "sk_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
ROUTINE = "payouts.tasks.payouts_dispatch_round_task"


def _json_lines(emit) -> list[dict]:  # type: ignore[no-untyped-def]
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdLogFilter())
    handler.addFilter(SecretRedactingFilter())
    logger = logging.getLogger("tests.json")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        emit(logger)
    finally:
        logger.removeHandler(handler)
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_lines_carry_level_logger_message_and_request_id() -> None:
    token = request_id_set("req-json")
    try:
        (line,) = _json_lines(lambda logger: logger.info("paid %s", "po_1"))
    finally:
        request_id_reset(token)
    assert line["level"] == "INFO"
    assert line["logger"] == "tests.json"
    assert line["message"] == "paid po_1"
    assert line["request_id"] == "req-json"
    assert line["time"].endswith("+00:00")


def test_json_lines_redact_secrets_in_message_and_exception() -> None:
    def emit(logger: logging.Logger) -> None:
        try:
            raise ValueError(f"bad {KEY}")
        except ValueError:
            logger.exception("key %s", KEY)

    (line,) = _json_lines(emit)
    assert KEY not in json.dumps(line)
    assert "ValueError" in line["exception"]


def test_the_configured_handler_follows_log_format(settings) -> None:
    assert settings.LOGGING["handlers"]["console"]["formatter"] == settings.LOG_FORMAT
    assert "redact_secrets" in settings.LOGGING["handlers"]["console"]["filters"]
    assert settings.LOGGING["formatters"]["json"]["()"] == "core.logging.JsonFormatter"


@pytest.mark.parametrize(
    ("result", "idle"),
    [
        ("'dispatch_round: 0 payout(s) claimed'", True),
        ("'dispatch_round: 3 payout(s) claimed: 3 successful'", False),
        ("'Considered 0 stuck payout(s) (0 reserved for over 2 min, 0 processing)'", True),
        ("'Considered 2 due payout(s): 2 successful; 0 error(s).'", False),
        ("'payout_counts_fold: 0 change(s) folded'", True),
        ("0", True),
        ("4", False),
        ("None", True),
    ],
)
def test_an_idle_result_is_told_by_its_first_number(result: str, idle: bool) -> None:
    assert result_is_idle(result) is idle


@pytest.fixture
def celery_logger() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("tests.celery.app.trace")
    routine = RoutineTaskLogFilter(tasks=[ROUTINE])
    logger.addFilter(routine)
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    yield logger, stream
    logger.removeFilter(routine)
    logger.removeHandler(handler)


def _success(logger: logging.Logger, name: str, result: str) -> None:
    # The shape of Celery's own "succeeded" line (celery.app.trace.LOG_SUCCESS).
    context = {"id": "1", "name": name, "return_value": result, "runtime": 0.01}
    logger.info("Task %(name)s[%(id)s] succeeded in %(runtime)ss: %(return_value)s", context,
                extra={"data": context})  # fmt: skip


def _received(logger: logging.Logger, name: str) -> None:
    context = {"id": "1", "name": name, "args": "()", "kwargs": "{}", "eta": None}
    logger.info("Task %(name)s[%(id)s] received", context, extra={"data": context})


def test_idle_routine_runs_are_not_logged_at_info(celery_logger) -> None:
    logger, stream = celery_logger
    _received(logger, ROUTINE)
    _success(logger, ROUTINE, "'dispatch_round: 0 payout(s) claimed'")
    logger.info("Scheduler: Sending due task %s (%s)", "payouts-dispatch-round", ROUTINE)
    assert stream.getvalue() == ""


def test_a_routine_run_that_did_something_stays_info(celery_logger) -> None:
    logger, stream = celery_logger
    _success(logger, ROUTINE, "'dispatch_round: 2 payout(s) claimed: 2 successful'")
    assert stream.getvalue().startswith("INFO Task")


def test_other_tasks_stay_info(celery_logger) -> None:
    logger, stream = celery_logger
    _received(logger, "payouts.tasks.payout_dispatch_task")
    _success(logger, "payouts.tasks.payout_dispatch_task", "None")
    assert stream.getvalue().count("INFO Task") == 2


def test_idle_routine_runs_show_at_debug(celery_logger) -> None:
    logger, stream = celery_logger
    logger.setLevel(logging.DEBUG)
    _success(logger, ROUTINE, "'dispatch_round: 0 payout(s) claimed'")
    assert stream.getvalue().startswith("DEBUG Task")


def test_the_celery_loggers_run_the_routine_filter(settings) -> None:
    for name in ("celery.beat", "celery.worker.strategy", "celery.app.trace"):
        assert settings.LOGGING["loggers"][name]["filters"] == ["routine_tasks"]
