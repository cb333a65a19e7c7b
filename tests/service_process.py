"""Starts the service the way `make run` does (``scripts/run.sh``: the embedded PostgreSQL server,
migrate, seed the demo merchant, then gunicorn + a real Celery worker + beat under honcho) on the
embedded defaults (its own PostgreSQL on a Unix socket, the filesystem broker) and a free port,
with its state under a temporary ``var/``.

Whatever the environment configures for the test suite (``DATABASE_URL``, a broker, settings) is
left out, so the service runs on what a fresh checkout runs on."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
# Variables the service would otherwise take from the test suite's environment.
CONFIGURED = frozenset(
    {
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "DJANGO_SETTINGS_MODULE",
        "SECRET_KEY",
        "DEBUG",
        "CALLBACK_URL_ALLOW_PRIVATE",
        "FUNDING_WEBHOOK_SECRET",
        "FIELD_ENCRYPTION_KEYS",
        "CHECKOUT_BASE_URL",
    }
)


@dataclass(frozen=True)
class RunningService:
    port: int
    var: Path  # VAR_DIR: the database server's data and socket, the broker, demo_credentials
    process: subprocess.Popen[bytes]
    log: Path  # everything run.sh and honcho printed
    env: dict[str, str]  # the environment the service was started with

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, *, timeout: float) -> requests.Response:
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            return requests.get(url, timeout=5)
        except (requests.ConnectionError, requests.Timeout) as error:
            # Not listening yet, or listening while its workers still boot: ask again.
            last_error = error
            time.sleep(0.5)
    raise AssertionError(f"{url} did not answer within {timeout}s: {last_error}")


def service_stop(process: subprocess.Popen[bytes]) -> None:
    """Ctrl-C to the whole process group, as in a terminal; SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def service_running(directory: Path) -> Iterator[RunningService]:
    """``bash scripts/run.sh`` with ``VAR_DIR=directory/var``, stopped on exit."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in CONFIGURED}
    env.update({"PORT": str(port), "VAR_DIR": str(directory / "var"), "WEB_CONCURRENCY": "1"})
    log_path = directory / "run.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            ["bash", "scripts/run.sh"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield RunningService(
            port=port, var=directory / "var", process=process, log=log_path, env=env
        )
    finally:
        service_stop(process)
