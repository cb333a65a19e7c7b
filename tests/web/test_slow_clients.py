"""The web tier keeps answering while slow clients hold connections, in the topology `make run`
starts (scripts/run.sh: honcho runs the Procfile) and in the Procfile's ``web:`` line started
alone with its production defaults (two processes).

Ten clients of one kind connect first, then a plain ``/healthz`` and an authenticated GET must
answer within ``ANSWER_BUDGET_SECONDS``:

* slow headers: a request line, then one header line every two seconds, never finished;
* slow body: an authenticated payout create whose headers announce a 1000-byte body, then
  one byte a second;
* idle keep-alive after a 404: a ``PUT`` to a missing route (the view never reads its body)
  whose body follows its headers late, then nothing, past the keep-alive timeout.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import requests

from tests.service_process import ROOT, RunningService, free_port, service_stop, wait_for

SLOW_CLIENTS = 10
ANSWER_BUDGET_SECONDS = 1.5
KEEPALIVE_SECONDS = 5  # config/gunicorn.py's default

pytestmark = [pytest.mark.multiprocess]


@dataclass(frozen=True)
class Web:
    base_url: str
    key: str
    log: Callable[[], str]

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def make_run(make_run_service: RunningService) -> tuple[Web, dict[str, str]]:
    """The session's one `make run` start (tests/conftest.py), after the smoke checks."""
    service = make_run_service
    wait_for(f"{service.base_url}/healthz", timeout=90)
    credentials = json.loads((service.var / "demo_credentials.json").read_text())
    return Web(service.base_url, credentials["secret_key"], service.log.read_text), service.env


def _procfile_web_command() -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError("the Procfile has no web: line")


@pytest.fixture(scope="module")
def procfile_web(
    make_run: tuple[Web, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Web]:
    """The Procfile's web line alone, on the make-run service's data, with the production
    default of two processes."""
    service, service_env = make_run
    port = free_port()
    env = {k: v for k, v in service_env.items() if k != "WEB_CONCURRENCY"}
    env.update(PORT=str(port), PATH=f"{ROOT / '.venv' / 'bin'}:{env.get('PATH', '')}")
    log_path = tmp_path_factory.mktemp("procfile-web") / "web.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(  # noqa: S603 - the repository's own Procfile line
            ["bash", "-c", f"exec {_procfile_web_command()}"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        base_url = f"http://127.0.0.1:{port}"
        wait_for(f"{base_url}/healthz", timeout=60)
        yield Web(base_url, service.key, log_path.read_text)
    finally:
        service_stop(process)


@pytest.fixture(params=["make run", "Procfile web"])
def web(request: pytest.FixtureRequest, make_run: tuple[Web, dict[str, str]]) -> Web:
    if request.param == "make run":
        return make_run[0]
    return request.getfixturevalue("procfile_web")


# --- Slow clients -------------------------------------------------------------------------------


@contextmanager
def slow_clients(
    port: int, behave: Callable[[socket.socket, threading.Event], None]
) -> Iterator[None]:
    """``SLOW_CLIENTS`` connections, each driven by ``behave`` on a thread until the block ends."""
    stop = threading.Event()
    sockets: list[socket.socket] = []
    threads: list[threading.Thread] = []
    for _ in range(SLOW_CLIENTS):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sockets.append(sock)
        thread = threading.Thread(target=_quietly, args=(behave, sock, stop), daemon=True)
        thread.start()
        threads.append(thread)
    try:
        time.sleep(0.5)  # every client has started writing
        yield
    finally:
        stop.set()
        for sock in sockets:
            sock.close()
        for thread in threads:
            thread.join(timeout=5)


def _quietly(behave: Callable[[socket.socket, threading.Event], None], *args: object) -> None:
    with contextlib.suppress(OSError):  # the server closed it, or the test did
        behave(*args)  # type: ignore[arg-type]


def slow_headers(sock: socket.socket, stop: threading.Event) -> None:
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    line = 0
    while not stop.wait(2):
        sock.sendall(f"X-Slow-{line}: 1\r\n".encode())
        line += 1


def slow_body(key: str) -> Callable[[socket.socket, threading.Event], None]:
    """A merchant on a slow link: its payout create's body is read by the view."""

    def behave(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(
            b"POST /api/v1/transactions/in/merchant-wallet/payouts HTTP/1.1\r\n"
            b"Host: 127.0.0.1\r\nAuthorization: Bearer " + key.encode() + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        )
        while not stop.wait(1):
            sock.sendall(b" ")

    return behave


def idle_after_404_with_unread_body(
    answers: list[bytes],
) -> Callable[[socket.socket, threading.Event], None]:
    """Headers first; the body once the 404 came (a server that answers before the body
    arrived, leaving it unread on the connection) or, when the server waits for the whole
    request, after a second. Then idle. Each answer's status line goes to ``answers``."""

    def behave(sock: socket.socket, stop: threading.Event) -> None:
        _idle_after_404(sock, stop, answers)

    return behave


def _idle_after_404(sock: socket.socket, stop: threading.Event, answers: list[bytes]) -> None:
    body = json.dumps({"note": "x" * 2000}).encode()
    sock.sendall(
        b"PUT /api/v1/no-such-route HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
    )
    sock.settimeout(1)
    try:
        answer = sock.recv(65536)
        sock.sendall(body)
    except TimeoutError:
        sock.sendall(body)
        sock.settimeout(10)
        answer = sock.recv(65536)
    answers.append(answer.split(b"\r\n", 1)[0])
    stop.wait(120)


def assert_answers_promptly(web: Web) -> None:
    for path, headers in (
        ("/healthz", {}),
        ("/api/v1/transactions/bank", {"Authorization": f"Bearer {web.key}"}),
    ):
        started = time.monotonic()
        try:
            response = requests.get(f"{web.base_url}{path}", headers=headers, timeout=10)
        except requests.RequestException as error:
            raise AssertionError(f"{path}: {error}\n{web.log()[-3000:]}") from error
        elapsed = time.monotonic() - started
        assert response.status_code == 200, (path, response.text)
        assert elapsed < ANSWER_BUDGET_SECONDS, f"{path} took {elapsed:.2f}s"


def test_slow_headers_do_not_hold_the_web_tier(web: Web) -> None:
    with slow_clients(web.port, slow_headers):
        assert_answers_promptly(web)


def test_slow_bodies_do_not_hold_the_web_tier(web: Web) -> None:
    with slow_clients(web.port, slow_body(web.key)):
        assert_answers_promptly(web)


def test_idle_keep_alive_after_a_404_with_an_unread_body_does_not_hold_the_web_tier(
    web: Web,
) -> None:
    answers: list[bytes] = []
    with slow_clients(web.port, idle_after_404_with_unread_body(answers)):
        assert_answers_promptly(web)
        time.sleep(KEEPALIVE_SECONDS + 1)
        assert_answers_promptly(web)
        assert answers == [b"HTTP/1.1 404 Not Found"] * SLOW_CLIENTS
