"""``benchmarks/harness/pgbouncer.py`` without starting anything: the services' environment
through PgBouncer and the paragraph the report gets."""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness.config import Config
from benchmarks.harness.pgbouncer import PgBouncer, pgbouncer_markdown, pooled_config


def test_the_services_connect_through_pgbouncer_with_transaction_pooling() -> None:
    cfg = Config(database="bench_x", port=8123)
    url = "postgres://postgres@127.0.0.1:6999/bench_x"
    bouncer = PgBouncer(directory=Path("/nonexistent"), url=url, pool_size=4)

    pooled = pooled_config(cfg, bouncer)
    env = pooled.service_env("config.settings.production")

    assert env["DATABASE_URL"] == url
    assert env["DATABASE_TRANSACTION_POOLING"] == "1"
    assert (pooled.port, pooled.salt) == (8123, cfg.salt)
    assert cfg.service_env("config.settings.production")["DATABASE_URL"] == cfg.database_url()


def test_the_report_gives_the_pair_beside_each_other() -> None:
    results = {
        "pgbouncer": {
            "mode": "pair",
            "run": "create_spread",
            "pool_size": 4,
            "direct_rps": 160.0,
            "pgbouncer_rps": 150.0,
            "rps_ratio": 0.94,
            "p50_ratio": 1.05,
            "p99_ratio": 1.1,
            "direct_backends": 8,
            "pgbouncer_backends": 4,
            "pgbouncer_cpu_ms_per_request": 0.2,
        }
    }

    (paragraph,) = pgbouncer_markdown(results)

    assert "150.0 against 160.0 req/s (× 0.94)" in paragraph
    assert "backends after the run 4 against 8" in paragraph


def test_the_report_says_why_there_is_no_pair() -> None:
    results = {"pgbouncer": {"mode": "pair", "skipped": "PgBouncer is not installed"}}

    assert pgbouncer_markdown(results) == ["PgBouncer pair skipped: PgBouncer is not installed"]
    assert pgbouncer_markdown({}) == []
