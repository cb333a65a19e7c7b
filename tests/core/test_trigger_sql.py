"""The triggers' SQL lives in ``.sql`` files beside the migrations that run them: each migration
runs its file as it is, and every trigger and function a file creates is installed with the body
the file gives it. What the triggers do is tested where it matters: the ledger's in
``tests/wallets/test_models.py``, the audit trail's in ``tests/audit/test_models.py``, the payout
counts' in ``tests/payouts/test_daily_counts.py``."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import RunSQL

ROOT = Path(__file__).resolve().parents[2]

# (app, migration, the file it installs with, the file it removes with)
TRIGGER_MIGRATIONS = [
    ("wallets", "0003_ledger_append_only_trigger", "0003_ledger_append_only"),
    ("audit", "0002_append_only_trigger", "0002_append_only"),
    ("payouts", "0007_payout_daily_count", "0007_payout_daily_count"),
]


# What every database that ran these migrations executed: an applied migration's SQL never
# changes (a change goes in a new migration, with a new file).
APPLIED_SHA256 = {
    "audit/migrations/sql/0002_append_only.sql": (
        "dc89d0a70892afc03d75613a765993c2629f22cc9bf632aaefd83af42a5f0616"
    ),
    "audit/migrations/sql/0002_append_only_drop.sql": (
        "d80aa72f8f04d432ce734387e57eddc5e9ebe98196da7aae0446d09e073bde57"
    ),
    "payouts/migrations/sql/0007_payout_daily_count.sql": (
        "f1e90b808db4c82c84ff3ec84186f68e048e4300ee8b8f56533df7cd2c7157da"
    ),
    "payouts/migrations/sql/0007_payout_daily_count_drop.sql": (
        "62616e85d9fe7987d112613794b2c732bd5b9ada39918d3038b73317172be5f2"
    ),
    "wallets/migrations/sql/0003_ledger_append_only.sql": (
        "528bcb68c4a54e366947e4706047857394eae14439bcfe9f3b8f9cf1a66bf643"
    ),
    "wallets/migrations/sql/0003_ledger_append_only_drop.sql": (
        "871d4bfea7f6d3734c90d8ead4db21f17aafdea881e364291210a483cc9c0acc"
    ),
}


def _sql(app: str, stem: str) -> str:
    return (ROOT / app / "migrations" / "sql" / f"{stem}.sql").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", sorted(APPLIED_SHA256))
def test_the_sql_of_applied_migrations_is_what_databases_ran(path: str) -> None:
    digest = hashlib.sha256((ROOT / path).read_bytes()).hexdigest()
    assert digest == APPLIED_SHA256[path], f"{path} changed: put a change in a new migration"


def test_every_sql_file_is_pinned() -> None:
    found = {str(path.relative_to(ROOT)) for path in ROOT.glob("*/migrations/sql/*.sql")}
    assert found == set(APPLIED_SHA256)


@pytest.mark.parametrize(("app", "name", "stem"), TRIGGER_MIGRATIONS)
def test_each_trigger_migration_runs_its_sql_files_as_they_are(
    app: str, name: str, stem: str
) -> None:
    migration = MigrationLoader(None, ignore_no_migrations=True).disk_migrations[(app, name)]
    [operation] = [op for op in migration.operations if isinstance(op, RunSQL)]
    assert list(operation.sql) == [_sql(app, stem)]
    assert list(operation.reverse_sql) == [_sql(app, f"{stem}_drop")]


@pytest.mark.django_db
@pytest.mark.parametrize(("app", "name", "stem"), TRIGGER_MIGRATIONS)
def test_every_trigger_a_file_creates_is_installed_with_its_body(
    app: str, name: str, stem: str
) -> None:
    text = _sql(app, stem)
    triggers = re.findall(r"CREATE TRIGGER (\w+)\s+(?:BEFORE|AFTER) [A-Z ]+? ON (\w+)", text)
    functions = re.findall(r"CREATE OR REPLACE FUNCTION (\w+)\(\)", text)
    assert triggers and functions
    with connection.cursor() as cursor:
        for trigger, table in triggers:
            cursor.execute(
                "SELECT tgenabled FROM pg_trigger WHERE tgname = %s AND tgrelid = %s::regclass",
                [trigger, table],
            )
            row = cursor.fetchone()
            assert row is not None, f"trigger {trigger} on {table} is not installed"
            assert row[0] == "O", f"trigger {trigger} on {table} is not enabled"
        for function in functions:
            cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", [function])
            [(body,)] = cursor.fetchall()
            assert body in text, f"function {function} differs from {app}/migrations/sql/{stem}"
