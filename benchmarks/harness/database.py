"""The ``bench`` database: connecting to it, recreating and dropping databases, and preparing it
for a run (migrated, then seeded with SQL from ``benchmarks/seed.sql``: funded wallets and one
wallet with the long payout history, the seed's count changes folded, a checkpoint, and the key
files wrk reads); and emptying the run's Redis database."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import psycopg

from benchmarks.harness.config import BENCH_DIR, PYTHON, WORK, Config, log, run


@contextlib.contextmanager
def connect(cfg: Config, database: str | None = None) -> Iterator[psycopg.Connection]:
    with psycopg.connect(cfg.dsn(database), autocommit=True) as conn:
        yield conn


def scalar(cfg: Config, sql: str, params: tuple = ()) -> Any:
    with connect(cfg) as conn:
        row = conn.execute(sql, params).fetchone()
        return row[0] if row else None


def recreate_database(cfg: Config, name: str, *, template: str | None = None) -> None:
    with connect(cfg, "postgres") as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if template:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY = FILE_COPY')
        else:
            conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(cfg: Config, name: str) -> None:
    with connect(cfg, "postgres") as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def prepare_database(cfg: Config) -> None:
    log(f"database {cfg.database}: recreate and migrate")
    recreate_database(cfg, cfg.database)
    run(
        [PYTHON, "manage.py", "migrate", "--noinput", "-v0"],
        env=cfg.service_env("config.settings.production"),
    )
    log(f"seeding {cfg.wallets} funded wallets and {cfg.payouts:,} payouts with SQL")
    started = time.monotonic()
    run(
        [
            "psql",
            *cfg.pg_connection_args(),
            "-d",
            cfg.database,
            "-q",
            "-v",
            f"n_wallets={cfg.wallets}",
            "-v",
            f"n_payouts={cfg.payouts}",
            "-v",
            f"salt={cfg.salt}",
            "-f",
            str(BENCH_DIR / "seed.sql"),
        ],
        timeout=1200,
    )
    log(f"seeded in {time.monotonic() - started:.0f}s")
    # The seed's count changes folded in, as beat keeps them folded in production.
    run(
        [PYTHON, "manage.py", "payout_counts", "--fold", "--no-progress"],
        env=cfg.service_env("config.settings.production"),
    )
    # Write the seed's dirty pages out now, not in the background during the measured runs.
    run(
        ["psql", *cfg.pg_connection_args(), "-d", cfg.database, "-q", "-c", "CHECKPOINT"],
        timeout=600,
    )
    log(f"checkpoint done {time.monotonic() - started:.0f}s after the seed started")
    (WORK / "keys-spread.txt").write_text(
        "\n".join(cfg.key(i) for i in range(1, cfg.wallets + 1)) + "\n"
    )
    (WORK / "keys-hot.txt").write_text(cfg.key(1) + "\n")
    (WORK / "keys-list.txt").write_text(cfg.key(cfg.list_merchant) + "\n")


def flush_redis(cfg: Config) -> None:
    import redis

    redis.Redis.from_url(cfg.redis_url).flushdb()
