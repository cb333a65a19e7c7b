"""Gives the pgbench copy of the bench database the column defaults the frozen create SQL needs.

The frozen script (``results/create-frozen.pgbench``) inserts the rows a create wrote when it was
captured; a column added since (``NOT NULL``, its default in the model only, as Django adds
them) would refuse its rows. On the copy pgbench runs on, and only there, each such column of
the tables the script inserts into gets its model default as a database default, so the frozen
statements run unchanged and write what a create would write in those columns::

    python -m benchmarks.frozen_defaults --database bench_pgbench --script create-frozen.pgbench

Run inside the benchmark's environment (``DJANGO_SETTINGS_MODULE`` set, ``DATABASE_URL`` on the
bench database: the copy is reached by name on the same server).
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import django


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", required=True, help="the pgbench copy")
    parser.add_argument("--script", type=Path, required=True)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.bench_settings")
    django.setup()
    from django.apps import apps
    from django.db import connection
    from django.db.models import NOT_PROVIDED
    from psycopg import sql

    tables = set(re.findall(r'INSERT INTO "?(\w+)"?', args.script.read_text()))
    models = {model._meta.db_table: model for model in apps.get_models()}
    settings = connection.get_connection_params()
    settings["dbname"] = args.database
    import psycopg

    with psycopg.connect(**settings, autocommit=True) as copy:
        for table in sorted(tables & set(models)):
            model = models[table]
            missing = {
                name
                for (name,) in copy.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                    "AND is_nullable = 'NO' AND column_default IS NULL",
                    [table],
                )
            }
            for field in model._meta.concrete_fields:
                if field.column not in missing or field.default is NOT_PROVIDED:
                    continue
                value = field.get_db_prep_save(field.get_default(), connection)
                copy.execute(
                    sql.SQL("ALTER TABLE {} ALTER COLUMN {} SET DEFAULT {}").format(
                        sql.Identifier(table), sql.Identifier(str(field.column)), sql.Literal(value)
                    )
                )
                print(f"{table}.{field.column} defaults to {value!r} on {args.database}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
