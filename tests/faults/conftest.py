"""Fault injection with real processes: a Celery worker, gunicorn, Redis, RabbitMQ, PostgreSQL,
and a small Paystack-like HTTP server standing in for the third-party provider.

Redis: ``FAULTS_REDIS_URL`` (default ``redis://127.0.0.1:6379/11``) for the broker of worker
tests and ``FAULTS_REDIS_URL_2`` (default ``…/12``) for the broker that "comes back". The tests
that take the ``broker`` fixture run on Redis and again on RabbitMQ (``TEST_RABBITMQ_URL``,
``tests.celery_worker``). Each test uses its own queue names and removes its keys or queues.
Skipped only when a broker is missing, never under ``REQUIRE_POSTGRES=1`` (CI), where that
fails instead (RabbitMQ also under ``CI=true``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings

from merchants.models import Mode
from merchants.services import MerchantCreated
from tests.celery_worker import (
    Process,
    broker_require,
    broker_url_for,
    celery_publishing_to,
    celery_worker_start,
    process_start,
    redis_require,
    unavailable_for,
    unique_queue,
    wait_for,
    worker_environment,
)
from tests.celery_worker import database_url_for_processes as database_url_for_processes
from wallets.models import Wallet
from wallets.selectors import wallet_get
from wallets.services import wallet_fund

REDIS_URL = os.environ.get("FAULTS_REDIS_URL", "redis://127.0.0.1:6379/11")
REDIS_URL_2 = os.environ.get("FAULTS_REDIS_URL_2", "redis://127.0.0.1:6379/12")
PAYOUTS_PATH = "/api/v1/transactions/in/merchant-wallet/payouts"
PAYSTACK_SECRET = "sk_test_fake_paystack_secret"


unavailable = unavailable_for("fault tests")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


# Redis hands a task a killed worker held to another after this visibility timeout (short here).
FAULTS_VISIBILITY_TIMEOUT = 3


@dataclass
class Broker:
    kind: str
    url: str
    queue: str
    # Seconds until a task a killed worker held is delivered again: RabbitMQ requeues it as the
    # worker's connection closes; Redis after the visibility timeout.
    redelivered_after: float


def redis_ready(url: str) -> None:
    redis_require(url, unavailable=unavailable)


@pytest.fixture
def broker(celery_broker: str) -> Iterator[Broker]:
    """This process publishes to the broker (Redis, then RabbitMQ: ``celery_broker``), on a
    queue of its own. A task a killed worker held goes back to the queue: on RabbitMQ as its
    connection closes, on Redis once the short visibility timeout here has passed."""
    url = broker_url_for(celery_broker, redis_url=REDIS_URL)
    broker_require(url, unavailable=unavailable)
    queue = unique_queue("faults")
    with celery_publishing_to(
        url,
        queue=queue,
        task_patterns=["payouts.tasks.*", "collections_app.tasks.*", "webhooks.tasks.*"],
        visibility_timeout=FAULTS_VISIBILITY_TIMEOUT,
    ):
        yield Broker(
            kind=celery_broker,
            url=url,
            queue=queue,
            redelivered_after=0 if celery_broker == "rabbitmq" else FAULTS_VISIBILITY_TIMEOUT,
        )


@dataclass
class Processes:
    tmp_path: Path
    started: list[Process] = field(default_factory=list)

    def env(self, **overrides: str) -> dict[str, str]:
        return worker_environment(self.tmp_path, PAYSTACK_SECRET_KEY=PAYSTACK_SECRET, **overrides)

    def start(self, name: str, command: list[str], env: dict[str, str]) -> Process:
        process = process_start(name, command, env=env, log_dir=self.tmp_path)
        self.started.append(process)
        return process

    def worker(self, name: str, *, queue: str, **env: str) -> Process:
        process = celery_worker_start(name, queue=queue, env=self.env(**env), log_dir=self.tmp_path)
        self.started.append(process)
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
