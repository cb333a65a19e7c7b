"""Helpers shared by the collections and checkout tests: a real local HTTP receiver, Paystack
payloads, a real Celery worker for the collection tasks."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests import celery_worker
from tests.celery_worker import celery_client_reset as celery_client_reset

PAYSTACK_BASE_URL = "https://api.paystack.test"
PAYSTACK_SECRET = "paystack-secret-for-tests"
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/13")


def hmac_sha512_hex(body: bytes, secret: str) -> str:
    """An independent computation of the expected signature."""
    return hmac.new(secret.encode(), body, hashlib.sha512).hexdigest()


@contextlib.contextmanager
def celery_worker_running(
    tmp_path: Path,
    *,
    unavailable: Callable[[str], None],
    extra_env: dict[str, str] | None = None,
    broker: str = "redis",
) -> Iterator[subprocess.Popen]:
    """A real Celery worker process on Redis (``TEST_REDIS_URL``, default db 13) or, given
    ``broker="rabbitmq"``, on RabbitMQ (``tests.celery_worker.broker_url_for``) consuming a
    queue of its own, against the test database, with private callback URLs allowed. This
    process publishes the collection tasks to that queue meanwhile. ``unavailable(reason)`` is
    called (to skip or fail) when the broker or PostgreSQL is missing. The process's log is
    ``log_path`` (``tmp_path / "worker.log"``)."""
    with celery_worker.celery_worker_running(
        tmp_path,
        broker_url=celery_worker.broker_url_for(broker, redis_url=REDIS_URL),
        queue_prefix="collections-e2e",
        task_patterns=["collections_app.tasks.*", "webhooks.tasks.*"],
        unavailable=unavailable,
        extra_env={"CALLBACK_URL_ALLOW_PRIVATE": "1", **(extra_env or {})},
    ) as worker:
        worker.popen.log_path = worker.log  # type: ignore[attr-defined]
        yield worker.popen


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    answered: int | None = None

    def json(self) -> Any:
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        for key, value in self.headers.items():
            if key.lower() == name.lower():
                return value
        return None


Answer = tuple[int, bytes, dict[str, str]]


@dataclass
class RecordingReceiver:
    """A real HTTP server on 127.0.0.1 (in a thread) that records every request.

    ``answer(request) -> (status, body, headers)`` decides each reply (200 "ok" by default).
    Until ``start()`` (or after ``stop()``) nothing listens on the port: connection refused.
    """

    port: int = field(default_factory=free_port)
    answer: Callable[[ReceivedRequest], Answer] = lambda request: (200, b"ok", {})
    requests: list[ReceivedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> RecordingReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                received = ReceivedRequest(
                    method=self.command, path=self.path, headers=dict(self.headers), body=body
                )
                with receiver._lock:
                    receiver.requests.append(received)
                status, reply, headers = receiver.answer(received)
                received.answered = status
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (timeout tests)

            do_GET = _handle
            do_POST = _handle

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def received(self, method: str | None = None, path: str | None = None) -> list:
        with self._lock:
            return [
                request
                for request in self.requests
                if (method is None or request.method == method)
                and (path is None or request.path.split("?")[0] == path)
            ]

    def wait_for(
        self, predicate: Callable[[list[ReceivedRequest]], bool], timeout: float = 20.0
    ) -> list[ReceivedRequest]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                snapshot = list(self.requests)
            if predicate(snapshot):
                return snapshot
            time.sleep(0.05)
        raise AssertionError(f"receiver did not get the expected requests: {snapshot!r}")


# --- Paystack payloads (shaped like the documented ones) ---------------------------------------


def paystack_initialize_answer(reference: str) -> dict[str, Any]:
    return {
        "status": True,
        "message": "Authorization URL created",
        "data": {
            "authorization_url": f"https://checkout.paystack.com/{reference.lower()}",
            "access_code": f"access_{reference.lower()}",
            "reference": reference,
        },
    }


def paystack_verify_answer(
    reference: str, *, status: str = "success", amount_kobo: int = 720500, currency: str = "NGN"
) -> dict[str, Any]:
    return {
        "status": True,
        "message": "Verification successful",
        "data": {
            "id": 4099260516,
            "domain": "live",
            "status": status,
            "reference": reference,
            "amount": amount_kobo,
            "gateway_response": "Successful" if status == "success" else "Declined",
            "paid_at": "2024-08-22T09:15:02.000Z" if status == "success" else None,
            "channel": "card",
            "currency": currency,
            "authorization": {
                "authorization_code": "AUTH_xyz",
                "bin": "408408",
                "last4": "4081",
                "exp_month": "12",
                "exp_year": "2030",
                "channel": "card",
                "card_type": "visa ",
                "bank": "TEST BANK",
                "brand": "visa",
            },
            "customer": {"id": 1, "email": "ada.obi@example.com"},
        },
    }


def paystack_event_body(reference: str, *, event: str = "charge.success") -> bytes:
    return json.dumps(
        {
            "event": event,
            "data": {
                "id": 4099260516,
                "status": "success",
                "reference": reference,
                "amount": 720500,
                "currency": "NGN",
            },
        }
    ).encode()


def paystack_mock_initialize(mock: Any) -> None:
    """``POST /transaction/initialize`` answers for whatever reference it is sent."""

    def reply(request: Any) -> tuple[int, dict[str, str], str]:
        reference = json.loads(request.body)["reference"]
        return 200, {}, json.dumps(paystack_initialize_answer(reference))

    mock.add_callback(
        "POST",
        f"{PAYSTACK_BASE_URL}/transaction/initialize",
        callback=reply,
        content_type="application/json",
    )
