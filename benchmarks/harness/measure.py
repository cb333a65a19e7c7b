"""The measured runs, in order, each figure's inputs recorded under ``results["runs"]``: warm-up,
the no-op POST (M4), creates over 1,000 wallets (M1, C1) and on one wallet (M3), idempotent
replays of a primed pool (M7), the lists one connection at a time (M8, L1), creates open loop at
~70% of the closed-loop rate (M10), 500-item bulk requests (B1), then the py-spy profile; the
worker drained after each load."""

from __future__ import annotations

import json
import math
import time
from typing import Any

from benchmarks.harness.config import (
    BULK_ITEMS,
    BULK_REQUESTS,
    NOOP_PATH,
    PAYOUTS_PATH,
    Config,
    log,
)
from benchmarks.harness.database import scalar
from benchmarks.harness.gate import drain
from benchmarks.harness.lists import explain_list, list_queries
from benchmarks.harness.load import Run, http_get_json, http_post_json, trace_tag, wrk
from benchmarks.harness.pyspy import profile_create
from benchmarks.harness.services import Services
from benchmarks.harness.tail import breakdown, clear_traces, read_traces


def measure(cfg: Config, services: Services, results: dict[str, Any]) -> None:
    runs = results["runs"]
    drains = results["drains"]
    c, d = cfg.connections, cfg.duration

    def go(spec: Run) -> dict[str, Any]:
        return wrk(cfg, spec, services)

    def settle(label: str) -> None:
        drains[label] = drain(cfg, services, timeout=cfg.drain_timeout, label=label)

    go(Run("warmup", "create", PAYOUTS_PATH, "keys-spread.txt", 202, cfg.warmup, c))
    go(Run("warmup_noop", "noop", NOOP_PATH, "keys-spread.txt", 202, cfg.warmup, c))
    settle("warmup")

    runs["noop"] = go(Run("noop", "noop", NOOP_PATH, "keys-spread.txt", 202, d, c))

    runs["create_spread"] = go(
        Run("create_spread", "create", PAYOUTS_PATH, "keys-spread.txt", 202, d, c)
    )
    settle("create_spread")

    runs["create_hot"] = go(Run("create_hot", "create", PAYOUTS_PATH, "keys-hot.txt", 202, d, c))
    settle("create_hot")

    # Replays: every key of the pool is created first (once, and drained), so the measured run
    # is replays only.
    pool = min(cfg.wallets, 200)
    replay_tag = f"replay-{cfg.salt}"
    like = (f"{replay_tag}-%",)
    primed_statuses = prime_replay_pool(cfg, tag=replay_tag, pool=pool)
    primed = scalar(cfg, "SELECT count(*) FROM payouts_payout WHERE idempotency_key LIKE %s", like)
    settle("replay_prime")
    runs["replay"] = go(
        Run(
            "replay",
            "replay",
            PAYOUTS_PATH,
            "keys-spread.txt",
            202,
            d,
            c,
            replay_pool=pool,
            tag=replay_tag,
        )
    )
    after = scalar(cfg, "SELECT count(*) FROM payouts_payout WHERE idempotency_key LIKE %s", like)
    runs["replay"]["pool"] = primed
    runs["replay"]["prime_statuses"] = primed_statuses
    runs["replay"]["new_payouts_during_replay"] = after - primed
    runs["replay"]["all_duplicates"] = (
        runs["replay"]["duplicates"] == runs["replay"]["requests"] and after == primed == pool
    )

    # Latency, not queueing: one connection at a time on the 1,000,000-payout wallet.
    list_key = cfg.key(cfg.list_merchant)
    results["list_totals"] = {}
    for variant, paths in list_queries(cfg).items():
        for depth in ("page1", "deep"):
            status, body = http_get_json(cfg, paths[depth], list_key)
            page = body.get("data") or {}
            total = (page.get("pagination") or {}).get("total")
            results["list_totals"][f"{variant}_{depth}"] = {
                "status": status,
                "total": total,
                "expected_total": paths["expected_total"],
                "exact": total == paths["expected_total"],
                "items": len(page.get("items") or []),
            }
            runs[f"list_{variant}_{depth}"] = go(
                Run(
                    f"list_{variant}_{depth}",
                    "list",
                    paths[depth],
                    "keys-list.txt",
                    200,
                    cfg.list_duration,
                    1,
                    threads=1,
                )
            )
    results["list_sql"] = explain_list(cfg, {v: p for v, p in list_queries(cfg).items()})

    rate = round(0.7 * runs["create_spread"]["rps"], 1)
    # Enough connections that a free one is always waiting for the next send slot.
    open_connections = max(c, math.ceil(rate * 0.5))
    # Traced (benchmarks/trace.py): the table of where its time goes, p50 against p99.
    open_loop = Run(
        "create_open_loop",
        "create",
        PAYOUTS_PATH,
        "keys-spread.txt",
        202,
        d,
        open_connections,
        rate=rate,
        trace=True,
    )
    clear_traces()
    runs["create_open_loop"] = go(open_loop)
    results["tail_breakdown"] = {
        "run": "create_open_loop",
        **breakdown(read_traces(trace_tag(cfg, open_loop))),
    }
    settle("open_loop")

    runs["bulk_accept"] = bulk_accept(cfg)
    settle("bulk")

    profile_create(cfg, services, results)
    settle("final")


