"""What a payout costs the database, measured by ``benchmarks/capacity.py`` on the bench's own
database once the load runs are over and the service is stopped (so its WAL and CPU figures are
the payouts' own): statements, WAL bytes and CPU per create and per dispatched payout, and the
wallet's row-lock hold per create. BENCH_CAPACITY_PAYOUTS (200; 0 skips it) sets the size."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.harness.config import PYTHON, Config, env_int, log, run


def capacity(cfg: Config, results: dict[str, Any]) -> None:
    payouts = env_int("BENCH_CAPACITY_PAYOUTS", 200)
    if payouts <= 0:
        return
    output = run(
        [PYTHON, "-m", "benchmarks.capacity", "--payouts", str(payouts), "--json"],
        env=cfg.service_env("config.settings.production"),
        timeout=900,
    )
    results["capacity"] = json.loads(output.strip().splitlines()[-1])
    per = results["capacity"]["create"]["per_payout"]
    log(
        f"capacity: per create {per['statements']} statements, {per['wal_bytes']} WAL bytes; "
        f"lock hold {results['capacity']['lock_hold'].get('p50_ms')} ms p50"
    )


def capacity_markdown(results: dict[str, Any]) -> list[str]:
    figures = results.get("capacity")
    if not figures:
        return []
    lines = [
        f"Cost per payout (benchmarks/capacity.py: {figures['create']['payouts']} creates on one "
        "wallet, then the worker's dispatch rounds, service stopped):",
        "",
        "| Phase | statements | WAL bytes | Python CPU ms | PostgreSQL CPU ms | wall ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in ("create", "dispatch"):
        per = figures[name]["per_payout"]
        pg = per["postgres_cpu_ms"]
        lines.append(
            f"| {name} | {per['statements']} | {per['wal_bytes']} | {per['python_cpu_ms']} | "
            f"{'n/a' if pg is None else pg} | {per['wall_ms']} |"
        )
    hold = figures.get("lock_hold") or {}
    if hold:
        lines += [
            "",
            f"Wallet row lock held per create (lock statement to end of COMMIT): p50 "
            f"{hold['p50_ms']} ms, p99 {hold['p99_ms']} ms ({hold['samples']} creates): one "
            f"wallet's ceiling ~{hold['one_wallet_ceiling_per_s']} creates/s.",
        ]
    return lines
