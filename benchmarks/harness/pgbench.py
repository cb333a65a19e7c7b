"""M1's denominator: the SQL of one create, captured from the ORM (``benchmarks.capture_create``)
and frozen in ``results/create-frozen.pgbench``, replayed by pgbench on a copy of the ``bench``
database: the frozen script (M1) and the SQL the ORM sends now (M1b)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from benchmarks.harness.config import PYTHON, RESULTS_DIR, ROOT, WORK, Config, log, run
from benchmarks.harness.database import drop_database, recreate_database

FROZEN_CREATE_SCRIPT = RESULTS_DIR / "create-frozen.pgbench"
SALT_MARKER = "__SALT__"


def frozen_create_script(cfg: Config) -> Path:
    """The frozen create SQL (M1's denominator) with this run's key salt and wallet count."""
    text = FROZEN_CREATE_SCRIPT.read_text().replace(SALT_MARKER, cfg.salt)
    text = re.sub(
        r"^\\set i random\(1, \d+\)$", rf"\\set i random(1, {cfg.wallets})", text, flags=re.M
    )
    script = WORK / "create-frozen.pgbench"
    script.write_text(text)
    return script


def capture_and_pgbench(cfg: Config, results: dict[str, Any]) -> None:
    """pgbench of the create's SQL: the frozen script (M1's denominator) and the SQL the ORM
    sends now (captured here; M1 against it shows how much the service adds to its own SQL)."""
    script, info = WORK / "create.pgbench", WORK / "capture.json"
    log("capturing the SQL of one create from the ORM")
    run(
        [
            PYTHON,
            "-m",
            "benchmarks.capture_create",
            "--merchant",
            str(min(777, cfg.wallets)),
            "--salt",
            cfg.salt,
            "--wallets",
            str(cfg.wallets),
            "--out",
            str(script),
            "--info",
            str(info),
        ],
        env={**cfg.service_env("benchmarks.bench_settings"), "LOG_LEVEL": "WARNING"},
    )
    captured = json.loads(info.read_text())
    results["create_sql"] = {
        "statements": captured["create_queries"],
        "in_transaction": captured["create_queries_in_transaction"],
        "replay_statements": captured["replay_queries"],
        "replay_locks_wallet": captured["replay_locks_wallet"],
        "pgbench_script": str(script.relative_to(ROOT)),
        "frozen_statements": _pgbench_statement_count(FROZEN_CREATE_SCRIPT),
        "frozen_script": str(FROZEN_CREATE_SCRIPT.relative_to(ROOT)),
    }
    shutil.copy(script, RESULTS_DIR / "create.pgbench")
    log(f"copying {cfg.database} to {cfg.pgbench_database} for pgbench")
    recreate_database(cfg, cfg.pgbench_database, template=cfg.database)
    try:
        # Columns added since the frozen SQL was captured get their model defaults on the copy.
        run(
            [
                PYTHON,
                "-m",
                "benchmarks.frozen_defaults",
                "--database",
                cfg.pgbench_database,
                "--script",
                str(FROZEN_CREATE_SCRIPT),
            ],
            env={**cfg.service_env("benchmarks.bench_settings"), "LOG_LEVEL": "WARNING"},
        )
        results["runs"]["pgbench_create"] = pgbench(cfg, frozen_create_script(cfg), "frozen")
        results["runs"]["pgbench_create_current"] = pgbench(cfg, script, "current")
    finally:
        drop_database(cfg, cfg.pgbench_database)


def _pgbench_statement_count(script: Path) -> int:
    """Statements of one create in a pgbench script (not its variables, comments or BEGIN)."""
    return sum(
        1
        for line in script.read_text().splitlines()
        if line.strip()
        and not line.startswith(("--", "\\"))
        and line.strip().rstrip(";") not in ("BEGIN", "COMMIT")
    )


def pgbench(cfg: Config, script: Path, label: str) -> dict[str, Any]:
    log(f"pgbench ({label} create SQL): {cfg.connections} clients, {cfg.duration}s")
    load_before = os.getloadavg()[0]
    output = run(
        [
            "pgbench",
            *cfg.pg_connection_args(),
            "-n",
            "-M",
            "simple",
            "-c",
            str(cfg.connections),
            "-j",
            str(cfg.threads),
            "-T",
            str(cfg.duration),
            "-f",
            str(script),
            cfg.pgbench_database,
        ],
        timeout=cfg.duration + 120,
    )
    tps = latency = None
    failed = 0
    for line in output.splitlines():
        if line.startswith("tps ="):
            tps = float(line.split()[2])
        elif line.startswith("latency average"):
            latency = float(line.split()[3])
        elif line.startswith("number of failed transactions"):
            failed = int(line.split(":")[1].split()[0])
    if tps is None:
        raise RuntimeError(f"pgbench printed no tps:\n{output}")
    log(f"pgbench ({label}): {tps:.0f} TPS")
    return {
        "load_average_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "tps": tps,
        "latency_avg_ms": latency,
        "failed": failed,
        "clients": cfg.connections,
        "script": label,
    }
