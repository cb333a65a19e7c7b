"""A private PgBouncer in transaction mode (``scripts/pgbouncer.py``) in front of the test
database, and the switch that sends a test's connections, in every thread, through it with the
settings of ``DATABASE_TRANSACTION_POOLING`` (no server-side cursors).

Where PgBouncer cannot be installed or started the tests here are skipped with the reason; under
``CI=true`` it can be, so they fail instead."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from django.db import connections

from scripts import pgbouncer


@dataclass(frozen=True)
class PgBouncerServer:
    """A running PgBouncer: its port, the test database's name and its admin console."""

    port: int
    database: str
    pool_size: int

    def show(self, what: str) -> list[dict[str, object]]:
        """``SHOW <what>`` on the admin console (simple query protocol: a client cursor)."""
        with (
            psycopg.connect(
                host=pgbouncer.LISTEN_HOST,
                port=self.port,
                user="postgres",
                dbname="pgbouncer",
                autocommit=True,
                cursor_factory=psycopg.ClientCursor,
            ) as console,
            console.cursor() as cursor,
        ):
            cursor.execute(f"SHOW {what}")
            names = [column.name for column in cursor.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def row_of(self, what: str) -> dict[str, object]:
        """The test database's row of ``SHOW POOLS`` or ``SHOW STATS``."""
        return next(row for row in self.show(what) if row["database"] == self.database)


def unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PgBouncer must run under CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pgbouncer_server(django_db_setup: None) -> Iterator[PgBouncerServer]:
    """One PgBouncer per test process (pytest-xdist worker), pointed at the database
    pytest-django created for it (``test_<NAME>``, ``_gw<N>`` per worker)."""
    settings = connections["default"].settings_dict
    upstream = pgbouncer.Upstream(
        host=settings["HOST"] or "127.0.0.1",
        port=int(settings["PORT"] or 5432),
        user=settings["USER"] or "postgres",
        password=settings["PASSWORD"] or "",
        database=settings["NAME"],
    )
    # Under /tmp, not pytest's root-only temporary directory: PgBouncer runs as nobody under root.
    directory = Path(tempfile.mkdtemp(prefix="pgbouncer-test-"))
    pool_size = pgbouncer.pool_size_default()
    try:
        url = pgbouncer.start(directory, upstream=upstream, pool_size=pool_size)
    except pgbouncer.PgBouncerError as error:
        shutil.rmtree(directory, ignore_errors=True)
        unavailable(str(error))
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    yield PgBouncerServer(port=port, database=upstream.database, pool_size=pool_size)
    pgbouncer.stop(directory)
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def through_pgbouncer(
    pgbouncer_server: PgBouncerServer, transactional_db: None
) -> Iterator[PgBouncerServer]:
    """Every connection the test opens, in any thread, goes through PgBouncer, with server-side
    cursors off as ``DATABASE_TRANSACTION_POOLING=1`` sets them. Django's connections of all
    threads share this settings dict; the test database is flushed afterwards directly."""
    settings = connections["default"].settings_dict
    saved = {key: settings.get(key) for key in ("HOST", "PORT", "DISABLE_SERVER_SIDE_CURSORS")}
    connections.close_all()
    settings.update(
        HOST=pgbouncer.LISTEN_HOST,
        PORT=str(pgbouncer_server.port),
        DISABLE_SERVER_SIDE_CURSORS=True,
    )
    try:
        yield pgbouncer_server
    finally:
        connections.close_all()
        settings.update({key: value for key, value in saved.items() if value is not None})
        if saved["DISABLE_SERVER_SIDE_CURSORS"] is None:
            del settings["DISABLE_SERVER_SIDE_CURSORS"]
