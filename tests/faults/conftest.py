"""Fault injection with real processes: a Celery worker, gunicorn, Redis, PostgreSQL, and a
small Paystack-like HTTP server standing in for the third-party provider.

Redis: ``FAULTS_REDIS_URL`` (default ``redis://127.0.0.1:6379/11``) for the broker of worker
tests and ``FAULTS_REDIS_URL_2`` (default ``…/12``) for the broker that "comes back". Each test
uses its own queue names and removes its keys. Skipped only when Redis or PostgreSQL is missing,
never under ``REQUIRE_POSTGRES=1`` (CI), where that fails instead.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import redis
from django.conf import settings
from django.db import connection

import collections_app.tasks
import payouts.tasks
from config.celery_app import app as celery_app
from merchants.models import Mode
from merchants.services import MerchantCreated
from wallets.models import Wallet
from wallets.selectors import wallet_get
from wallets.services import wallet_fund

REDIS_URL = os.environ.get("FAULTS_REDIS_URL", "redis://127.0.0.1:6379/11")
REDIS_URL_2 = os.environ.get("FAULTS_REDIS_URL_2", "redis://127.0.0.1:6379/12")
PAYOUTS_PATH = "/api/v1/transactions/in/merchant-wallet/payouts"
PAYSTACK_SECRET = "sk_test_fake_paystack_secret"
WAIT_SECONDS = 45


def unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_POSTGRES") == "1":
        pytest.fail(f"fault tests cannot run under REQUIRE_POSTGRES=1: {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(
    predicate: Callable[[], Any], *, timeout: float = WAIT_SECONDS, what: str, step: float = 0.1
) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def database_url_for_processes(application_name: str = "") -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    query = f"?application_name={application_name}" if application_name else ""
    return (
        f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}{query}"
    )


# Imported while the app is registered: ``close()`` below unregisters it, and a shared task
# first imported after that would never be attached to it (NotRegistered on ``delay``).
TASK_MODULES = (collections_app.tasks, payouts.tasks)


def celery_client_reset() -> None:
    """Makes the publishing side (this process) follow a changed broker URL or routes."""
    celery_app.close()
    if "amqp" in celery_app.__dict__:
        del celery_app.amqp


@pytest.fixture(autouse=True)
def _postgres_only() -> None:
    if connection.vendor != "postgresql":
        unavailable("fault tests need PostgreSQL shared between processes")


# --- The provider: a Paystack-like HTTP server --------------------------------------------------


@dataclass
class FakePaystack:
    """Records every call. ``/transfer`` creates the transfer first, then may stall before
    answering: ``stall_first_transfer`` seconds, or until ``release`` is set."""

    transfers: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)
    stall_first_transfer: float = 0.0
    block_first_transfer: bool = False
    release: threading.Event = field(default_factory=threading.Event)
    transfer_received: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def posts_to_transfer(self, reference: str | None = None) -> int:
        with self.lock:
            return sum(
                1
                for method, path in self.calls
                if method == "POST"
                and path.startswith("/transfer?ref=")
                and (reference is None or path.endswith(f"={reference}"))
            )

    def verifies(self, reference: str) -> int:
        with self.lock:
            return self.calls.count(("GET", f"/transfer/verify/{reference}"))


def _handler(fake: FakePaystack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep the test output clean
            return

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            payload = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (timeout) or died (SIGKILL)

        def do_GET(self) -> None:  # noqa: N802
            url = urlsplit(self.path)
            if url.path == "/bank/resolve":
                with fake.lock:
                    fake.calls.append(("GET", url.path))
                query = parse_qs(url.query)
                self._answer(
                    200,
                    {
                        "status": True,
                        "message": "Account number resolved",
                        "data": {
                            "account_number": query.get("account_number", [""])[0],
                            "account_name": "ADA OBI",
                        },
                    },
                )
                return
            if url.path.startswith("/transfer/verify/"):
                reference = url.path.rsplit("/", 1)[1]
                with fake.lock:
                    fake.calls.append(("GET", url.path))
                    transfer = fake.transfers.get(reference)
                if transfer is None:
                    self._answer(404, {"status": False, "message": "Transfer not found"})
                else:
                    self._answer(
                        200, {"status": True, "message": "Transfer retrieved", "data": transfer}
                    )
                return
            self._answer(404, {"status": False, "message": "Not found"})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/transferrecipient":
                with fake.lock:
                    fake.calls.append(("POST", self.path))
                self._answer(
                    200,
                    {
                        "status": True,
                        "message": "Recipient created",
                        "data": {"recipient_code": "RCP_fake"},
                    },
                )
                return
            if self.path == "/transfer":
                reference = str(body.get("reference"))
                with fake.lock:
                    fake.calls.append(("POST", f"/transfer?ref={reference}"))
                    duplicate = reference in fake.transfers
                    first = not any(
                        method == "POST" and path.startswith("/transfer?ref=")
                        for method, path in fake.calls[:-1]
                    )
                    if not duplicate:
                        fake.transfers[reference] = {
                            "reference": reference,
                            "transfer_code": f"TRF_{uuid.uuid4().hex[:10]}",
                            "status": "success",
                            "amount": body.get("amount"),
                        }
                    transfer = fake.transfers[reference]
                fake.transfer_received.set()
                if duplicate:
                    self._answer(
                        400, {"status": False, "message": "Duplicate Transaction Reference"}
                    )
                    return
                if first and fake.block_first_transfer:
                    fake.release.wait(timeout=60)
                elif first and fake.stall_first_transfer:
                    time.sleep(fake.stall_first_transfer)
                self._answer(
                    200, {"status": True, "message": "Transfer has been queued", "data": transfer}
                )
                return
            self._answer(404, {"status": False, "message": "Not found"})

    return Handler


@pytest.fixture
def fake_paystack() -> Iterator[FakePaystack]:
    fake = FakePaystack()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()


# --- Brokers and processes ----------------------------------------------------------------------


@dataclass
class Broker:
    url: str
    queue: str


def redis_ready(url: str) -> None:
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        unavailable(f"Redis at {url} is unreachable ({error})")


def _routes(queue: str) -> dict[str, dict[str, str]]:
    return {"payouts.tasks.*": {"queue": queue}, "collections_app.tasks.*": {"queue": queue}}


@pytest.fixture
def broker() -> Iterator[Broker]:
    """This process publishes to a Redis broker, on a queue of its own."""
    redis_ready(REDIS_URL)
    queue = f"faults-{uuid.uuid4().hex[:12]}"
    previous = (
        celery_app.conf.broker_url,
        celery_app.conf.broker_transport_options,
        celery_app.conf.task_routes,
    )
    celery_app.conf.broker_url = REDIS_URL
    celery_app.conf.broker_transport_options = {"visibility_timeout": 3}
    celery_app.conf.task_routes = _routes(queue)
    celery_client_reset()
    try:
        yield Broker(url=REDIS_URL, queue=queue)
    finally:
        (
            celery_app.conf.broker_url,
            celery_app.conf.broker_transport_options,
            celery_app.conf.task_routes,
        ) = previous
        celery_client_reset()
        _redis_cleanup(REDIS_URL, queue)


def _redis_cleanup(url: str, queue: str) -> None:
    client = redis.Redis.from_url(url)
    client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
    # Messages a killed worker left unacknowledged, if any are ours.
    for tag, payload in (client.hgetall("unacked") or {}).items():
        if queue.encode() in payload:
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)


@dataclass
class Process:
    name: str
    popen: subprocess.Popen
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.alive():
            os.killpg(self.popen.pid, sig)
        self.popen.wait(timeout=15)

    def stop(self) -> None:
        if not self.alive():
            return
        os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()


@dataclass
class Processes:
    tmp_path: Path
    started: list[Process] = field(default_factory=list)

    def env(self, **overrides: str) -> dict[str, str]:
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": database_url_for_processes(),
            "VAR_DIR": str(self.tmp_path / "var"),
            "PAYSTACK_SECRET_KEY": PAYSTACK_SECRET,
            "PYTHONUNBUFFERED": "1",
            **overrides,
        }

    def start(self, name: str, command: list[str], env: dict[str, str]) -> Process:
        log = self.tmp_path / f"{name}.log"
        handle = log.open("w")
        popen = subprocess.Popen(
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        handle.close()
        process = Process(name=name, popen=popen, log=log)
        self.started.append(process)
        return process

    def worker(self, name: str, *, queue: str, **env: str) -> Process:
        process = self.start(
            name,
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config.celery_app",
                "worker",
                "-Q",
                queue,
                "--pool=solo",
                "--without-mingle",
                "--without-gossip",
                "--without-heartbeat",
                "--loglevel=INFO",
                "-n",
                f"{name}-{uuid.uuid4().hex[:6]}@%h",
            ],
            self.env(**env),
        )
        wait_for(
            lambda: "ready." in process.output() or not process.alive(),
            timeout=30,
            what=f"{name} to start",
        )
        assert process.alive(), f"{name} exited:\n{process.output()[-3000:]}"
        return process

    def web(self, name: str, **env: str) -> tuple[Process, str]:
        port = free_port()
        process = self.start(
            name,
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "1",
                "--timeout",
                "60",
            ],
            self.env(**env),
        )
        base_url = f"http://127.0.0.1:{port}"

        def healthy() -> bool:
            assert process.alive(), f"{name} exited:\n{process.output()[-3000:]}"
            try:
                with urllib.request.urlopen(f"{base_url}/healthz", timeout=2) as response:
                    return response.status == 200
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                return False

        wait_for(healthy, timeout=30, what=f"{name} to answer")
        return process, base_url

    def manage(self, *args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=settings.BASE_DIR,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def stop_all(self) -> None:
        for process in reversed(self.started):
            process.stop()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    group = Processes(tmp_path=tmp_path)
    try:
        yield group
    finally:
        group.stop_all()


# --- HTTP and data helpers ----------------------------------------------------------------------


def http_json(
    method: str, url: str, *, key: str, body: dict[str, Any] | None = None, timeout: float = 30
) -> tuple[int, dict[str, Any]]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(  # noqa: S310 - loopback test server
        url,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            return error.code, json.loads(raw or b"{}")
        except ValueError:
            return error.code, {"raw": raw.decode(errors="replace")}


def payout_body(idempotency_key: str, amount: str = "1000.00") -> dict[str, str]:
    return {
        "account_number": "0123456789",
        "bank_code": "058",
        "amount": amount,
        "narration": "fault injection",
        "idempotency_key": idempotency_key,
    }


def funded_wallet(account: MerchantCreated, mode: str, amount: str = "100000.00") -> Wallet:
    wallet = wallet_get(merchant=account.merchant, mode=mode)
    wallet_fund(
        wallet_id=wallet.pk, amount=Decimal(amount), reference=f"FAULT-FUND-{uuid.uuid4().hex}"
    )
    wallet.refresh_from_db()
    return wallet


@pytest.fixture
def live_paystack_settings(settings: Any, fake_paystack: FakePaystack) -> FakePaystack:
    """This process talks to the fake Paystack for live-mode payouts and name enquiry."""
    settings.PAYSTACK_BASE_URL = fake_paystack.base_url
    settings.PAYSTACK_SECRET_KEY = PAYSTACK_SECRET
    settings.PAYOUT_PROVIDER_BY_MODE = {"test": "sandbox", "live": "paystack"}
    return fake_paystack


TEST_MODE = Mode.TEST
LIVE_MODE = Mode.LIVE
