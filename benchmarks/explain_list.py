"""Captures the SQL of list requests (through the real view stack) and times each statement with
EXPLAIN ANALYZE: where M8's time goes (the exact total, the page at its offset).

    python -m benchmarks.explain_list --key <secret key> --paths paths.json --out out.json

``paths.json`` maps a label to a request path.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import django


def _indexes(plan: dict[str, Any]) -> list[str]:
    found = [plan["Index Name"]] if "Index Name" in plan else []
    for child in plan.get("Plans", []):
        found.extend(_indexes(child))
    return found


def _kind(sql: str) -> str:
    """``total`` (the per-day counts summed), ``count`` (payouts counted) or ``page``."""
    if "payouts_payoutdailycount" in sql:
        return "total"
    return "count" if "COUNT(" in sql.upper() else "page"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--key", required=True)
    parser.add_argument("--paths", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.bench_settings")
    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")
    report: dict[str, Any] = {}
    for label, path in json.loads(args.paths.read_text()).items():
        client.get(path, HTTP_AUTHORIZATION=f"Bearer {args.key}")  # warm caches and plans
        with CaptureQueriesContext(connection) as captured:
            response = client.get(path, HTTP_AUTHORIZATION=f"Bearer {args.key}")
        statements = []
        for query in captured.captured_queries:
            sql = query["sql"]
            if not sql.lstrip().upper().startswith("SELECT") or "payouts_payout" not in sql:
                continue
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
                plan = cursor.fetchone()[0][0]
            statements.append(
                {
                    "kind": _kind(sql),
                    "execution_ms": round(plan["Execution Time"], 2),
                    "planning_ms": round(plan["Planning Time"], 2),
                    "top_node": plan["Plan"]["Node Type"],
                    "indexes": sorted(set(_indexes(plan["Plan"]))),
                    "sql": sql,
                }
            )
        report[label] = {
            "status": response.status_code,
            "queries": len(captured.captured_queries),
            "statements": statements,
        }
    args.out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
