"""The web tier's gunicorn worker (``worker_class`` in ``config/gunicorn.py``): the WSGI
application behind an event loop that reads whole requests before a thread sees them.

gunicorn stays the process manager (``WEB_CONCURRENCY`` processes, restarts, signals, the
access log); each process runs uvicorn's event loop (uvloop, httptools), which parses request
lines and headers, reads request bodies and parks idle keep-alive connections, however slowly
their clients write. :class:`BufferedWsgiApp` reads the whole body there (up to
``WEB_REQUEST_BUFFER_MAX_BYTES``; a larger one is refused with 413 before it is read), then
hands the request to the Django WSGI application on a pool of ``GUNICORN_THREADS`` threads
(``a2wsgi``). So a slow or stalled client costs a socket and a few kilobytes, never one of the
threads that run views, and nothing of a request is left unread on a kept-alive connection
when a view never reads its body. The threads are long-lived, so Django keeps one database
connection per thread (``CONN_MAX_AGE``), as under gunicorn's ``gthread`` worker.

Behaviour kept from the ``gthread`` worker: ``REMOTE_ADDR`` is the peer's address (forwarded
headers are not trusted), and the access log is gunicorn's own line and format.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from a2wsgi import WSGIMiddleware
from gunicorn.arbiter import Arbiter
from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AccessLog = Callable[[Scope, int, int, float], None]

DEFAULT_BUFFER_MAX_BYTES = 16 * 1024 * 1024


class _Disconnected(Exception):  # noqa: N818 - the client went away while sending its body
    pass


class BufferedWsgiApp:
    """ASGI application running ``wsgi_app`` on ``threads`` threads once its request is
    whole. ``access_log(scope, status, bytes_sent, seconds)`` is called after each request."""

    def __init__(
        self,
        wsgi_app: Callable[..., Any],
        *,
        threads: int,
        max_body_bytes: int = DEFAULT_BUFFER_MAX_BYTES,
        access_log: AccessLog | None = None,
    ) -> None:
        # Any: a2wsgi types ASGI messages as TypedDicts; this module passes plain mappings.
        self.wsgi: Any = WSGIMiddleware(wsgi_app, workers=max(1, threads))
        self.max_body_bytes = max_body_bytes
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.wsgi(scope, receive, send)
            return
        started = time.monotonic()
        status, sent = 0, 0

        async def counting_send(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            try:
                body = await self._body(scope, receive)
            except _Disconnected:
                return
            if body is None:
                await _refuse_too_large(counting_send, self.max_body_bytes)
                return
            await self.wsgi(_with_length(scope, len(body)), _replay(body, receive), counting_send)
        finally:
            if self.access_log is not None and status:
                self.access_log(scope, status, sent, time.monotonic() - started)

    async def _body(self, scope: Scope, receive: Receive) -> bytes | None:
        """The whole request body, or None when it is larger than ``max_body_bytes``."""
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_body_bytes:
                return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` whose first message is the whole body; later calls wait for the
    disconnect as the server's own does."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay


def _with_length(scope: Scope, length: int) -> Scope:
    """A chunked request's scope with the ``Content-Length`` of its now whole body (Django
    reads as many bytes as ``Content-Length`` says)."""
    headers = scope.get("headers", ())
    if any(name == b"content-length" for name, _ in headers):
        return scope
    kept = [(name, value) for name, value in headers if name != b"transfer-encoding"]
    return {**scope, "headers": [*kept, (b"content-length", str(length).encode())]}


async def _refuse_too_large(send: Send, limit: int) -> None:
    payload = (
        b'{"status": false, "message": "Request body exceeds the limit of '
        + str(limit).encode()
        + b' bytes", "data": null, "statusCode": 413}'
    )
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class WebWorker(UvicornWorker):
    """gunicorn worker: uvicorn's event loop in front of the WSGI application that gunicorn
    loaded (``config.wsgi:application``), through :class:`BufferedWsgiApp`."""

    CONFIG_KWARGS: dict[str, Any] = {
        "loop": "auto",
        "http": "auto",
        "interface": "asgi3",
        "lifespan": "off",
        "access_log": False,  # gunicorn's access log instead (BufferedWsgiApp.access_log)
        "proxy_headers": False,  # REMOTE_ADDR is the peer, as under gthread
        "server_header": False,
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.config.limit_concurrency = self.cfg.worker_connections

    def init_signals(self) -> None:
        """uvicorn finishes its requests on SIGTERM/SIGINT, then raises the signal again with the
        handler found before it started: exiting with status 0 there (and on any stop signal
        while the application still loads), instead of dying by the signal, keeps gunicorn from
        logging every orderly stop as an error."""
        super().init_signals()
        for stop_signal in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
            signal.signal(stop_signal, _exit_cleanly)

    def _install_sigquit_handler(self) -> None:
        """Replaced by the handler :meth:`_serve` installs (uvicorn-worker's only marks the
        gunicorn worker as stopping, which uvicorn never reads: the master's SIGQUIT, sent on
        its own SIGINT, then waited ``graceful_timeout`` for a SIGKILL)."""

    async def _serve(self) -> None:
        self.config.app = self.wsgi
        server = Server(config=self.config)
        asyncio.get_running_loop().add_signal_handler(
            signal.SIGQUIT, setattr, server, "should_exit", True
        )
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)

    def load_wsgi(self) -> None:
        super().load_wsgi()
        wsgi_app: Any = getattr(self, "wsgi")  # noqa: B009 - set by gunicorn's load_wsgi, untyped
        self.wsgi: Any = BufferedWsgiApp(
            wsgi_app,
            threads=self.cfg.threads,
            max_body_bytes=int(
                os.environ.get("WEB_REQUEST_BUFFER_MAX_BYTES") or DEFAULT_BUFFER_MAX_BYTES
            ),
            access_log=self._access_log,
        )

    def _access_log(self, scope: Scope, status: int, sent: int, seconds: float) -> None:
        """gunicorn's access line (``access_log_format``), from the ASGI scope."""
        client = scope.get("client") or ("-", 0)
        environ = {
            "REQUEST_METHOD": scope.get("method", "-"),
            "RAW_URI": scope.get("path", ""),
            "PATH_INFO": scope.get("path", ""),
            "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
            "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
            "REMOTE_ADDR": client[0],
        }
        response = SimpleNamespace(status=str(status), sent=sent, headers=[])
        request = SimpleNamespace(headers=[])
        self.log.access(response, request, environ, timedelta(seconds=seconds))
