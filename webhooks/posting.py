"""One signed POST to a merchant's server, inside a wall-clock deadline.

``requests``' timeouts bound each socket operation (the connect, then every single read), not
the request: a receiver that answers ``HTTP/1.1 200 OK`` and then one byte every couple of
seconds never trips a read timeout and holds the sender for as long as it likes. Every attempt
here therefore carries a :class:`DeliveryDeadline` (``WEBHOOK_DELIVERY_DEADLINE_SECONDS``): a
watchdog timer that, when the deadline comes, shuts down the attempt's socket (every read and
write on it then ends at once), whatever the request was doing: connecting TLS, sending the
body, reading the status line and headers, or reading the body. An attempt without a complete
status line and headers by then is a timeout; once the headers are in, the status counts and the
body excerpt is whatever arrived before the deadline.
"""

from __future__ import annotations

import contextlib
import contextvars
import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests
import urllib3
from django.conf import settings
from requests.adapters import HTTPAdapter

if TYPE_CHECKING:
    from requests.adapters import _HostParams, _PoolKwargs
from urllib3 import connection, connectionpool

from core.ssrf import UnsafeURLError, url_check_public

RESPONSE_EXCERPT_CHARS = 500
RESPONSE_READ_BYTES = 2048
ERROR_MAX_CHARS = 255


@dataclass(frozen=True)
class PostResult:
    status_code: int | None = None
    latency_ms: int | None = None
    response_excerpt: str = ""
    error: str = ""
    sent: bool = True

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class DeliveryDeadline:
    """The wall-clock end of one attempt. Sockets handed to :meth:`watch` are shut down when it
    comes (a duplicate of each is kept, so TLS wrapping the original changes nothing)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._ends = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def remaining(self) -> float:
        return max(self._ends - time.monotonic(), 0.0)

    def start(self) -> DeliveryDeadline:
        self._timer.start()
        return self

    def watch(self, sock: socket.socket) -> None:
        watched = sock.dup()
        with self._lock:
            self._sockets.append(watched)
            expired = self.expired
        if expired:
            _shutdown(watched)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            watched = list(self._sockets)
        for sock in watched:
            _shutdown(sock)

    def finish(self) -> None:
        self._timer.cancel()
        with self._lock:
            watched, self._sockets = self._sockets, []
        for sock in watched:
            with contextlib.suppress(OSError):
                sock.close()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


_current_deadline: contextvars.ContextVar[DeliveryDeadline | None] = contextvars.ContextVar(
    "webhook_delivery_deadline", default=None
)


# Subclasses under urllib3's own names, so recorded errors read as they always did
# ("HTTPConnectionPool(host=…): … NewConnectionError(…)").


class _DeadlineWatched(connection.HTTPConnection):
    """Hands its socket to the current attempt's deadline as soon as it is connected (for
    HTTPS, before the TLS handshake starts)."""

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        deadline = _current_deadline.get()
        if deadline is not None:
            deadline.watch(sock)
        return sock


class HTTPConnection(_DeadlineWatched):
    pass


class HTTPSConnection(_DeadlineWatched, connection.HTTPSConnection):
    pass


class HTTPConnectionPool(connectionpool.HTTPConnectionPool):
    ConnectionCls = HTTPConnection


class HTTPSConnectionPool(connectionpool.HTTPSConnectionPool):
    ConnectionCls = HTTPSConnection


class _PinnedAddressAdapter(HTTPAdapter):
    """Connects to the address the SSRF check approved instead of resolving the name again
    (closing the DNS-rebinding window); TLS still uses and verifies the URL's host name. Its
    connections hand their sockets to the current attempt's deadline."""

    def __init__(self, *, address: str, host: str) -> None:
        self._address = address
        self._host = host
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": HTTPConnectionPool,
            "https": HTTPSConnectionPool,
        }

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[_HostParams, _PoolKwargs]:
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        host_params["host"] = self._address
        if host_params.get("scheme") == "https":
            # urllib3's pools take both; the requests stubs' _PoolKwargs lists fewer keys.
            pool_kwargs["server_hostname"] = self._host  # type: ignore[typeddict-unknown-key]
            pool_kwargs["assert_hostname"] = self._host  # type: ignore[typeddict-unknown-key]
        return host_params, pool_kwargs


