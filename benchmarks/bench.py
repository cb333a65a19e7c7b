"""`make bench`: the service with production settings on loopback, driven by wrk, measured against
PostgreSQL's own limit on this machine. Every figure is a ratio of two runs made here, minutes
apart, so it holds on a noisy machine.

Steps: a fresh ``bench`` database (migrated, then filled with SQL: 1,000 funded wallets and one
wallet with 1,000,000 payouts); the SQL of one create captured from the ORM and replayed by pgbench
on a copy of that database (M1's denominator); gunicorn + the Procfile's Celery workers (the money
``worker`` and the ``webhooks`` pool, each on its queues) on Redis, or on RabbitMQ with
BENCH_BROKER=rabbitmq (``benchmarks/harness/broker.py``); wrk runs (M1, M3, M4, M7, M8,
M10, the last traced phase by phase); a py-spy profile of the create path; with the service stopped,
the cost of a payout in statements, WAL bytes, CPU and wallet lock hold
(``benchmarks/capacity.py``); the gate once the worker has drained. Results:
``benchmarks/results/latest.json`` and ``latest.md``. This module runs the steps in order; each
lives in ``benchmarks/harness/`` (see its ``__init__``). ``--help`` prints this text and runs
nothing.

Environment (all optional): BENCH_PG_HOST/PORT/USER (127.0.0.1, 5432, postgres), BENCH_DATABASE
(bench; its pgbench copy is <name>_pgbench), BENCH_REDIS_URL (redis://127.0.0.1:6379/10),
BENCH_BROKER (redis; or rabbitmq, at BENCH_RABBITMQ_URL, amqp://guest:guest@127.0.0.1:5672//),
BENCH_DURATION (seconds per run, 12), BENCH_LIST_DURATION (8), BENCH_CONNECTIONS (16), BENCH_WALLETS
(1000), BENCH_PAYOUTS (1000000), WEB_CONCURRENCY (cores), GUNICORN_THREADS (4), CELERY_CONCURRENCY
(the money worker's pool, cores; the webhooks pool takes WEBHOOK_WORKER_CONCURRENCY as the Procfile
does), BENCH_DRAIN_TIMEOUT (240), BENCH_PROFILE (1; 0 skips py-spy), BENCH_WAIT_QUIET_SECONDS (0:
start at once; else wait up to that long for the load average to fall below half the cores),
BENCH_WEB_CPUS and BENCH_WORKER_CPUS (a taskset CPU list each, e.g. 0 and 1: gunicorn and the
workers on their own cores; default: both on every core), BENCH_WORKER_NICE (10: the workers at a
lower CPU priority than the web; 0 at the same), BENCH_TRACE (1; 0 leaves the trace middleware out),
BENCH_CAPACITY_PAYOUTS (200; 0 skips benchmarks/capacity.py). A short smoke run: BENCH_DURATION=2
BENCH_LIST_DURATION=1 BENCH_WALLETS=20 BENCH_PAYOUTS=2000 BENCH_PROFILE=0 (figures meaningless, gate
meaningful).

PgBouncer (``benchmarks/harness/pgbouncer.py``): by default the bench ends with a pair of create
runs, direct and then through a private PgBouncer in transaction mode; BENCH_PGBOUNCER=1 runs
every step through it instead, BENCH_PGBOUNCER=0 leaves it out; BENCH_PGBOUNCER_POOL_SIZE (2 ×
cores) is its pool.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from typing import Any

from benchmarks.harness.broker import broker_cleanup, broker_describe
from benchmarks.harness.config import RESULTS_DIR, WORK, Config, env_int, free_port, log
from benchmarks.harness.costs import capacity
from benchmarks.harness.database import flush_redis, prepare_database
from benchmarks.harness.gate import gate, list_totals_check
from benchmarks.harness.measure import measure
from benchmarks.harness.metrics import metrics
from benchmarks.harness.pgbench import capture_and_pgbench
from benchmarks.harness.pgbouncer import pair, start_if_everything
from benchmarks.harness.report import machine, versions, write_results
from benchmarks.harness.services import Services, wait_ready


def wait_quiet(cfg: Config) -> None:
    """BENCH_WAIT_QUIET_SECONDS > 0: first wait (up to that long) until the machine's 1-minute
    load average is below half its cores, so other work on a shared machine weighs less."""
    limit = env_int("BENCH_WAIT_QUIET_SECONDS", 0)
    if limit <= 0:
        return
    deadline = time.monotonic() + limit
    while os.getloadavg()[0] >= cfg.cores / 2 and time.monotonic() < deadline:
        log(f"waiting for a quieter machine (load average {os.getloadavg()[0]:.2f})")
        time.sleep(15)


def main(argv: list[str] | None = None) -> int:
    if {"-h", "--help"} & set(sys.argv[1:] if argv is None else argv):
        print(__doc__)
        return 0
    cfg = Config()
    cfg.port = free_port()
    WORK.mkdir(parents=True, exist_ok=True)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (WORK / "wrk.log").write_text("")
    results: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "config": {
            "web_concurrency": cfg.web_concurrency,
            "worker_class": os.environ.get("GUNICORN_WORKER_CLASS", "config.web.WebWorker"),
            "worker_threads": cfg.web_threads,
            "celery_concurrency": cfg.celery_concurrency,
            "connections": cfg.connections,
            "threads": cfg.threads,
            "duration": cfg.duration,
            "list_duration": cfg.list_duration,
            "wallets": cfg.wallets,
            "list_wallet_payouts": cfg.payouts,
            "settings": "benchmarks.bench_settings (config.settings.production + /bench/noop)",
            "web_cpus": cfg.web_cpus or "all",
            "worker_cpus": cfg.worker_cpus or "all",
            "broker": broker_describe(cfg),
        },
        "runs": {},
        "drains": {},
    }
    log(
        f"{cfg.cores} cores, load average {os.getloadavg()[0]:.2f}; web on port {cfg.port}, "
        f"{cfg.web_concurrency} gunicorn workers, {cfg.connections} connections"
    )
    wait_quiet(cfg)
    results["machine"]["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    services_cfg, bouncer = start_if_everything(cfg, results)
    services = Services(services_cfg)
    error: str | None = None
    started = time.monotonic()
    try:
        flush_redis(cfg)
        prepare_database(cfg)
        capture_and_pgbench(cfg, results)
        services.start_all()
        wait_ready(cfg, services)
        measure(cfg, services, results)
        pair(cfg, services, results)
    except Exception as exc:  # noqa: BLE001 - reported, and the gate still runs
        error = f"{type(exc).__name__}: {exc}"
        log(f"ERROR {error}")
    finally:
        services.stop()
        broker_cleanup(cfg)
        if bouncer is not None:
            bouncer.stop()
    if not error:
        try:
            capacity(cfg, results)
        except Exception as exc:  # noqa: BLE001 - reported, and the gate still runs
            error = f"capacity: {type(exc).__name__}: {exc}"
            log(f"ERROR {error}")
    results["versions"] = versions(cfg)
    try:
        results["gate"] = gate(cfg, results)
    except Exception as exc:  # noqa: BLE001
        results["gate"] = [{"check": "gate ran", "ok": False, "detail": str(exc)}]
    if error:
        results["gate"].append({"check": "benchmark completed", "ok": False, "detail": error})
    results["gate"].append(list_totals_check(results))
    results["metrics"] = metrics(results)
    results["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    results["elapsed_s"] = round(time.monotonic() - started)
    results["gate_passed"] = all(check["ok"] for check in results["gate"])
    text = write_results(results)
    print()
    print(text)
    verdict = "passed" if results["gate_passed"] else "FAILED"
    log(f"finished in {results['elapsed_s']}s; gate {verdict}")
    return 0 if results["gate_passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
