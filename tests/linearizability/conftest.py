"""Real processes for the linearizability tests: gunicorn as the Procfile runs it (two web
processes with four view threads each), one Celery worker, and the Paystack-like server from
``tests/faults``, all on the pytest test database.

Redis: ``LINEARIZABILITY_REDIS_URL`` (default ``redis://127.0.0.1:6379/9``), a database of
these tests' own. gunicorn publishes dispatches to Celery's default queue there and the worker
consumes it; the queue is emptied before and after each test. Skipped when Redis is missing,
failed instead under ``REQUIRE_POSTGRES=1`` (CI).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.celery_worker import (
    Process,
    database_url_for_processes,
    redis_queue_remove,
    redis_require,
    unavailable_for,
    wait_for,
)
from tests.faults.conftest import (
    PAYOUTS_PATH,
    FakePaystack,
    Processes,
    fake_paystack,
    free_port,
    processes,
)

__all__ = ["fake_paystack", "processes"]  # fixtures used from tests/faults

REDIS_URL = os.environ.get("LINEARIZABILITY_REDIS_URL", "redis://127.0.0.1:6379/9")
DEFAULT_QUEUE = "celery"  # where gunicorn publishes: task_routes are not set from the environment
WEB_APPLICATION_NAME = "linearizability-web"
WEB_WORKERS = 2
WEB_THREADS = 4

unavailable = unavailable_for("linearizability tests")


@pytest.fixture
def redis_broker() -> Iterator[str]:
    redis_require(REDIS_URL, unavailable=unavailable)
    redis_queue_remove(REDIS_URL, DEFAULT_QUEUE)
    try:
        yield REDIS_URL
    finally:
        redis_queue_remove(REDIS_URL, DEFAULT_QUEUE)


@dataclass
class Stack:
    """gunicorn and a Celery worker sharing the test database, and the provider they call."""

    base_url: str
    web: Process
    worker: Process
    provider: FakePaystack

    @property
    def payouts_url(self) -> str:
        return f"{self.base_url}{PAYOUTS_PATH}"

    def creates_finished(self) -> int:
        """Create requests gunicorn has finished handling (its access log is written after the
        application returned, whether or not the client was still there to read the answer)."""
        return self.web.output().count(f'"POST {PAYOUTS_PATH} ')

    @contextlib.contextmanager
    def worker_held(self) -> Iterator[None]:
        """The worker is stopped (SIGSTOP) meanwhile: dispatches queue up in Redis."""
        os.killpg(self.worker.popen.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.killpg(self.worker.popen.pid, signal.SIGCONT)


def web_start(processes: Processes, name: str, **env: str) -> tuple[Process, str]:
    """gunicorn with ``config/gunicorn.py`` (the Procfile's), on a free port; returned once
    ``/healthz`` answers."""
    port = free_port()
    process = processes.start(
        name,
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "-c", "config/gunicorn.py"],
        processes.env(
            BIND_ADDRESS="127.0.0.1",
            PORT=str(port),
            WEB_CONCURRENCY=str(WEB_WORKERS),
            GUNICORN_THREADS=str(WEB_THREADS),
            GUNICORN_TIMEOUT="60",
            **env,
        ),
    )
    base_url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert process.alive(), f"{name} exited:\n{process.output()[-3000:]}"
        try:
            with urllib.request.urlopen(f"{base_url}/healthz", timeout=2) as response:  # noqa: S310
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    wait_for(healthy, timeout=30, what=f"{name} to answer")
    return process, base_url


@pytest.fixture
def stack(
    redis_broker: str,
    processes: Processes,
    fake_paystack: FakePaystack,
) -> Stack:
    """Live-mode payouts go to the fake Paystack (name enquiry from gunicorn, transfers from the
    worker); every dispatch gunicorn enqueues reaches the worker through ``redis_broker``."""
    provider_env = {
        "CELERY_BROKER_URL": redis_broker,
        "PAYSTACK_BASE_URL": fake_paystack.base_url,
        "PAYOUT_PROVIDER_LIVE": "paystack",
        "PAYOUT_PROVIDER_TIMEOUT_SECONDS": "10",
    }
    worker = processes.worker("worker", queue=DEFAULT_QUEUE, **provider_env)
    web, base_url = web_start(
        processes,
        "web",
        DATABASE_URL=database_url_for_processes(application_name=WEB_APPLICATION_NAME),
        **provider_env,
    )
    return Stack(base_url=base_url, web=web, worker=worker, provider=fake_paystack)
