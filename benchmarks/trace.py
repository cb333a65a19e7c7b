"""Where a create's time goes, request by request, under the bench's load (``BENCH_TRACE``).

``benchmarks.bench_settings`` puts :class:`PhaseTraceMiddleware` first when ``BENCH_TRACE`` is
not ``0``; the product's settings never do. A request is traced only when it carries
``X-Bench-Trace`` (the wrk script sends it, with ``X-Request-Start: t=<µs since the epoch>``,
in the runs the harness traces), so untraced runs pay one header lookup. For each traced
request one JSON line goes to ``var/bench/trace/<pid>.jsonl``:

* ``queue``: from the client's send (``X-Request-Start``) to the first middleware: the
  kernel's socket queue, the event loop's read, the wait for the process's view thread;
* ``auth`` (secret key lookup), ``throttle`` (the rate limit's Redis round trip);
* ``transaction``: the create's atomic block (insert, reservation, commit, on-commit work),
  inside it ``lock`` (the wallet ``UPDATE`` that takes the row lock: its wait and its run),
  ``commit`` (the ``COMMIT`` round trip) and ``on_commit`` (the dispatcher's wake: Redis);
* ``sql`` (every statement, its count in ``statements``), ``connect`` (opening a database
  connection), ``render`` (the envelope's JSON), ``gc`` (collections during the request);
* ``app`` (first middleware in to response out) and ``cpu`` (the thread's CPU time in it):
  ``app - cpu - sql`` is time the thread was runnable but off a CPU, or waiting on Redis.

The patches wrap methods at class level once, when the middleware is built; each wrapper
returns at once when its thread has no traced request.
"""

from __future__ import annotations

import gc
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse

TRACE_DIR = Path(__file__).resolve().parent.parent / "var" / "bench" / "trace"
TRACE_HEADER = "HTTP_X_BENCH_TRACE"
START_HEADER = "HTTP_X_REQUEST_START"

_local = threading.local()
_installed = False
_install_lock = threading.Lock()
_originals: list[tuple[Any, str, Any]] = []


def _current() -> dict[str, float] | None:
    return getattr(_local, "phases", None)


def _add(phase: str, seconds: float) -> None:
    phases = _current()
    if phases is not None:
        phases[phase] = phases.get(phase, 0.0) + seconds * 1000


def _timed(phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _current() is None:
            return function(*args, **kwargs)
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _add(phase, time.perf_counter() - started)

    wrapper.__wrapped__ = function  # type: ignore[attr-defined]
    return wrapper


def _wrap(owner: Any, name: str, phase: str) -> None:
    original = owner.__dict__[name]
    _originals.append((owner, name, original))
    setattr(owner, name, _timed(phase, original))


def _sql_wrapper(
    execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
) -> Any:
    phases = _current()
    if phases is None:
        return execute(sql, params, many, context)
    started = time.perf_counter()
    try:
        return execute(sql, params, many, context)
    finally:
        elapsed = (time.perf_counter() - started) * 1000
        phases["sql"] = phases.get("sql", 0.0) + elapsed
        phases["statements"] = phases.get("statements", 0.0) + 1
        if sql.startswith('UPDATE "wallets_wallet"'):
            phases["lock"] = phases.get("lock", 0.0) + elapsed


def _gc_callback(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _local.gc_started = time.perf_counter()
        return
    started = getattr(_local, "gc_started", None)
    if started is not None:
        _add("gc", time.perf_counter() - started)


def install() -> None:
    """Wraps the create path's steps once per process (idempotent)."""
    global _installed
    with _install_lock:
        if _installed:
            return
        _installed = True
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.backends.signals import connection_created

    from core.api.renderers import EnvelopeJSONRenderer
    from core.api.throttling import SecretKeyRateThrottle
    from merchants.authentication import SecretKeyAuthentication
    from payouts.services import create

    _wrap(SecretKeyAuthentication, "authenticate", "auth")
    _wrap(SecretKeyRateThrottle, "allow_request", "throttle")
    _wrap(create, "_payout_insert", "transaction")
    _wrap(BaseDatabaseWrapper, "_commit", "commit")
    _wrap(BaseDatabaseWrapper, "run_and_clear_commit_hooks", "on_commit")
    _wrap(BaseDatabaseWrapper, "connect", "connect")
    _wrap(EnvelopeJSONRenderer, "render", "render")

    connection_created.connect(_add_sql_wrapper, weak=False)
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        _add_sql_wrapper(None, connection)
    gc.callbacks.append(_gc_callback)


def _add_sql_wrapper(sender: Any, connection: Any, **kwargs: Any) -> None:
    if _sql_wrapper not in connection.execute_wrappers:
        connection.execute_wrappers.append(_sql_wrapper)


def uninstall() -> None:
    """Undoes :func:`install` (for tests: the bench's processes keep the wrappers)."""
    global _installed
    from django.db import connections
    from django.db.backends.signals import connection_created

    with _install_lock:
        while _originals:
            owner, name, original = _originals.pop()
            setattr(owner, name, original)
        connection_created.disconnect(_add_sql_wrapper)
        for connection in connections.all(initialized_only=True):
            if _sql_wrapper in connection.execute_wrappers:
                connection.execute_wrappers.remove(_sql_wrapper)
        if _gc_callback in gc.callbacks:
            gc.callbacks.remove(_gc_callback)
        _installed = False


class _Sink:
    """One JSON line per traced request, appended to this process's file."""

    def __init__(self) -> None:
        self.pid = -1
        self.handle: Any = None
        self.lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with self.lock:
            if self.pid != os.getpid():
                TRACE_DIR.mkdir(parents=True, exist_ok=True)
                self.pid = os.getpid()
                self.handle = (TRACE_DIR / f"{self.pid}.jsonl").open("a", buffering=1)
            self.handle.write(line)


_sink = _Sink()


def request_start(header: str) -> float | None:
    """``X-Request-Start: t=<µs since the epoch>`` → seconds since the epoch."""
    value = header.strip().removeprefix("t=")
    try:
        return int(value) / 1_000_000
    except ValueError:
        return None


class PhaseTraceMiddleware:
    """Times a traced request's phases (the module's docstring) and writes them out."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        install()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        run = request.META.get(TRACE_HEADER)
        if not run:
            return self.get_response(request)
        arrived = time.time()
        started = time.perf_counter()
        cpu_started = time.thread_time()
        phases: dict[str, float] = {}
        _local.phases = phases
        try:
            response = self.get_response(request)
        finally:
            _local.phases = None
        phases["app"] = (time.perf_counter() - started) * 1000
        phases["cpu"] = (time.thread_time() - cpu_started) * 1000
        sent = request_start(request.META.get(START_HEADER, ""))
        if sent is not None:
            phases["queue"] = max(0.0, (arrived - sent) * 1000)
        _sink.write(
            {
                "run": run,
                "at": round(arrived, 4),
                "status": response.status_code,
                "pid": os.getpid(),
                **{name: round(value, 3) for name, value in phases.items()},
            }
        )
        return response
