"""The tail's breakdown: the per-request phase timings a traced run wrote
(``benchmarks/trace.py``, ``var/bench/trace/*.jsonl``) folded into one table, phase × (p50, p99,
mean over the slowest 1 % of requests), and its Markdown rendering. The slowest 1 % are the
requests whose ``total`` (client send to response, ``queue`` + ``app``) is at or above its p99:
the column says where those requests spent their time, which the per-phase p99s alone cannot
(each phase's p99 comes from different requests)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

from benchmarks.harness.config import WORK

TRACE_DIR = WORK / "trace"
PHASES: tuple[tuple[str, str], ...] = (
    ("total", "client send → response (queue + app)"),
    ("queue", "send → first middleware (socket, event loop, wait for the view thread)"),
    ("app", "first middleware → response"),
    ("auth", "secret key authentication"),
    ("throttle", "rate limit (Redis)"),
    ("transaction", "the create's atomic block (insert, reserve, commit, on-commit)"),
    ("lock", "wallet UPDATE: row lock wait + run"),
    ("commit", "COMMIT round trip"),
    ("on_commit", "dispatcher wake after commit (Redis)"),
    ("sql", "all SQL statements"),
    ("connect", "database connection setup"),
    ("render", "envelope JSON rendering"),
    ("gc", "garbage collection pauses"),
    ("cpu", "the view thread's CPU time"),
    ("off_cpu", "app − cpu − sql: runnable but off a CPU, or Redis"),
)


def clear_traces() -> None:
    shutil.rmtree(TRACE_DIR, ignore_errors=True)


def read_traces(tag: str, directory: Path = TRACE_DIR) -> list[dict[str, float]]:
    records: list[dict[str, float]] = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short by a stopping process
            if record.get("run") == tag:
                records.append(record)
    return records


def percentile(values: list[float], fraction: float) -> float:
    """Nearest rank: the smallest value with at least ``fraction`` of values at or below it."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def breakdown(records: list[dict[str, float]]) -> dict[str, Any]:
    """Phase → p50, p99 and the slowest 1 %'s mean (ms), over ``records``."""
    rows: list[dict[str, float]] = []
    for record in records:
        row = {name: float(record.get(name, 0.0)) for name, _ in PHASES}
        row["total"] = row["queue"] + row["app"]
        row["off_cpu"] = max(0.0, row["app"] - row["cpu"] - row["sql"])
        rows.append(row)
    if not rows:
        return {"requests": 0, "phases": {}}
    cut = percentile([row["total"] for row in rows], 0.99)
    slowest = [row for row in rows if row["total"] >= cut]
    phases = {
        name: {
            "p50_ms": round(percentile([row[name] for row in rows], 0.5), 2),
            "p99_ms": round(percentile([row[name] for row in rows], 0.99), 2),
            "slowest_1pct_mean_ms": round(sum(row[name] for row in slowest) / len(slowest), 2),
        }
        for name, _ in PHASES
    }
    return {
        "requests": len(rows),
        "slowest_requests": len(slowest),
        "statements_per_request": round(
            sum(float(record.get("statements", 0)) for record in records) / len(records), 2
        ),
        "processes": len({record.get("pid") for record in records}),
        "phases": phases,
    }


def tail_markdown(results: dict[str, Any]) -> list[str]:
    """The breakdown's table, or nothing when the run recorded none."""
    tail = results.get("tail_breakdown")
    if not tail or not tail.get("phases"):
        return []
    run = (results.get("runs") or {}).get(tail.get("run", ""), {})
    share = (run.get("cpu") or {}).get("percent_of_machine") or {}
    lines = [
        f"Where the open-loop create's time goes ({tail.get('run')}: {tail['requests']} traced "
        f"requests over {tail['processes']} web processes, "
        f"{tail['statements_per_request']} SQL statements each; slowest 1 % = "
        f"{tail['slowest_requests']} requests; CPU during the run: "
        + ", ".join(f"{name} {value} %" for name, value in share.items())
        + "):",
        "",
        "| Phase | p50 ms | p99 ms | slowest 1 % mean ms | what |",
        "|---|---:|---:|---:|---|",
    ]
    for name, what in PHASES:
        figures = tail["phases"].get(name)
        if figures:
            lines.append(
                f"| {name} | {figures['p50_ms']:.2f} | {figures['p99_ms']:.2f} | "
                f"{figures['slowest_1pct_mean_ms']:.2f} | {what} |"
            )
    return [*lines, ""]
