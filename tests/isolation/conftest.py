"""The interleaving harness: sessions (a thread with its own database connection), gates that
pause a session inside the real service code, and checks that a session is blocked on a lock.

A gate is installed by wrapping one function the service calls (``monkeypatch``): the wrapper
calls the real function and, in the one session it belongs to, stops before or after it until
the test releases the gate. The service itself is never replaced. Every wait has a timeout, so a
wrong interleaving fails the test instead of hanging it.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from config.celery_app import app as celery_app
from tests.celery_worker import celery_client_reset

WAIT_SECONDS = 15.0  # the longest any step may take before the interleaving counts as wrong
BLOCK_CHECK_SECONDS = 0.3  # how long a session must stay blocked before the other one goes on
POLL_SECONDS = 0.02


@pytest.fixture(scope="package", autouse=True)
def _in_memory_broker() -> Iterator[None]:
    """Tasks published by these tests (on_commit callbacks: dispatch of a created payout,
    webhook deliveries of settled ones) go to an in-process broker, never to the developer's
    ``var/broker`` queue nor to a Redis the other suites use. Restored after this package."""
    previous = (celery_app.conf.broker_url, celery_app.conf.broker_transport_options)
    celery_app.conf.broker_url = "memory://"
    celery_app.conf.broker_transport_options = {}
    celery_client_reset()
    yield
    celery_app.conf.broker_url, celery_app.conf.broker_transport_options = previous
    celery_client_reset()


@pytest.fixture(autouse=True)
def _publishing_in_memory() -> None:
    """Fails a test that would start while another fixture has pointed Celery elsewhere."""
    assert celery_app.conf.broker_url == "memory://", celery_app.conf.broker_url


class Gate:
    """A point in one session's run: ``reached`` when the session gets there; unless created
    open, the session then waits there until ``release()``."""

    def __init__(self, label: str, *, open_: bool = False) -> None:
        self.label = label
        self._reached = threading.Event()
        self._released = threading.Event()
        if open_:
            self._released.set()

    def arrive(self) -> None:
        """Called in the session: marks the gate reached and waits to be released."""
        self._reached.set()
        if not self._released.wait(WAIT_SECONDS):
            raise AssertionError(f"{self.label}: not released within {WAIT_SECONDS:.0f}s")

    def wait(self) -> None:
        """Called by the test: returns once the session has reached the gate."""
        if not self._reached.wait(WAIT_SECONDS):
            raise AssertionError(f"never reached {self.label} within {WAIT_SECONDS:.0f}s")

    @property
    def reached(self) -> bool:
        return self._reached.is_set()

    def release(self) -> None:
        self._released.set()


class Session(threading.Thread):
    """One client of the database: a thread with its own Django connection (closed when the
    thread ends) running ``work``. Its return value or exception is kept for the test."""

    def __init__(self, label: str, work: Callable[[], Any]) -> None:
        super().__init__(name=f"isolation-session-{label}", daemon=True)
        self.label = label
        self._work = work
        self.begun = Gate(f"the start of session {label}", open_=True)
        self.result: Any = None
        self.error: BaseException | None = None
        self.backend_pid: int | None = None

    def run(self) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                self.backend_pid = cursor.fetchone()[0]
            self.begun.arrive()
            self.result = self._work()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            self.error = error
        finally:
            connection.close()

    def finish(self) -> Session:
        self.join(WAIT_SECONDS)
        assert not self.is_alive(), f"session {self.label} still running after {WAIT_SECONDS}s"
        return self

    def value(self) -> Any:
        """The session's return value; its exception, if it raised one, is raised here."""
        self.finish()
        if self.error is not None:
            raise AssertionError(f"session {self.label} raised {self.error!r}") from self.error
        return self.result

    def failure(self) -> BaseException:
        """The exception the session raised (it must have raised one)."""
        self.finish()
        assert self.error is not None, f"session {self.label} returned {self.result!r}"
        return self.error


