"""config.web.BufferedWsgiApp: the body is read whole before the WSGI application runs."""

from __future__ import annotations

import asyncio
from typing import Any

from config.web import BufferedWsgiApp


def _echo(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [f"{environ['REQUEST_METHOD']} {length} ".encode(), body]


def _call(
    app: BufferedWsgiApp, headers: list[tuple[bytes, bytes]], chunks: list[bytes]
) -> tuple[int, bytes]:
    messages = [
        {"type": "http.request", "body": chunk, "more_body": index < len(chunks) - 1}
        for index, chunk in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "path": "/echo",
        "raw_path": b"/echo",
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


def test_a_body_sent_in_pieces_reaches_the_view_whole() -> None:
    logged: list[tuple[int, int]] = []
    app = BufferedWsgiApp(
        _echo,
        threads=1,
        access_log=lambda scope, status, sent, seconds: logged.append((status, sent)),
    )
    status, body = _call(app, [(b"content-length", b"11")], [b"hello", b" ", b"world"])
    assert (status, body) == (200, b"POST 11 hello world")
    assert logged == [(200, len(body))]


def test_a_chunked_body_is_given_its_content_length() -> None:
    app = BufferedWsgiApp(_echo, threads=1)
    status, body = _call(app, [(b"transfer-encoding", b"chunked")], [b"abc", b"def"])
    assert (status, body) == (200, b"POST 6 abcdef")


def test_a_body_over_the_limit_is_refused_before_it_is_read() -> None:
    app = BufferedWsgiApp(_echo, threads=1, max_body_bytes=4)
    status, body = _call(app, [(b"content-length", b"5")], [b"12345"])
    assert status == 413
    assert b"exceeds the limit of 4 bytes" in body
    status, _ = _call(app, [(b"transfer-encoding", b"chunked")], [b"123", b"45"])
    assert status == 413
