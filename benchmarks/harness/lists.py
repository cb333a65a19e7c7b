"""The list figures' requests (M8 and L1): the three list variants (no filter, status, a date
window) at page 1 and 100,000 rows deep on the wallet with the long history, with the exact
total PostgreSQL counts for each; and EXPLAIN ANALYZE of the SQL the ORM sends for them
(``benchmarks.explain_list``)."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

from benchmarks.harness.config import PAYOUTS_PATH, PYTHON, WORK, Config, run
from benchmarks.harness.database import connect

DEEP_ROWS = 100_000
LIST_LIMIT = 50


def list_queries(cfg: Config) -> dict[str, dict[str, Any]]:
    """The three list variants of M8, each at page 1 and 100,000 rows deep, with the exact
    ``total`` PostgreSQL counts for them."""
    with connect(cfg) as conn:
        newest, oldest = conn.execute(
            "SELECT max(created_at), min(created_at) FROM payouts_payout WHERE wallet_id = %s",
            (cfg.list_merchant,),
        ).fetchone()
    span = newest - oldest
    # A date window over the middle ~60% of the wallet's history.
    start = (oldest + span * 0.2).astimezone(UTC)
    end = (oldest + span * 0.8).astimezone(UTC)
    from_date, to_date = start.strftime("%Y-%m-%d"), end.strftime("%Y-%m-%d")
    variants = {
        "all": ("", "SELECT count(*) FROM payouts_payout WHERE wallet_id = %s", ()),
        "status": (
            "&status=failed",
            "SELECT count(*) FROM payouts_payout WHERE wallet_id = %s AND status = 'failed'",
            (),
        ),
        "dates": (
            f"&from_date={from_date}&to_date={to_date}",
            "SELECT count(*) FROM payouts_payout WHERE wallet_id = %s "
            "AND created_at >= (%s::date::timestamp AT TIME ZONE 'Africa/Lagos') "
            "AND created_at < ((%s::date + 1)::timestamp AT TIME ZONE 'Africa/Lagos')",
            (from_date, to_date),
        ),
    }
    deep_page = DEEP_ROWS // LIST_LIMIT + 1
    out: dict[str, dict[str, Any]] = {}
    with connect(cfg) as conn:
        for name, (query, count_sql, extra) in variants.items():
            total = conn.execute(count_sql, (cfg.list_merchant, *extra)).fetchone()[0]
            out[name] = {
                "page1": f"{PAYOUTS_PATH}?page=1&limit={LIST_LIMIT}{query}",
                "deep": f"{PAYOUTS_PATH}?page={deep_page}&limit={LIST_LIMIT}{query}",
                "expected_total": total,
            }
    return out


def explain_list(cfg: Config, variants: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """EXPLAIN ANALYZE of each list request's SQL, captured from the ORM."""
    paths = {
        f"{variant}_{depth}": spec[depth]
        for variant, spec in variants.items()
        for depth in ("page1", "deep")
    }
    paths_file, out = WORK / "list-paths.json", WORK / "list-explain.json"
    paths_file.write_text(json.dumps(paths))
    try:
        run(
            [
                PYTHON,
                "-m",
                "benchmarks.explain_list",
                "--key",
                cfg.key(cfg.list_merchant),
                "--paths",
                str(paths_file),
                "--out",
                str(out),
            ],
            env={**cfg.service_env("benchmarks.bench_settings"), "LOG_LEVEL": "WARNING"},
        )
    except RuntimeError as error:
        return {"error": str(error)[-500:]}
    report = json.loads(out.read_text())
    for entry in report.values():
        for statement in entry["statements"]:
            statement.pop("sql", None)
    return report
