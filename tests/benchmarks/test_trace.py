"""The bench's per-request trace (``benchmarks/trace.py``) and the table the harness folds it into
(``benchmarks/harness/tail.py``): a traced request's phases are written out, an untraced one
is not, and the breakdown's slowest-1 % column averages the slowest requests only."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory

from benchmarks import trace
from benchmarks.harness.tail import breakdown, read_traces, tail_markdown

pytestmark = pytest.mark.django_db


def _view(request: HttpRequest) -> HttpResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse(status=202)


@pytest.fixture
def trace_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(trace, "TRACE_DIR", tmp_path)
    monkeypatch.setattr(trace, "_sink", trace._Sink())
    yield tmp_path
    trace.uninstall()


def test_a_traced_request_writes_its_phases(trace_dir: Path) -> None:
    middleware = trace.PhaseTraceMiddleware(_view)
    sent = int((time.time() - 0.05) * 1_000_000)
    request = RequestFactory().post(
        "/x", HTTP_X_BENCH_TRACE="run-1", HTTP_X_REQUEST_START=f"t={sent}"
    )

    assert middleware(request).status_code == 202

    (record,) = read_traces("run-1", trace_dir)
    assert record["status"] == 202
    assert record["statements"] == 1
    assert record["sql"] > 0
    assert record["app"] >= record["sql"]
    assert record["queue"] >= 50


def test_an_untraced_request_writes_nothing(trace_dir: Path) -> None:
    middleware = trace.PhaseTraceMiddleware(_view)

    assert middleware(RequestFactory().post("/x")).status_code == 202

    assert list(trace_dir.glob("*.jsonl")) == []


def test_the_slowest_percent_column_averages_the_slowest_requests_only(tmp_path: Path) -> None:
    rows = [{"run": "r", "queue": 1.0, "app": 10.0, "cpu": 5.0, "sql": 2.0}] * 197
    rows += [{"run": "r", "queue": 500.0, "app": 10.0, "cpu": 5.0, "sql": 2.0}] * 3
    (tmp_path / "1.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))

    table = breakdown(read_traces("r", tmp_path))

    assert table["requests"] == 200
    assert table["slowest_requests"] == 3
    assert table["phases"]["queue"]["p50_ms"] == 1.0
    assert table["phases"]["queue"]["slowest_1pct_mean_ms"] == 500.0
    assert table["phases"]["off_cpu"]["p50_ms"] == 3.0
    lines = tail_markdown({"tail_breakdown": {"run": "r", **table}, "runs": {}})
    assert any(line.startswith("| queue | 1.00 | 500.00 | 500.00 |") for line in lines)


def test_uninstall_puts_the_original_methods_back() -> None:
    from django.db.backends.base.base import BaseDatabaseWrapper

    from merchants.authentication import SecretKeyAuthentication

    original = SecretKeyAuthentication.__dict__["authenticate"]
    trace.install()
    wrapped = SecretKeyAuthentication.__dict__["authenticate"]
    trace.uninstall()

    assert wrapped is not original
    assert SecretKeyAuthentication.__dict__["authenticate"] is original
    assert not hasattr(BaseDatabaseWrapper.__dict__["_commit"], "__wrapped__")