def prime_replay_pool(cfg: Config, *, tag: str, pool: int) -> dict[int, int]:
    """Creates the replay pool's payouts, one request per key, with the exact body the wrk
    script replays (benchmarks/lua/bench.lua): key i goes with wallet i."""
    from concurrent.futures import ThreadPoolExecutor

    def create(index: int) -> int:
        body = json.dumps(
            {
                "account_number": "0123456789",
                "bank_code": "058",
                "amount": "100.00",
                "narration": "bench",
                "idempotency_key": f"{tag}-{index}",
            },
            separators=(",", ":"),
        ).encode()
        return http_post_json(cfg, PAYOUTS_PATH, cfg.key(index), body)[0]

    with ThreadPoolExecutor(max_workers=cfg.web_concurrency) as executor:
        statuses = list(executor.map(create, range(1, pool + 1)))
    counts: dict[int, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    log(f"replay pool: {pool} payouts created ({counts})")
    return counts


def bulk_accept(cfg: Config) -> dict[str, Any]:
    """Times BULK_REQUESTS bulk requests of BULK_ITEMS payouts each, one at a time, each to its
    own funded wallet: how long a merchant waits for a 500-item batch to be accepted."""
    each_ms: list[float] = []
    accepted = 0
    statuses: dict[int, int] = {}
    for request_number in range(1, BULK_REQUESTS + 1):
        merchant = request_number
        items = [
            {
                "account_number": "0123456789",
                "bank_code": "058",
                "amount": "100.00",
                "idempotency_key": f"bulk-{cfg.salt}-{request_number}-{index}",
            }
            for index in range(BULK_ITEMS)
        ]
        body = json.dumps(
            {"batch_reference": f"bulk-{cfg.salt}-{request_number}", "items": items}
        ).encode()
        started = time.perf_counter()
        status, answer = http_post_json(cfg, f"{PAYOUTS_PATH}/bulk", cfg.key(merchant), body)
        each_ms.append(round((time.perf_counter() - started) * 1000, 1))
        statuses[status] = statuses.get(status, 0) + 1
        accepted += ((answer.get("data") or {}).get("batch") or {}).get("accepted") or 0
    ordered = sorted(each_ms)
    median = ordered[len(ordered) // 2] if ordered else None
    log(f"bulk: {BULK_REQUESTS} × {BULK_ITEMS} items, median {median} ms, {accepted} accepted")
    return {
        "requests": len(each_ms),
        "items_per_request": BULK_ITEMS,
        "each_ms": each_ms,
        "median_ms": median,
        "accepted": accepted,
        "statuses": statuses,
    }
