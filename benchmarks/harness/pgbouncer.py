"""The service through PgBouncer in transaction mode, beside direct connections.

By default (``BENCH_PGBOUNCER`` unset) ``make bench`` ends with a pair of create runs on 1,000
wallets (``create_spread``'s load), minutes apart on the same database: ``pair_direct_…`` on
the service as measured so far, then ``pair_pgbouncer_…`` on gunicorn and the Procfile's workers
restarted with ``DATABASE_URL`` pointing at a private PgBouncer (``scripts/pgbouncer.py``:
``pool_mode = transaction``, a pool of ``BENCH_PGBOUNCER_POOL_SIZE`` server connections, 2 ×
cores by default) and ``DATABASE_TRANSACTION_POOLING=1``. Each run records the PostgreSQL
backends of the database after it, the pgbouncer run PgBouncer's own CPU per request, and the
pair its throughput and latency ratios (``results["pgbouncer"]``). ``BENCH_PGBOUNCER=1`` runs the
whole bench through PgBouncer instead (no pair); ``BENCH_PGBOUNCER=0`` leaves it out. Where
PgBouncer cannot be installed or started the pair is skipped with the reason (the gate does not
fail for it). The pgbouncer run's service logs are ``var/bench/pgbouncer-<name>.log``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from benchmarks.harness.config import PAYOUTS_PATH, WORK, Config, env_int, log
from benchmarks.harness.cpu import CLOCK_TICKS
from benchmarks.harness.database import scalar
from benchmarks.harness.gate import drain
from benchmarks.harness.load import Run, wrk
from benchmarks.harness.services import Services, wait_ready
from scripts import pgbouncer as pooler

MODE = os.environ.get("BENCH_PGBOUNCER", "")  # "": the pair; "1": every run; "0": none
PAIR_RUN = "create_spread"
WARMUP_SECONDS = 3


@dataclass
class PooledConfig(Config):
    """The bench's configuration with the service's processes connecting through PgBouncer;
    the bench's own queries (drains, gate, counts) still go to PostgreSQL directly."""

    pooled_url: str = ""

    def service_env(self, settings_module: str) -> dict[str, str]:
        return {
            **super().service_env(settings_module),
            "DATABASE_URL": self.pooled_url,
            "DATABASE_TRANSACTION_POOLING": "1",
        }


@dataclass
class PgBouncer:
    """A private PgBouncer in front of the bench database."""

    directory: Path
    url: str
    pool_size: int

    @classmethod
    def start(cls, cfg: Config) -> PgBouncer:
        # Under /tmp: under root PgBouncer runs as nobody, which must reach its directory.
        directory = Path(tempfile.mkdtemp(prefix="pgbouncer-bench-"))
        pool_size = env_int("BENCH_PGBOUNCER_POOL_SIZE", pooler.pool_size_default())
        try:
            url = pooler.start(directory, upstream=cfg.database_url(), pool_size=pool_size)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        log(f"PgBouncer (transaction mode, pool {pool_size}) at {url}")
        return cls(directory=directory, url=url, pool_size=pool_size)

    def stop(self) -> None:
        pooler.stop(self.directory)
        shutil.rmtree(self.directory, ignore_errors=True)

    def cpu_ticks(self) -> int:
        """PgBouncer's CPU ticks so far (it is one process)."""
        pid = pooler.pid(self.directory)
        if pid is None:
            return 0
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields_after = stat[stat.rindex(")") + 2 :].split()
        return int(fields_after[11]) + int(fields_after[12])


def pooled_config(cfg: Config, bouncer: PgBouncer) -> PooledConfig:
    values = {item.name: getattr(cfg, item.name) for item in fields(cfg)}
    return PooledConfig(**values, pooled_url=bouncer.url)


def start_if_everything(cfg: Config, results: dict[str, Any]) -> tuple[Config, PgBouncer | None]:
    """``BENCH_PGBOUNCER=1``: starts PgBouncer and returns the configuration whose services
    connect through it (every run of the bench then does); otherwise ``cfg`` unchanged."""
    if MODE != "1":
        return cfg, None
    bouncer = PgBouncer.start(cfg)
    results["pgbouncer"] = {"mode": "every run", "pool_size": bouncer.pool_size}
    return pooled_config(cfg, bouncer), bouncer


def database_backends(cfg: Config) -> int:
    """PostgreSQL backends connected to the bench database, this query's own left out."""
    return int(
        scalar(
            cfg,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (cfg.database,),
        )
    )


