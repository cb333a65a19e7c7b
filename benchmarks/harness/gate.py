"""The gate after a run: waiting for the worker to settle every payout (the drain after each
load), then the checks that decide pass or fail: the project's own ``reconcile_wallets`` and
``payout_counts``, money invariants in SQL over every wallet and payout, the replay run being
replays only, no 5xx and no unexpected status under load, and exact list totals."""

from __future__ import annotations

import subprocess
import time
from typing import TYPE_CHECKING, Any

from benchmarks.harness.config import PYTHON, ROOT, Config, log
from benchmarks.harness.database import connect, scalar

if TYPE_CHECKING:
    from benchmarks.harness.services import Services

FINAL_OR_AMBIGUOUS = ("successful", "failed", "ambiguous")


def pending_payouts(cfg: Config) -> int:
    return scalar(
        cfg,
        "SELECT count(*) FROM payouts_payout WHERE status <> ALL(%s)",
        (list(FINAL_OR_AMBIGUOUS),),
    )


def drain(cfg: Config, services: Services, *, timeout: int, label: str) -> dict[str, Any]:
    started = time.monotonic()
    first = pending_payouts(cfg)
    remaining = first
    while remaining and time.monotonic() - started < timeout:
        services.check_alive()
        time.sleep(1)
        remaining = pending_payouts(cfg)
    elapsed = time.monotonic() - started
    drained = first - remaining
    log(f"drain after {label}: {drained} payouts settled in {elapsed:.0f}s, {remaining} pending")
    return {
        "settled": drained,
        "seconds": round(elapsed, 1),
        "pending_after": remaining,
        "rate_per_s": round(drained / elapsed, 1) if elapsed > 0.5 and drained else None,
    }


GATE_SQL: dict[str, str] = {
    "no idempotency key has two payouts": """
        SELECT count(*) FROM (
            SELECT 1 FROM payouts_payout GROUP BY wallet_id, idempotency_key HAVING count(*) > 1
        ) AS d""",
    "every payout final or ambiguous after the drain": """
        SELECT count(*) FROM payouts_payout
        WHERE status NOT IN ('successful', 'failed', 'ambiguous')""",
    "available + reserved + captured = funded, balances = ledger (every wallet)": """
        SELECT count(*) FROM wallets_wallet AS w
        LEFT JOIN (
            SELECT wallet_id,
                   sum(amount) FILTER (WHERE entry_type = 'funding') AS funded,
                   sum(amount + fee_amount) FILTER (WHERE entry_type = 'payout_debit')
                       AS captured,
                   sum(available_delta) AS available,
                   sum(reserved_delta) AS reserved
            FROM wallets_ledgerentry GROUP BY wallet_id
        ) AS l ON l.wallet_id = w.id
        WHERE w.available_balance + w.reserved_balance + coalesce(l.captured, 0)
                  <> coalesce(l.funded, 0)
           OR w.available_balance <> coalesce(l.available, 0)
           OR w.reserved_balance <> coalesce(l.reserved, 0)""",
    "each payout has exactly one reservation, each reservation its payout": """
        SELECT count(*) FROM payouts_payout AS p
        FULL JOIN (
            SELECT payout_id, count(*) AS n FROM wallets_ledgerentry
            WHERE entry_type = 'payout_reserve' GROUP BY payout_id
        ) AS r ON r.payout_id = p.id
        WHERE p.id IS NULL OR r.payout_id IS NULL OR r.n <> 1""",
    "successful captured once, failed released once, nothing else settled": """
        SELECT count(*) FROM payouts_payout AS p
        LEFT JOIN (
            SELECT payout_id,
                   count(*) FILTER (WHERE entry_type = 'payout_debit') AS debits,
                   count(*) FILTER (WHERE entry_type = 'payout_reversal') AS reversals
            FROM wallets_ledgerentry WHERE entry_type IN ('payout_debit', 'payout_reversal')
            GROUP BY payout_id
        ) AS s ON s.payout_id = p.id
        WHERE (p.status = 'successful' AND (coalesce(s.debits, 0) <> 1
                                            OR coalesce(s.reversals, 0) <> 0))
           OR (p.status = 'failed' AND (coalesce(s.debits, 0) <> 0
                                        OR coalesce(s.reversals, 0) <> 1))
           OR (p.status NOT IN ('successful', 'failed') AND s.payout_id IS NOT NULL)""",
    "each load-test payout sent to the provider once": """
        SELECT count(*) FROM payouts_sandboxtransfer WHERE initiate_count <> 1""",
}


def gate(cfg: Config, results: dict[str, Any]) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []
    env = {**cfg.service_env("config.settings.production"), "LOG_LEVEL": "WARNING"}
    for command, check in (
        ("reconcile_wallets", "reconcile_wallets passes"),
        ("payout_counts", "payout_counts passes (the list's per-day counts equal a recount)"),
    ):
        finished = subprocess.run(
            [PYTHON, "manage.py", command, "--no-progress"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        checks.append(
            {
                "check": check,
                "ok": finished.returncode == 0,
                "detail": (finished.stdout + finished.stderr).strip().splitlines()[-1:],
            }
        )
    with connect(cfg) as conn:
        for name, sql in GATE_SQL.items():
            bad = conn.execute(sql).fetchone()[0]
            checks.append({"check": name, "ok": bad == 0, "detail": f"{bad} offending row(s)"})
    replay = results["runs"].get("replay")
    if replay:
        checks.append(
            {
                "check": "the replay run was replays only (duplicate=true, no new payout)",
                "ok": bool(replay.get("all_duplicates")),
                "detail": f"{replay.get('duplicates')} duplicates of {replay.get('requests')} "
                f"requests, {replay.get('new_payouts_during_replay')} new payouts",
            }
        )
    errors = {
        name: run_data["server_errors"]
        for name, run_data in results["runs"].items()
        if isinstance(run_data, dict) and run_data.get("server_errors")
    }
    checks.append({"check": "no 5xx under load", "ok": not errors, "detail": errors or "none"})
    unexpected = {
        name: run_data["unexpected"]
        for name, run_data in results["runs"].items()
        if isinstance(run_data, dict) and run_data.get("unexpected")
    }
    checks.append(
        {
            "check": "every load response had the expected status",
            "ok": not unexpected,
            "detail": unexpected or "none",
        }
    )
    for check in checks:
        log(f"gate: {'PASS' if check['ok'] else 'FAIL'} {check['check']} ({check['detail']})")
    return checks


def list_totals_check(results: dict[str, Any]) -> dict[str, Any]:
    """The gate's check that every list answered 200 with the total PostgreSQL counts."""
    totals = results.get("list_totals") or {}
    return {
        "check": "list total exact at page 1 and 100,000 deep",
        "ok": bool(totals) and all(t["exact"] and t["status"] == 200 for t in totals.values()),
        "detail": {name: f"{t['total']} (SQL {t['expected_total']})" for name, t in totals.items()},
    }
