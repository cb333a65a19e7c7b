"""On PostgreSQL, instants are read by psycopg's compiled loader and come back exactly as
Django's own loader reads them: the same aware datetimes, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st

from core.postgres import CompiledTimestamptzLoader, compiled_loader_available

pytestmark = [
    pytest.mark.django_db,
]

instants = st.datetimes(
    min_value=datetime(1, 1, 2),  # noqa: DTZ001 (hypothesis takes naive bounds)
    max_value=datetime(9999, 12, 30),  # noqa: DTZ001
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=1)), timezone(-timedelta(hours=5))]),
)


def _read(values: list[datetime], *, djangos_loader: bool) -> list[datetime]:
    from django.db.backends.postgresql.psycopg_any import register_tzloader

    with connection.cursor() as cursor:
        if djangos_loader:
            register_tzloader(connection.timezone, cursor.cursor)
        placeholders = ", ".join(["(%s::timestamptz)"] * len(values))
        cursor.execute(f"SELECT * FROM (VALUES {placeholders}) AS v (at)", values)  # noqa: S608
        return [row[0] for row in cursor.fetchall()]


def test_new_connections_read_instants_with_the_compiled_loader() -> None:
    if not compiled_loader_available():
        pytest.skip("psycopg without its compiled part (psycopg-binary)")
    connection.ensure_connection()
    loader = connection.connection.adapters.get_loader(1184, 0)  # timestamptz, text
    assert loader is CompiledTimestamptzLoader
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        assert cursor.fetchone()[0].tzinfo is UTC


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(values=st.lists(instants, min_size=1, max_size=20))
def test_the_compiled_loader_reads_what_djangos_loader_reads(values: list[datetime]) -> None:
    ours = _read(values, djangos_loader=False)
    djangos = _read(values, djangos_loader=True)

    assert ours == djangos == values
    assert all(value.tzinfo is UTC for value in ours + djangos)