def pair(cfg: Config, services: Services, results: dict[str, Any]) -> None:
    """The create run direct (``services`` as they run) and then through PgBouncer."""
    if MODE in ("0", "1"):
        return
    runs, drains = results["runs"], results["drains"]
    summary: dict[str, Any] = {"mode": "pair", "run": PAIR_RUN}
    results["pgbouncer"] = summary

    def create_run(name: str, duration: int) -> Run:
        return Run(name, "create", PAYOUTS_PATH, "keys-spread.txt", 202, duration, cfg.connections)

    direct = f"pair_direct_{PAIR_RUN}"
    runs[direct] = wrk(cfg, create_run(direct, cfg.duration), services)
    runs[direct]["database_backends_after"] = database_backends(cfg)
    drains[direct] = drain(cfg, services, timeout=cfg.drain_timeout, label=direct)
    services.stop()

    try:
        bouncer = PgBouncer.start(cfg)
    except pooler.PgBouncerError as error:
        summary["skipped"] = str(error)
        log(f"PgBouncer pair skipped: {error}")
        return
    summary["pool_size"] = bouncer.pool_size
    pooled = Services(pooled_config(cfg, bouncer))
    kept = _logs_set_aside()
    try:
        pooled.start_all()
        wait_ready(cfg, pooled)
        wrk(cfg, create_run(f"warmup_pgbouncer_{PAIR_RUN}", WARMUP_SECONDS), pooled)
        name = f"pair_pgbouncer_{PAIR_RUN}"
        ticks_before = bouncer.cpu_ticks()
        runs[name] = wrk(cfg, create_run(name, cfg.duration), pooled)
        ticks = bouncer.cpu_ticks() - ticks_before
        requests = runs[name]["requests"]
        runs[name]["pgbouncer_cpu_ms_per_request"] = (
            round(1000 * ticks / CLOCK_TICKS / requests, 3) if requests else None
        )
        runs[name]["database_backends_after"] = database_backends(cfg)
        drains[name] = drain(cfg, pooled, timeout=cfg.drain_timeout, label=name)
        summary.update(_ratios(runs[direct], runs[name]))
    finally:
        pooled.stop()
        bouncer.stop()
        _logs_restore(kept, pooled)


def _logs_set_aside() -> dict[Path, Path]:
    """The direct services' logs, moved aside so the pgbouncer run's processes (same names)
    do not overwrite them."""
    kept = {}
    for log_file in WORK.glob("*.log"):
        if log_file.name == "wrk.log" or log_file.name.startswith("pgbouncer-"):
            continue
        aside = log_file.with_suffix(".log.direct")
        log_file.rename(aside)
        kept[log_file] = aside
    return kept


def _logs_restore(kept: dict[Path, Path], pooled: Services) -> None:
    for name in pooled.processes:
        log_file = WORK / f"{name}.log"
        if log_file.exists():
            log_file.rename(WORK / f"pgbouncer-{name}.log")
    for original, aside in kept.items():
        aside.rename(original)


def _ratios(direct: dict[str, Any], pooled: dict[str, Any]) -> dict[str, Any]:
    def ratio(key: str) -> float | None:
        return round(pooled[key] / direct[key], 2) if direct.get(key) else None

    return {
        "direct_rps": round(direct["rps"], 1),
        "pgbouncer_rps": round(pooled["rps"], 1),
        "rps_ratio": ratio("rps"),
        "p50_ratio": ratio("p50_ms"),
        "p99_ratio": ratio("p99_ms"),
        "direct_backends": direct.get("database_backends_after"),
        "pgbouncer_backends": pooled.get("database_backends_after"),
        "pgbouncer_cpu_ms_per_request": pooled.get("pgbouncer_cpu_ms_per_request"),
    }


def pgbouncer_markdown(results: dict[str, Any]) -> list[str]:
    """One paragraph for ``latest.md``: the pair's ratios, or why there is none."""
    summary = results.get("pgbouncer") or {}
    if summary.get("mode") == "every run":
        pool = summary["pool_size"]
        return [f"Every run went through PgBouncer (transaction mode, pool {pool})."]
    if summary.get("skipped"):
        return [f"PgBouncer pair skipped: {summary['skipped']}"]
    if "rps_ratio" not in summary:
        return []
    return [
        f"PgBouncer (transaction mode, pool {summary['pool_size']}) beside direct connections, "
        f"{summary['run']}: {summary['pgbouncer_rps']} against {summary['direct_rps']} req/s "
        f"(× {summary['rps_ratio']}), p50 × {summary['p50_ratio']}, p99 × "
        f"{summary['p99_ratio']}; PostgreSQL backends after the run {summary['pgbouncer_backends']}"
        f" against {summary['direct_backends']}; PgBouncer's own CPU "
        f"{summary['pgbouncer_cpu_ms_per_request']} ms per request."
    ]