def storable(text: str) -> str:
    """Text a receiver controls, made storable on every backend: PostgreSQL refuses NUL in a
    text column and no backend stores a lone surrogate; both become U+FFFD."""
    text = text.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")
    return text.replace("\x00", "\ufffd")


def _error_text(prefix: str, error: Exception | str) -> str:
    return storable(f"{prefix}: {error}")[:ERROR_MAX_CHARS]


def _deadline_error(deadline: DeliveryDeadline) -> str:
    return _error_text("timeout", f"no complete answer within the {deadline.seconds:g} s deadline")


def _body_start_read(response: requests.Response) -> bytes:
    """Up to ``RESPONSE_READ_BYTES`` of the body, as much as arrived: a body cut short (by the
    receiver or by the deadline) or badly encoded keeps what came before, and the status
    counts."""
    raw = b""
    try:
        while len(raw) < RESPONSE_READ_BYTES:
            chunk = response.raw.read1(RESPONSE_READ_BYTES - len(raw), decode_content=True)
            if not chunk:
                break
            raw += chunk
    except (requests.RequestException, urllib3.exceptions.HTTPError, OSError, ValueError):
        pass
    return raw[:RESPONSE_READ_BYTES]


def webhook_post(*, url: str, body: bytes, headers: dict[str, str]) -> PostResult:
    """POSTs ``body`` to ``url`` once: SSRF check first (refused → nothing sent), no redirects,
    short per-operation timeouts inside the attempt's wall-clock deadline
    (``WEBHOOK_DELIVERY_DEADLINE_SECONDS``), no proxies from the environment. Never raises for
    network trouble."""
    try:
        checked = url_check_public(url)
    except UnsafeURLError as error:
        return PostResult(error=_error_text("refused by the SSRF check", error), sent=False)
    request_headers = {**headers, "Host": urlsplit(url).netloc}
    session = requests.Session()
    session.trust_env = False
    session.mount(
        f"{checked.scheme}://",
        _PinnedAddressAdapter(address=checked.addresses[0], host=checked.host),
    )
    deadline = DeliveryDeadline(settings.WEBHOOK_DELIVERY_DEADLINE_SECONDS)
    token = _current_deadline.set(deadline)
    started = time.monotonic()

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    deadline.start()
    try:
        with session.post(
            url,
            data=body,
            headers=request_headers,
            timeout=(
                min(settings.WEBHOOK_CONNECT_TIMEOUT_SECONDS, deadline.seconds),
                min(settings.WEBHOOK_READ_TIMEOUT_SECONDS, deadline.seconds),
            ),
            allow_redirects=False,
            stream=True,
        ) as response:
            latency_ms = elapsed_ms()
            if deadline.expired:
                # http.client reads the end of the stream as the end of the headers: an answer
                # the deadline cut off looks complete, so it counts as the timeout it is.
                return PostResult(latency_ms=latency_ms, error=_deadline_error(deadline))
            raw = _body_start_read(response)
            excerpt = storable(raw.decode("utf-8", errors="replace"))[:RESPONSE_EXCERPT_CHARS]
            return PostResult(
                status_code=response.status_code, latency_ms=latency_ms, response_excerpt=excerpt
            )
    except requests.Timeout as error:
        return PostResult(latency_ms=elapsed_ms(), error=_error_text("timeout", error))
    except requests.RequestException as error:
        if deadline.expired:
            return PostResult(latency_ms=elapsed_ms(), error=_deadline_error(deadline))
        if isinstance(error, requests.ConnectionError):
            return PostResult(latency_ms=elapsed_ms(), error=_error_text("connection error", error))
        return PostResult(error=_error_text("request error", error))
    finally:
        deadline.finish()
        _current_deadline.reset(token)
        session.close()
