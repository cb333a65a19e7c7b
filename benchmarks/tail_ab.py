"""The tail figure (M10) for several settings of the stack, alternated on one database, so a noisy
shared machine weighs on every setting alike.

``python -m benchmarks.tail_ab --rounds 2 --variant same:BENCH_WORKER_NICE=0 --variant nice``
prepares the bench database once (``benchmarks.harness.database``, sized by BENCH_WALLETS and
BENCH_PAYOUTS as ``make bench``), then, round after round, for each variant in turn: starts the
service with the variant's environment (``NAME=VALUE`` pairs joined by ``,``; WEB_CONCURRENCY,
GUNICORN_THREADS, CELERY_CONCURRENCY, BENCH_WEB_CPUS, BENCH_WORKER_CPUS and BENCH_WORKER_NICE set
the harness's own settings, anything else reaches the service's processes), runs creates closed loop
for the maximum rate, then open loop at 70 % of it (or at ``--rate`` for every variant, without the
closed loop), traced (``benchmarks/trace.py``), drains the worker and stops. It prints one line per
run (p50, p99, M10 and the phases of the slowest 1 %) and writes every figure to
``var/bench/tail_ab.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

from benchmarks.harness.config import PAYOUTS_PATH, WORK, Config, free_port, log
from benchmarks.harness.database import flush_redis, prepare_database
from benchmarks.harness.gate import drain
from benchmarks.harness.load import Run, trace_tag, wrk
from benchmarks.harness.services import Services, wait_ready
from benchmarks.harness.tail import breakdown, clear_traces, read_traces

CONFIG_FIELDS = {
    "WEB_CONCURRENCY": ("web_concurrency", int),
    "GUNICORN_THREADS": ("web_threads", int),
    "CELERY_CONCURRENCY": ("celery_concurrency", int),
    "BENCH_WEB_CPUS": ("web_cpus", str),
    "BENCH_WORKER_CPUS": ("worker_cpus", str),
    "BENCH_WORKER_NICE": ("worker_nice", int),
}
SHOWN_PHASES = ("queue", "auth", "throttle", "lock", "commit", "on_commit", "gc", "off_cpu")


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    name, _, pairs = text.partition(":")
    overrides = dict(pair.split("=", 1) for pair in pairs.split(",") if pair)
    return name, overrides


def run_variant(
    base: Config, name: str, overrides: dict[str, str], duration: int, fixed_rate: float = 0.0
) -> dict[str, Any]:
    cfg = Config(**{k: v for k, v in vars(base).items() if k in Config.__dataclass_fields__})
    saved = dict(os.environ)
    for key, value in overrides.items():
        if key in CONFIG_FIELDS:
            attribute, kind = CONFIG_FIELDS[key]
            setattr(cfg, attribute, kind(value))
        os.environ[key] = value
    services = Services(cfg)
    try:
        services.start_all()
        wait_ready(cfg, services)
        c = cfg.connections
        unique = f"{name}-{free_port()}-{cfg.salt}"  # fresh idempotency keys every run
        warmup = Run("warmup", "create", PAYOUTS_PATH, "keys-spread.txt", 202, 3, c)
        warmup.tag = f"warmup-{unique}"
        wrk(cfg, warmup, services)
        closed: dict[str, Any] = {"rps": 0.0, "cpu": None}
        if not fixed_rate:
            spread = Run(
                "create_spread", "create", PAYOUTS_PATH, "keys-spread.txt", 202, duration, c
            )
            spread.tag = f"closed-{unique}"
            closed = wrk(cfg, spread, services)
            drain(cfg, services, timeout=120, label=f"{name} closed loop")
        rate = fixed_rate or round(0.7 * closed["rps"], 1)
        spec = Run(
            "create_open_loop",
            "create",
            PAYOUTS_PATH,
            "keys-spread.txt",
            202,
            duration,
            max(c, math.ceil(rate * 0.5)),
            rate=rate,
            trace=True,
            tag=f"open-{unique}",
        )
        clear_traces()
        opened = wrk(cfg, spec, services)
        drain(cfg, services, timeout=120, label=f"{name} open loop")
    finally:
        services.stop()
        os.environ.clear()
        os.environ.update(saved)
    tail = breakdown(read_traces(trace_tag(cfg, spec)))
    return {
        "variant": name,
        "overrides": overrides,
        "closed_rps": closed["rps"],
        "rate": rate,
        "rps": opened["rps"],
        "p50_ms": opened["p50_ms"],
        "p99_ms": opened["p99_ms"],
        "m10": opened["p99_ms"] / opened["p50_ms"] if opened["p50_ms"] else None,
        "late_sends": opened["late_sends"],
        "cpu": opened["cpu"],
        "closed_cpu": closed["cpu"],
        "load_average_1m": opened["load_average_1m"],
        "tail": tail,
    }


def line(result: dict[str, Any]) -> str:
    phases = result["tail"].get("phases") or {}
    slow = " ".join(
        f"{phase} {phases[phase]['p50_ms']:.0f}/{phases[phase]['slowest_1pct_mean_ms']:.0f}"
        for phase in SHOWN_PHASES
        if phase in phases
    )
    m10 = result["m10"]
    return (
        f"{result['variant']:<12} max {result['closed_rps']:6.1f}/s open {result['rps']:6.1f}/s "
        f"p50 {result['p50_ms']:6.1f} p99 {result['p99_ms']:6.1f} M10 "
        f"{m10 if m10 is None else round(m10, 2)} late {result['late_sends']} "
        f"load {result['load_average_1m']} | p50/slowest-1% ms: {slow}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", action="append", default=[], help="name:ENV=V,ENV=V")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--duration", type=int, default=int(os.environ.get("BENCH_DURATION", 8)))
    parser.add_argument("--rate", type=float, default=0.0, help="fixed open-loop rate")
    parser.add_argument("--skip-prepare", action="store_true", help="reuse the database")
    args = parser.parse_args(argv)
    variants = [parse_variant(text) for text in args.variant or ["base"]]
    cfg = Config()
    cfg.port = free_port()
    salt_file = WORK / "tail_ab.salt"  # the seeded keys' salt, for --skip-prepare
    if args.skip_prepare:
        cfg.salt = salt_file.read_text().strip()
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "wrk.log").write_text("")
    flush_redis(cfg)
    if not args.skip_prepare:
        prepare_database(cfg)
        salt_file.write_text(cfg.salt)
    results: list[dict[str, Any]] = []
    for round_number in range(1, args.rounds + 1):
        for name, overrides in variants:
            log(f"round {round_number}: {name} {overrides}")
            result = run_variant(cfg, name, overrides, args.duration, args.rate)
            result["round"] = round_number
            results.append(result)
            log(line(result))
            (WORK / "tail_ab.json").write_text(json.dumps(results, indent=2) + "\n")
    print()
    for result in results:
        print(f"round {result['round']} {line(result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
