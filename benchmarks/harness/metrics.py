"""The figures: each metric (M1, M1b, M3, M4, M7, M8, M10, C1, L1, B1) computed from a run's
recorded results as a ratio of two runs or a measured value, with its informational target."""

from __future__ import annotations

from typing import Any

from benchmarks.harness.config import BULK_ITEMS

TARGETS = {  # informational, not the gate
    "M1": (">=", 0.20),
    "M1b": (">=", 0.20),
    "M3": (">=", 0.7),
    "M4": (">=", 0.3),
    "M7": (">=", 1.5),
    "M8": ("<=", 3.0),
    "M10": ("<=", 2.0),
    "C1": ("<=", 10.0),
    "L1": ("<=", 10.0),
}
METRIC_ORDER = ("M1", "M1b", "M3", "M4", "M7", "M8", "M10", "C1", "L1", "B1")


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if not numerator or not denominator:
        return None
    return numerator / denominator


def metrics(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    runs = results["runs"]

    def rps(name: str) -> float | None:
        return (runs.get(name) or {}).get("rps")

    def p50(name: str) -> float | None:
        return (runs.get(name) or {}).get("p50_ms")

    pg = (runs.get("pgbench_create") or {}).get("tps")
    pg_now = (runs.get("pgbench_create_current") or {}).get("tps")
    sql = results.get("create_sql") or {}
    out: dict[str, dict[str, Any]] = {
        "M1": {
            "name": "full-stack efficiency: create req/s ÷ pgbench TPS of the frozen create SQL",
            "value": ratio(rps("create_spread"), pg),
            "detail": f"{fmt(rps('create_spread'))} req/s ÷ {fmt(pg)} TPS "
            f"({sql.get('frozen_statements', '?')} statements)",
        },
        "M1b": {
            "name": "the same against the create's SQL as it is now",
            "value": ratio(rps("create_spread"), pg_now),
            "detail": f"{fmt(rps('create_spread'))} req/s ÷ {fmt(pg_now)} TPS "
            f"({sql.get('statements', '?')} statements)",
        },
        "M3": {
            "name": "hot wallet: one wallet ÷ 1,000 wallets (create req/s)",
            "value": ratio(rps("create_hot"), rps("create_spread")),
            "detail": f"{fmt(rps('create_hot'))} ÷ {fmt(rps('create_spread'))} req/s",
        },
        "M4": {
            "name": "framework share: create ÷ authenticated no-op POST (req/s)",
            "value": ratio(rps("create_spread"), rps("noop")),
            "detail": f"{fmt(rps('create_spread'))} ÷ {fmt(rps('noop'))} req/s",
        },
        "M7": {
            "name": "idempotent replay: replay ÷ fresh create (req/s)",
            "value": ratio(rps("replay"), rps("create_spread")),
            "detail": f"{fmt(rps('replay'))} ÷ {fmt(rps('create_spread'))} req/s",
        },
    }
    m8 = {}
    for variant in ("all", "status", "dates"):
        m8[variant] = ratio(p50(f"list_{variant}_deep"), p50(f"list_{variant}_page1"))
    out["M8"] = {
        "name": "deep list: p50 100,000 rows deep ÷ p50 page 1 (worst of: none, status, dates)",
        "value": max((v for v in m8.values() if v is not None), default=None),
        "detail": ", ".join(
            f"{variant} {fmt(p50(f'list_{variant}_deep'))}/{fmt(p50(f'list_{variant}_page1'))}"
            f" ms = {fmt(value, 2)}"
            for variant, value in m8.items()
        ),
        "by_filter": m8,
    }
    tail = runs.get("create_open_loop") or {}
    out["M10"] = {
        "name": "tail: create p99 ÷ p50 at ~70% of max rate, open loop",
        "value": ratio(tail.get("p99_ms"), tail.get("p50_ms")),
        "detail": (
            f"p99 {fmt(tail.get('p99_ms'))} ms ÷ p50 {fmt(tail.get('p50_ms'))} ms at "
            f"{fmt(tail.get('target_rate'))} req/s target, {fmt(tail.get('rps'))} achieved, "
            f"{tail.get('late_sends', '?')} late sends"
        ),
    }
    per = ((runs.get("create_spread") or {}).get("cpu") or {}).get("cpu_ms_per_request") or {}
    parts = {name: per.get(name) for name in ("web", "worker", "postgres_bench")}
    known = [value for value in parts.values() if value is not None]
    out["C1"] = {
        "name": "CPU per create: web + worker + PostgreSQL (ms)",
        "value": sum(known) if len(known) == len(parts) else None,
        "detail": ", ".join(f"{name} {fmt(value, 2)} ms" for name, value in parts.items()),
    }
    page1 = {v: p50(f"list_{v}_page1") for v in ("all", "status", "dates")}
    out["L1"] = {
        "name": f"list page 1 p50 at {results['config'].get('list_wallet_payouts', 0):,} rows "
        "(worst of: none, status, dates; ms)",
        "value": max((v for v in page1.values() if v is not None), default=None),
        "detail": ", ".join(f"{v} {fmt(ms)} ms" for v, ms in page1.items()),
    }
    bulk = runs.get("bulk_accept") or {}
    out["B1"] = {
        "name": f"bulk: one {BULK_ITEMS}-item request accepted, median (ms)",
        "value": bulk.get("median_ms"),
        "detail": f"{bulk.get('requests', 0)} requests: "
        + ", ".join(fmt(ms, 0) for ms in bulk.get("each_ms", []))
        + f" ms; {bulk.get('accepted', 0)} payouts accepted",
        "target": "none set",
        "reached": None,
    }
    for key, (op, target) in TARGETS.items():
        value = out[key]["value"]
        out[key]["target"] = f"{op} {target}"
        out[key]["reached"] = (
            None if value is None else (value >= target if op == ">=" else value <= target)
        )
    return out


def fmt(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"
