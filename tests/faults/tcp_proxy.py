"""A TCP proxy of the test's own between the service and a broker, to cut and restore.

RabbitMQ here is the machine's, shared by everyone who runs tests on it: a test may not stop or
restart it. What a restart does to a client (its connections dropped, new ones refused for a
while, then accepted again) the test does to its own processes only, with this proxy between
them and RabbitMQ: ``cut()`` closes every connection through it and refuses new ones (accepted
and closed at once), ``restore()`` lets them through again. A private ``rabbitmq-server``
would take an Erlang VM of its own and seconds to boot for each test; the proxy is a thread.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Iterator


class TcpProxy:
    """Forwards connections on ``127.0.0.1:port`` to ``upstream``, one thread per connection."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._cut = False
        self._closed = False
        self.refused = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Drops every connection through the proxy; until ``restore()``, refuses new ones."""
        with self._lock:
            self._cut = True
            sockets, self._open = self._open, set()
        for sock in sockets:
            _close(sock)

    def restore(self) -> None:
        with self._lock:
            self._cut = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        _close(self._listener)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                refuse = self._cut
            if refuse:
                self.refused += 1
                _close(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=2)
            except OSError:
                _close(client)
                continue
            server.settimeout(None)
            with self._lock:
                self._open.update((client, server))
            threading.Thread(target=self._pipe, args=(client, server), daemon=True).start()

    def _pipe(self, client: socket.socket, server: socket.socket) -> None:
        peers = {client: server, server: client}
        with selectors.DefaultSelector() as selector:
            for sock in peers:
                selector.register(sock, selectors.EVENT_READ)
            try:
                while True:
                    for key, _ in selector.select(timeout=0.5):
                        source: socket.socket = key.fileobj  # type: ignore[assignment]
                        data = source.recv(65536)
                        if not data:
                            return
                        peers[source].sendall(data)
                    with self._lock:
                        if client not in self._open:
                            return
            except (OSError, ValueError):  # a socket cut() closed under the selector
                return
            finally:
                with self._lock:
                    self._open.discard(client)
                    self._open.discard(server)
                _close(client)
                _close(server)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


@contextlib.contextmanager
def tcp_proxy(upstream: tuple[str, int]) -> Iterator[TcpProxy]:
    proxy = TcpProxy(upstream)
    try:
        yield proxy
    finally:
        proxy.close()