def backend_waiting_on(pid: int) -> tuple[str | None, str | None, str | None]:
    """``(wait_event_type, wait_event, state)`` of a PostgreSQL backend, from another
    connection."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT wait_event_type, wait_event, state FROM pg_stat_activity WHERE pid = %s",
            [pid],
        )
        row = cursor.fetchone()
    return (row[0], row[1], row[2]) if row else (None, None, None)


class Interleaving:
    """Sessions and the gates that order their steps. Closing it releases every gate and joins
    every session, so a failed test leaves no thread holding a lock."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._monkeypatch = monkeypatch
        self._sessions: list[Session] = []
        self._gates: list[Gate] = []

    def session(self, label: str, work: Callable[[], Any]) -> Session:
        session = Session(label, work)
        self._sessions.append(session)
        return session

    def pause_after(self, owner: object, attribute: str, *, session: Session) -> Gate:
        """``session`` stops right after its first call of ``owner.attribute`` returns."""
        return self._instrument(owner, attribute, session=session, after=True, open_=False)

    def pause_before(self, owner: object, attribute: str, *, session: Session) -> Gate:
        """``session`` stops right before its first call of ``owner.attribute``."""
        return self._instrument(owner, attribute, session=session, after=False, open_=False)

    def reach(self, owner: object, attribute: str, *, session: Session) -> Gate:
        """A gate that only tells when ``session`` is about to call ``owner.attribute``."""
        return self._instrument(owner, attribute, session=session, after=False, open_=True)

    def _instrument(
        self, owner: object, attribute: str, *, session: Session, after: bool, open_: bool
    ) -> Gate:
        where = "after" if after else "before"
        gate = Gate(f"session {session.label} {where} {attribute}", open_=open_)
        self._gates.append(gate)
        real = getattr(owner, attribute)

        @functools.wraps(real, updated=())
        def instrumented(*args: Any, **kwargs: Any) -> Any:
            here = threading.current_thread() is session
            if here and not after:
                gate.arrive()
            result = real(*args, **kwargs)
            if here and after:
                gate.arrive()
            return result

        self._monkeypatch.setattr(owner, attribute, instrumented)
        return gate

    def assert_blocked(self, session: Session, *, on: str) -> None:
        """``session`` is still running after a short wait and, on PostgreSQL, its backend is
        waiting for a lock (``pg_stat_activity``)."""
        session.join(BLOCK_CHECK_SECONDS)
        assert session.is_alive(), (
            f"session {session.label} finished instead of waiting for {on} "
            f"(result {session.result!r}, error {session.error!r})"
        )
        assert session.backend_pid is not None
        deadline = time.monotonic() + WAIT_SECONDS
        seen = backend_waiting_on(session.backend_pid)
        while seen[0] != "Lock" and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            seen = backend_waiting_on(session.backend_pid)
        assert seen[0] == "Lock", f"session {session.label} should wait for {on}; it is {seen}"
        assert session.is_alive()

    def close(self) -> None:
        for gate in self._gates:
            gate.release()
        for session in self._sessions:
            session.begun.release()
            if session.ident is not None:
                session.join(WAIT_SECONDS)


@pytest.fixture
def interleaving(db: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Interleaving]:
    """Set up after the database (``transaction=True`` tests) and closed before it is flushed,
    so no session still holds a lock when the tables are emptied."""
    harness = Interleaving(monkeypatch)
    try:
        yield harness
    finally:
        harness.close()


class Clock:
    """``django.utils.timezone.now`` moved forward by ``advance()`` for every session at once."""

    def __init__(self, real_now: Callable[[], datetime]) -> None:
        self._real_now = real_now
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return self._real_now() + self.offset

    def advance(self, by: timedelta) -> None:
        self.offset += by


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    controlled = Clock(timezone.now)
    monkeypatch.setattr(timezone, "now", controlled.now)
    return controlled
