"""The report: the machine and the versions a run used, the Markdown rendering of a run's results
(figures, runs, drains, list SQL, gate, profile), and writing ``results/latest.json`` and
``results/latest.md``."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from benchmarks.harness.config import RESULTS_DIR, Config, run
from benchmarks.harness.costs import capacity_markdown
from benchmarks.harness.database import scalar
from benchmarks.harness.metrics import METRIC_ORDER, fmt
from benchmarks.harness.pgbouncer import pgbouncer_markdown
from benchmarks.harness.tail import tail_markdown


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory_gb = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        first = Path("/proc/meminfo").read_text().splitlines()[0]
        memory_gb = round(int(first.split()[1]) / 1024 / 1024, 1)
    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "memory_gb": memory_gb,
        "os": platform.platform(),
        "python": platform.python_version(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def versions(cfg: Config) -> dict[str, str]:
    out: dict[str, str] = {}
    with contextlib.suppress(Exception):
        out["postgresql"] = scalar(cfg, "SHOW server_version")
    with contextlib.suppress(Exception):
        out["wrk"] = subprocess.run(
            ["wrk", "-v"], capture_output=True, text=True, check=False
        ).stdout.split("\n")[0]
    with contextlib.suppress(Exception):
        import redis

        out["redis"] = redis.Redis.from_url(cfg.redis_url).info()["redis_version"]
    with contextlib.suppress(Exception):
        out["commit"] = run(["git", "rev-parse", "--short", "HEAD"]).strip()
    return out


def _broker(conf: dict[str, Any]) -> str:
    """``Celery broker …; `` for a run that recorded its broker (BENCH_BROKER), else nothing."""
    broker = conf.get("broker")
    if not broker:
        return ""
    if broker["kind"] == "rabbitmq":
        return f"Celery broker RabbitMQ {broker.get('version', '?')} ({broker.get('queues')}); "
    return "Celery broker Redis; "


def markdown(results: dict[str, Any]) -> str:
    m = results["metrics"]
    runs = results["runs"]
    mach = results["machine"]
    conf = results["config"]
    lines = [
        "# Benchmark results",
        "",
        f"Run {results['finished_at']} on {mach['cores']} cores ({mach['cpu']}), "
        f"{mach['memory_gb']} GB RAM, {results['versions'].get('postgresql', '?')} PostgreSQL, "
        f"Redis {results['versions'].get('redis', '?')}; {_broker(conf)}load average at start "
        f"{mach['load_average_at_start']}. gunicorn {conf['web_concurrency']} "
        f"{conf.get('worker_class', 'sync')} workers × {conf.get('worker_threads', 1)} thread, "
        f"Celery {conf['celery_concurrency']} prefork processes, wrk {conf['threads']} threads × "
        f"{conf['connections']} connections, {conf['duration']} s per run (lists: 1 connection, "
        f"{conf['list_duration']} s); web on CPUs {conf.get('web_cpus', 'all')}, worker on "
        f"{conf.get('worker_cpus', 'all')}; commit {results['versions'].get('commit')}.",
        "",
        "| Metric | Value | Target | Reached | Measured |",
        "|---|---:|---|---|---|",
    ]
    for key in METRIC_ORDER:
        row = m[key]
        reached = {True: "yes", False: "no", None: "n/a"}[row["reached"]]
        lines.append(
            f"| {key} {row['name']} | {fmt(row['value'], 2)} | {row['target']} | {reached} "
            f"| {row['detail']} |"
        )
    lines += [
        "",
        "| Run | req/s | p50 ms | p99 ms | requests | statuses | CPU % web/worker/pg/wrk/other "
        "| load 1m |",
        "|---|---:|---:|---:|---:|---|---|---|",
    ]
    for key, label in (("pgbench_create", "frozen"), ("pgbench_create_current", "current")):
        pg = runs.get(key) or {}
        lines.append(
            f"| pgbench: the {label} create SQL ({pg.get('clients')} clients) | "
            f"{fmt(pg.get('tps'))} | {fmt(pg.get('latency_avg_ms'))} (avg) | | | "
            f"{pg.get('failed', 0)} failed | | {pg.get('load_average_1m', '')} |"
        )
    for name, data in runs.items():
        if name.startswith("pgbench_") or not isinstance(data, dict) or "rps" not in data:
            continue
        statuses = ", ".join(f"{code}: {n}" for code, n in sorted(data["statuses"].items()))
        share = ((data.get("cpu") or {}).get("percent_of_machine")) or {}
        cpu = "/".join(
            f"{share.get(part, 0):.0f}"
            for part in ("web", "worker", "postgres_bench", "wrk", "other")
        )
        lines.append(
            f"| {name} | {fmt(data['rps'])} | {fmt(data['p50_ms'])} | {fmt(data['p99_ms'])} "
            f"| {data['requests']} | {statuses} | {cpu} | {data.get('load_average_1m', '')} |"
        )
    spread = (runs.get("create_spread") or {}).get("cpu") or {}
    if spread.get("cpu_ms_per_request"):
        per = spread["cpu_ms_per_request"]
        lines += [
            "",
            "CPU per create (create_spread): "
            + ", ".join(f"{part} {value} ms" for part, value in per.items() if value is not None)
            + ".",
        ]
    tail = tail_markdown(results)
    if tail:
        lines += ["", *tail[:-1]]
    costs = capacity_markdown(results)
    if costs:
        lines += ["", *costs]
    drains = results.get("drains") or {}
    if drains:
        lines += [
            "",
            "Worker drain after each load: "
            + "; ".join(f"{name} {d['settled']} in {d['seconds']} s" for name, d in drains.items())
            + ".",
        ]
    pooled = pgbouncer_markdown(results)
    if pooled:
        lines += ["", *pooled]
    list_sql = results.get("list_sql") or {}
    if list_sql and "error" not in list_sql:
        lines += ["", "List SQL (EXPLAIN ANALYZE of the statements the ORM sends):", ""]
        for label, entry in list_sql.items():
            parts = [
                f"{st['kind']} {st['execution_ms']} ms ({st['top_node']}"
                f"{', ' + ', '.join(st['indexes']) if st['indexes'] else ''})"
                for st in entry["statements"]
            ]
            lines.append(f"- {label}: {entry['queries']} queries; " + "; ".join(parts))
    lines += ["", "Gate:", ""]
    for check in results["gate"]:
        lines.append(f"- {'PASS' if check['ok'] else 'FAIL'}: {check['check']} ({check['detail']})")
    for kind, title in (("wall", "wall clock"), ("gil", "holding the GIL (Python CPU)")):
        profile = (results.get("profile") or {}).get(kind) or {}
        if not profile.get("top_self"):
            continue
        lines += [
            "",
            f"Profile of the create path, {title} (py-spy, {profile['samples_in_requests']} "
            "samples inside requests), top frames by own time:",
            "",
        ]
        lines += [f"- {row['pct']}% {row['frame']}" for row in profile["top_self"][:15]]
        lines += ["", "Project functions by inclusive time:", ""]
        lines += [f"- {row['pct']}% {row['frame']}" for row in profile["top_inclusive_project"]]
    return "\n".join(lines) + "\n"


def write_results(results: dict[str, Any]) -> str:
    """Writes ``results/latest.json`` and ``results/latest.md``; the Markdown."""
    (RESULTS_DIR / "latest.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    text = markdown(results)
    (RESULTS_DIR / "latest.md").write_text(text)
    return text
