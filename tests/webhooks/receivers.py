"""Webhook receivers that hold the sender: real sockets on 127.0.0.1, served by threads.

- ``drip``: reads the request, answers ``HTTP/1.1 200 OK`` and then one byte of a header line
  every ``interval`` seconds, never finishing the headers;
- ``drip_body``: answers ``200 OK`` with complete headers (``Content-Length: 1000``), then one
  byte of the body every ``interval`` seconds;
- ``silent``: accepts the connection, reads the request and sends nothing.

Either gives up on a connection after ``max_seconds`` (closing it), and every connection ends
when the receiver stops. It records when each connection was accepted and when the sender
closed it, and how many were open at once.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Connection:
    accepted_at: float
    path: str = ""
    closed_by_sender_at: float | None = None


@dataclass
class SlowReceiver:
    behaviour: str  # "drip", "drip_body" or "silent"
    interval: float = 2.0
    max_seconds: float = 30.0
    connections: list[Connection] = field(default_factory=list)
    most_open: int = 0

    def __post_init__(self) -> None:
        assert self.behaviour in ("drip", "drip_body", "silent")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._open = 0
        self._sockets: list[socket.socket] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> SlowReceiver:
        self._listener.listen(64)
        self._listener.settimeout(0.1)
        threading.Thread(target=self._accept_loop, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            sockets = [self._listener, *self._sockets]
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()

    def accepted(self, path: str | None = None) -> int:
        with self._lock:
            return sum(1 for c in self.connections if path is None or c.path == path)

    def open_now(self) -> int:
        with self._lock:
            return self._open

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            record = Connection(accepted_at=time.monotonic())
            with self._lock:
                self.connections.append(record)
                self._sockets.append(conn)
                self._open += 1
                self.most_open = max(self.most_open, self._open)
            threading.Thread(target=self._serve, args=(conn, record), daemon=True).start()

    def _serve(self, conn: socket.socket, record: Connection) -> None:
        try:
            record.path = self._request_read(conn)
            if self.behaviour == "drip":
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Drip: ")
            elif self.behaviour == "drip_body":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            ends = record.accepted_at + self.max_seconds
            while not self._stop.is_set() and time.monotonic() < ends:
                if self._sender_closed(conn, wait=self.interval):
                    record.closed_by_sender_at = time.monotonic()
                    return
                if self.behaviour != "silent":
                    conn.sendall(b"a")
        except OSError:
            if record.closed_by_sender_at is None and not self._stop.is_set():
                record.closed_by_sender_at = time.monotonic()
        finally:
            with contextlib.suppress(OSError):
                conn.close()
            with self._lock:
                self._open -= 1

    def _request_read(self, conn: socket.socket) -> str:
        """Reads the request line, headers and body (by ``Content-Length``); its path."""
        conn.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
        conn.settimeout(None)
        request_line = head.split(b"\r\n", 1)[0].decode(errors="replace")
        parts = request_line.split(" ")
        return parts[1] if len(parts) > 1 else ""

    def _sender_closed(self, conn: socket.socket, *, wait: float) -> bool:
        """Waits up to ``wait`` seconds (less when stopped); True when the sender has closed."""
        deadline = time.monotonic() + wait
        while not self._stop.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            readable, _, _ = select.select([conn], [], [], min(remaining, 0.05))
            if readable:
                try:
                    return conn.recv(1024) == b""
                except OSError:
                    return True
        return False
