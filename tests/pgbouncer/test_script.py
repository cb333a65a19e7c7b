"""``scripts/pgbouncer.py`` without starting anything: the upstream read from a
``DATABASE_URL``, the configuration it writes, and what it says where it may not install."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import pgbouncer
from tests.pgbouncer.conftest import unavailable


def test_the_upstream_is_read_from_a_tcp_url() -> None:
    upstream = pgbouncer.Upstream.from_url("postgres://app:s%40cret@db.internal:6543/payments")

    assert upstream == pgbouncer.Upstream(
        host="db.internal", port=6543, user="app", password="s@cret", database="payments"
    )


def test_the_upstream_is_read_from_a_socket_url() -> None:
    upstream = pgbouncer.Upstream.from_url("postgres://postgres@/merchant_payments?host=/var/pg")

    assert (upstream.host, upstream.port) == ("/var/pg", 5432)
    assert upstream.database == "merchant_payments"


def test_the_configuration_pools_transactions_on_a_private_port(tmp_path: Path) -> None:
    upstream = pgbouncer.Upstream.from_url("postgres://postgres@127.0.0.1:5432/bench")

    text = pgbouncer.config_text(
        tmp_path, upstream=upstream, databases=["bench", "test_bench"], port=6500, pool_size=4
    )

    lines = set(text.splitlines())
    assert {
        "bench = host=127.0.0.1 port=5432 user=postgres dbname=bench",
        "test_bench = host=127.0.0.1 port=5432 user=postgres dbname=test_bench",
        "* = host=127.0.0.1 port=5432 user=postgres",
        "listen_addr = 127.0.0.1",
        "listen_port = 6500",
        "unix_socket_dir =",
        "pool_mode = transaction",
        "auth_type = trust",
        "default_pool_size = 4",
        f"pidfile = {tmp_path / pgbouncer.PID_NAME}",
    } <= lines


def test_the_pool_is_sized_to_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pgbouncer.os, "cpu_count", lambda: 8)

    assert pgbouncer.pool_size_default() == 16


def test_without_root_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pgbouncer, "binary", lambda: None)
    monkeypatch.setattr(pgbouncer.os, "geteuid", lambda: 1000)

    with pytest.raises(pgbouncer.PgBouncerError, match="apt-get install pgbouncer"):
        pgbouncer.install()


def test_a_pgbouncer_that_cannot_run_skips_its_tests_but_fails_them_under_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="must run under CI"):
        unavailable("not installed")

    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        unavailable("not installed")
