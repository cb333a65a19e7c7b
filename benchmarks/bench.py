"""`make bench`: the service with production settings on loopback, driven by wrk, measured
against PostgreSQL's own limit on this machine. Every figure is a ratio of two runs made here,
minutes apart, so it holds on a noisy machine.

Steps: a fresh ``bench`` database (migrated, then filled with SQL: 1,000 funded wallets and one
wallet with 1,000,000 payouts); the SQL of one create captured from the ORM and replayed by
pgbench on a copy of that database (M1's denominator); gunicorn + a Celery worker on Redis;
wrk runs (M1, M3, M4, M7, M8, M10); a py-spy profile of the create path; the gate once the
worker has drained. Results: ``benchmarks/results/latest.json`` and ``latest.md``.

Environment (all optional): BENCH_PG_HOST/PORT/USER (127.0.0.1, 5432, postgres),
BENCH_REDIS_URL (redis://127.0.0.1:6379/10), BENCH_DURATION (seconds per run, 12),
BENCH_LIST_DURATION (8), BENCH_CONNECTIONS (16), BENCH_WALLETS (1000), BENCH_PAYOUTS
(1000000), WEB_CONCURRENCY (2 × cores + 1), CELERY_CONCURRENCY (cores), BENCH_DRAIN_TIMEOUT
(240), BENCH_PROFILE (1; 0 skips py-spy), BENCH_WAIT_QUIET_SECONDS (0: start at once; else wait
up to that long for the load average to fall below half the cores), BENCH_WEB_CPUS and
BENCH_WORKER_CPUS (a taskset CPU list each, e.g. 0 and 1: gunicorn and the worker on their own
cores; default: both on every core).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "benchmarks"
RESULTS_DIR = BENCH_DIR / "results"
WORK = ROOT / "var" / "bench"
LUA = BENCH_DIR / "lua" / "bench.lua"
VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python")

PAYOUTS_PATH = "/api/v1/transactions/in/merchant-wallet/payouts"
NOOP_PATH = "/bench/noop"
DEEP_ROWS = 100_000
LIST_LIMIT = 50
FINAL_OR_AMBIGUOUS = ("successful", "failed", "ambiguous")

TARGETS = {  # informational, not the gate
    "M1": (">=", 0.15),
    "M1b": (">=", 0.15),
    "M3": (">=", 0.7),
    "M4": (">=", 0.3),
    "M7": (">=", 1.5),
    "M8": ("<=", 3.0),
    "M10": ("<=", 2.0),
    "C1": ("<=", 12.0),
    "L1": ("<=", 10.0),
}
METRIC_ORDER = ("M1", "M1b", "M3", "M4", "M7", "M8", "M10", "C1", "L1", "B1")
BULK_ITEMS = 500
BULK_REQUESTS = 5


def log(message: str) -> None:
    print(f"[bench {datetime.now(UTC):%H:%M:%S}] {message}", flush=True)


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


@dataclass
class Config:
    pg_host: str = os.environ.get("BENCH_PG_HOST", "127.0.0.1")
    pg_port: int = _env_int("BENCH_PG_PORT", 5432)
    pg_user: str = os.environ.get("BENCH_PG_USER", "postgres")
    database: str = "bench"
    pgbench_database: str = "bench_pgbench"
    redis_url: str = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/10")
    duration: int = _env_int("BENCH_DURATION", 12)
    list_duration: int = _env_int("BENCH_LIST_DURATION", 8)
    warmup: int = 3
    connections: int = _env_int("BENCH_CONNECTIONS", 16)
    wallets: int = _env_int("BENCH_WALLETS", 1000)
    payouts: int = _env_int("BENCH_PAYOUTS", 1_000_000)
    cores: int = os.cpu_count() or 1
    web_concurrency: int = _env_int("WEB_CONCURRENCY", 2 * (os.cpu_count() or 1) + 1)
    celery_concurrency: int = _env_int("CELERY_CONCURRENCY", os.cpu_count() or 1)
    drain_timeout: int = _env_int("BENCH_DRAIN_TIMEOUT", 240)
    profile: bool = os.environ.get("BENCH_PROFILE", "1") != "0"
    web_cpus: str = os.environ.get("BENCH_WEB_CPUS", "")
    worker_cpus: str = os.environ.get("BENCH_WORKER_CPUS", "")
    salt: str = field(default_factory=lambda: secrets.token_hex(6))
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(40))
    field_encryption_key: str = field(default_factory=lambda: Fernet.generate_key().decode())
    port: int = 0

    @property
    def threads(self) -> int:
        return max(1, min(self.cores, 4))

    @property
    def list_merchant(self) -> int:
        return self.wallets + 1

    def dsn(self, database: str | None = None) -> str:
        return (
            f"postgresql://{self.pg_user}@{self.pg_host}:{self.pg_port}/{database or self.database}"
        )

    def database_url(self) -> str:
        return f"postgres://{self.pg_user}@{self.pg_host}:{self.pg_port}/{self.database}"

    def key(self, merchant: int) -> str:
        return f"sk_test_bench_{merchant}_{self.salt}"

    def service_env(self, settings_module: str) -> dict[str, str]:
        high = "100000000/s"  # rate limits far above anything this machine can send
        return {
            **os.environ,
            "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}",
            "DJANGO_SETTINGS_MODULE": settings_module,
            "DEBUG": "0",
            "SECRET_KEY": self.secret_key,
            "DATABASE_URL": self.database_url(),
            "CELERY_BROKER_URL": self.redis_url,
            "CACHE_URL": self.redis_url,
            "THROTTLE_RATE_READ": high,
            "THROTTLE_RATE_WRITE": high,
            "THROTTLE_RATE_NAME_ENQUIRY": high,
            "THROTTLE_RATE_PAYOUT_BULK": high,
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            # Production's start-up checks: a real funding secret and encryption key, and no
            # live provider that would need a Paystack key (the benchmark uses test keys only).
            # Plain HTTP on loopback, so no redirect to HTTPS.
            "FUNDING_WEBHOOK_SECRET": f"bench-funding-{self.salt}",
            "FIELD_ENCRYPTION_KEYS": self.field_encryption_key,
            "PAYOUT_PROVIDER_LIVE": "sandbox",
            "COLLECTION_PROVIDER_LIVE": "sandbox",
            "SECURE_SSL_REDIRECT": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "VAR_DIR": str(WORK / "var"),
            "PYTHONUNBUFFERED": "1",
        }


# --- Processes -------------------------------------------------------------------------------


class Services:
    """gunicorn and the Celery worker, each in its own process group."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.processes: dict[str, subprocess.Popen] = {}
        self.logs: list[Any] = []

    def start(self, name: str, command: list[str], env: dict[str, str]) -> subprocess.Popen:
        cpus = self.cfg.web_cpus if name == "web" else self.cfg.worker_cpus
        if cpus:
            # BENCH_WEB_CPUS / BENCH_WORKER_CPUS: pin each side to its own cores (taskset), so
            # the web's own ceiling shows without the worker competing for the same cores.
            command = ["taskset", "-c", cpus, *command]
        handle = (WORK / f"{name}.log").open("w")
        self.logs.append(handle)
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes[name] = process
        return process

    def start_all(self) -> None:
        cfg = self.cfg
        self.start(
            "worker",
            [
                str(VENV_BIN / "celery"),
                "-A",
                "config.celery_app",
                "worker",
                "--loglevel=INFO",
                f"--concurrency={cfg.celery_concurrency}",
                "--without-gossip",
                "--without-mingle",
            ],
            cfg.service_env("config.settings.production"),
        )
        self.start(
            "web",
            [str(VENV_BIN / "gunicorn"), "config.wsgi:application", "-c", "config/gunicorn.py"],
            {
                **cfg.service_env("benchmarks.bench_settings"),
                "BIND_ADDRESS": "127.0.0.1",
                "PORT": str(cfg.port),
                "WEB_CONCURRENCY": str(cfg.web_concurrency),
                "GUNICORN_TIMEOUT": "30",
            },
        )

    def check_alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                tail = (WORK / f"{name}.log").read_text()[-3000:]
                raise RuntimeError(f"{name} exited with {process.returncode}:\n{tail}")

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)
        for handle in self.logs:
            handle.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run(command: list[str], *, env: dict[str, str] | None = None, timeout: int = 600) -> str:
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command[:3])}… exited with {result.returncode}:\n"
            f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        )
    return result.stdout


# --- Database --------------------------------------------------------------------------------


@contextlib.contextmanager
def connect(cfg: Config, database: str | None = None) -> Iterator[psycopg.Connection]:
    with psycopg.connect(cfg.dsn(database), autocommit=True) as conn:
        yield conn


def scalar(cfg: Config, sql: str, params: tuple = ()) -> Any:
    with connect(cfg) as conn:
        row = conn.execute(sql, params).fetchone()
        return row[0] if row else None


def recreate_database(cfg: Config, name: str, *, template: str | None = None) -> None:
    with connect(cfg, "postgres") as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if template:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY = FILE_COPY')
        else:
            conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(cfg: Config, name: str) -> None:
    with connect(cfg, "postgres") as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def prepare_database(cfg: Config) -> None:
    log(f"database {cfg.database}: recreate and migrate")
    recreate_database(cfg, cfg.database)
    run(
        [PYTHON, "manage.py", "migrate", "--noinput", "-v0"],
        env=cfg.service_env("config.settings.production"),
    )
    log(f"seeding {cfg.wallets} funded wallets and {cfg.payouts:,} payouts with SQL")
    started = time.monotonic()
    run(
        [
            "psql",
            "-h",
            cfg.pg_host,
            "-p",
            str(cfg.pg_port),
            "-U",
            cfg.pg_user,
            "-d",
            cfg.database,
            "-q",
            "-v",
            f"n_wallets={cfg.wallets}",
            "-v",
            f"n_payouts={cfg.payouts}",
            "-v",
            f"salt={cfg.salt}",
            "-f",
            str(BENCH_DIR / "seed.sql"),
        ],
        timeout=1200,
    )
    log(f"seeded in {time.monotonic() - started:.0f}s")
    # The seed's count changes folded in, as beat keeps them folded in production.
    run(
        [PYTHON, "manage.py", "payout_counts", "--fold", "--no-progress"],
        env=cfg.service_env("config.settings.production"),
    )
    # Write the seed's dirty pages out now, not in the background during the measured runs.
    run(
        ["psql", "-h", cfg.pg_host, "-p", str(cfg.pg_port), "-U", cfg.pg_user, "-d", cfg.database]
        + ["-q", "-c", "CHECKPOINT"],
        timeout=600,
    )
    log(f"checkpoint done {time.monotonic() - started:.0f}s after the seed started")
    (WORK / "keys-spread.txt").write_text(
        "\n".join(cfg.key(i) for i in range(1, cfg.wallets + 1)) + "\n"
    )
    (WORK / "keys-hot.txt").write_text(cfg.key(1) + "\n")
    (WORK / "keys-list.txt").write_text(cfg.key(cfg.list_merchant) + "\n")


def flush_redis(cfg: Config) -> None:
    import redis

    redis.Redis.from_url(cfg.redis_url).flushdb()


# --- M1 denominator: pgbench -------------------------------------------------------------------


FROZEN_CREATE_SCRIPT = RESULTS_DIR / "create-frozen.pgbench"
SALT_MARKER = "__SALT__"


def frozen_create_script(cfg: Config) -> Path:
    """The frozen create SQL (M1's denominator) with this run's key salt and wallet count."""
    text = FROZEN_CREATE_SCRIPT.read_text().replace(SALT_MARKER, cfg.salt)
    text = re.sub(
        r"^\\set i random\(1, \d+\)$", rf"\\set i random(1, {cfg.wallets})", text, flags=re.M
    )
    script = WORK / "create-frozen.pgbench"
    script.write_text(text)
    return script


def capture_and_pgbench(cfg: Config, results: dict[str, Any]) -> None:
    """pgbench of the create's SQL: the frozen script (M1's denominator) and the SQL the ORM
    sends now (captured here; M1 against it shows how much the service adds to its own SQL)."""
    script, info = WORK / "create.pgbench", WORK / "capture.json"
    log("capturing the SQL of one create from the ORM")
    run(
        [
            PYTHON,
            "-m",
            "benchmarks.capture_create",
            "--merchant",
            str(min(777, cfg.wallets)),
            "--salt",
            cfg.salt,
            "--wallets",
            str(cfg.wallets),
            "--out",
            str(script),
            "--info",
            str(info),
        ],
        env={**cfg.service_env("benchmarks.bench_settings"), "LOG_LEVEL": "WARNING"},
    )
    captured = json.loads(info.read_text())
    results["create_sql"] = {
        "statements": captured["create_queries"],
        "in_transaction": captured["create_queries_in_transaction"],
        "replay_statements": captured["replay_queries"],
        "replay_locks_wallet": captured["replay_locks_wallet"],
        "pgbench_script": str(script.relative_to(ROOT)),
        "frozen_statements": _pgbench_statement_count(FROZEN_CREATE_SCRIPT),
        "frozen_script": str(FROZEN_CREATE_SCRIPT.relative_to(ROOT)),
    }
    shutil.copy(script, RESULTS_DIR / "create.pgbench")
    log(f"copying {cfg.database} to {cfg.pgbench_database} for pgbench")
    recreate_database(cfg, cfg.pgbench_database, template=cfg.database)
    try:
        results["runs"]["pgbench_create"] = pgbench(cfg, frozen_create_script(cfg), "frozen")
        results["runs"]["pgbench_create_current"] = pgbench(cfg, script, "current")
    finally:
        drop_database(cfg, cfg.pgbench_database)


def _pgbench_statement_count(script: Path) -> int:
    """Statements of one create in a pgbench script (not its variables, comments or BEGIN)."""
    return sum(
        1
        for line in script.read_text().splitlines()
        if line.strip()
        and not line.startswith(("--", "\\"))
        and line.strip().rstrip(";") not in ("BEGIN", "COMMIT")
    )


def pgbench(cfg: Config, script: Path, label: str) -> dict[str, Any]:
    log(f"pgbench ({label} create SQL): {cfg.connections} clients, {cfg.duration}s")
    load_before = os.getloadavg()[0]
    output = run(
        [
            "pgbench",
            "-h",
            cfg.pg_host,
            "-p",
            str(cfg.pg_port),
            "-U",
            cfg.pg_user,
            "-n",
            "-M",
            "simple",
            "-c",
            str(cfg.connections),
            "-j",
            str(cfg.threads),
            "-T",
            str(cfg.duration),
            "-f",
            str(script),
            cfg.pgbench_database,
        ],
        timeout=cfg.duration + 120,
    )
    tps = latency = None
    failed = 0
    for line in output.splitlines():
        if line.startswith("tps ="):
            tps = float(line.split()[2])
        elif line.startswith("latency average"):
            latency = float(line.split()[3])
        elif line.startswith("number of failed transactions"):
            failed = int(line.split(":")[1].split()[0])
    if tps is None:
        raise RuntimeError(f"pgbench printed no tps:\n{output}")
    log(f"pgbench ({label}): {tps:.0f} TPS")
    return {
        "load_average_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "tps": tps,
        "latency_avg_ms": latency,
        "failed": failed,
        "clients": cfg.connections,
        "script": label,
    }


# --- CPU accounting --------------------------------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _processes() -> dict[int, tuple[str, int, int, str]]:
    """pid -> (comm, ppid, utime + stime ticks, cmdline) for every process we can read."""
    table: dict[int, tuple[str, int, int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        table[int(entry.name)] = (comm, int(fields[1]), int(fields[11]) + int(fields[12]), cmdline)
    return table


def cpu_snapshot(services: Services | None) -> dict[str, Any] | None:
    """CPU ticks used so far by each process of the stack (by part), and the machine's busy
    ticks. wrk's own CPU comes from the children's rusage (it exits within the run)."""
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        table = _processes()
    except OSError:
        return None
    busy = sum(int(x) for x in first) - int(first[3]) - int(first[4])  # minus idle, iowait
    roots = {}
    if services is not None:
        roots = {name: process.pid for name, process in services.processes.items()}
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)

    def tree(root: int) -> set[int]:
        seen, stack = set(), [root]
        while stack:
            pid = stack.pop()
            if pid in seen:
                continue
            seen.add(pid)
            stack.extend(children.get(pid, []))
        return seen

    groups = {name: tree(pid) for name, pid in roots.items()}
    pids: dict[int, tuple[str, int]] = {}
    bench_backends = {
        pid
        for pid, (comm, _, _, cmdline) in table.items()
        if comm == "postgres" and " bench " in f"{cmdline} "
    }
    for pid, (_comm, _, ticks, cmdline) in table.items():
        group = next((name for name, members in groups.items() if pid in members), None)
        leader = re.search(r"parallel worker for PID (\d+)", cmdline)
        if group is None and (
            pid in bench_backends or (leader and int(leader.group(1)) in bench_backends)
        ):
            group = "postgres_bench"  # a bench backend, or a parallel worker of one
        if group is not None:
            pids[pid] = (group, ticks)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "pids": pids,
        "busy": busy,
        "children_ticks": (usage.ru_utime + usage.ru_stime) * CLOCK_TICKS,
        "at": time.monotonic(),
    }


def cpu_share(
    before: dict[str, Any] | None, after: dict[str, Any] | None, *, requests: int
) -> dict[str, Any] | None:
    """Each part's share of the machine during the run (% of all cores), the rest of the
    machine's busy time ("other": other tenants, the kernel), and CPU ms per request.
    Per process: a process that exited during the run is not counted, one that started is."""
    if not before or not after:
        return None
    seconds = after["at"] - before["at"]
    capacity = seconds * CLOCK_TICKS * (os.cpu_count() or 1)
    if capacity <= 0:
        return None
    parts = {"web": 0.0, "worker": 0.0, "postgres_bench": 0.0}
    for pid, (group, ticks) in after["pids"].items():
        previous = before["pids"].get(pid)
        base = previous[1] if previous and previous[0] == group else 0
        parts[group] = parts.get(group, 0.0) + max(0, ticks - base)
    parts["wrk"] = max(0.0, after["children_ticks"] - before["children_ticks"])
    busy = after["busy"] - before["busy"]
    share = {name: round(100 * ticks / capacity, 1) for name, ticks in parts.items()}
    share["other"] = round(100 * max(0, busy - sum(parts.values())) / capacity, 1)
    share["idle"] = round(max(0.0, 100 - 100 * busy / capacity), 1)
    per_request = {
        name: round(1000 * ticks / CLOCK_TICKS / requests, 2) if requests else None
        for name, ticks in parts.items()
    }
    return {"percent_of_machine": share, "cpu_ms_per_request": per_request}


# --- wrk -------------------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    mode: str
    path: str
    keys: str
    expect: int
    duration: int
    connections: int
    rate: float = 0.0
    replay_pool: int = 0
    tag: str = ""
    threads: int = 0  # 0: one per core (up to 4)


def wrk(cfg: Config, spec: Run, services: Services | None = None) -> dict[str, Any]:
    out = WORK / f"wrk-{spec.name}.json"
    out.unlink(missing_ok=True)
    threads = spec.threads or cfg.threads
    env = {
        **os.environ,
        "BENCH_MODE": spec.mode,
        "BENCH_PATH": spec.path,
        "BENCH_KEYS": str(WORK / spec.keys),
        "BENCH_RUN": spec.tag or f"{spec.name}-{cfg.salt}",
        "BENCH_REPLAY": str(spec.replay_pool),
        "BENCH_RATE": str(spec.rate),
        "BENCH_THREADS": str(threads),
        "BENCH_OUT": str(out),
    }
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{spec.connections}",
        f"-d{spec.duration}s",
        "--timeout",
        "10s",
        "-s",
        str(LUA),
        f"http://127.0.0.1:{cfg.port}{spec.path}",
    ]
    load_before = os.getloadavg()[0]
    cpu_before = cpu_snapshot(services)
    with (WORK / "wrk.log").open("a") as handle:
        handle.write(f"\n### {spec.name}: {' '.join(command)}\n")
        handle.flush()
        subprocess.run(
            command,
            cwd=ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=spec.duration + 120,
            check=True,
        )
    cpu_after = cpu_snapshot(services)
    data = json.loads(out.read_text())
    data["load_average_1m"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    data["cpu"] = cpu_share(cpu_before, cpu_after, requests=data["requests"])
    data["threads"] = threads
    statuses = {int(code): count for code, count in data["statuses"].items()}
    data["statuses"] = statuses
    data["unexpected"] = sum(count for code, count in statuses.items() if code != spec.expect)
    data["server_errors"] = sum(count for code, count in statuses.items() if code >= 500)
    data["connections"] = spec.connections
    data["path"] = spec.path
    log(
        f"{spec.name}: {data['rps']:.1f} req/s, p50 {data['p50_ms']:.1f} ms, "
        f"p99 {data['p99_ms']:.1f} ms, statuses {statuses}"
    )
    return data


# --- Worker drain and the gate -----------------------------------------------------------------


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


# --- M8: list totals ---------------------------------------------------------------------------


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


def http_post_json(
    cfg: Config, path: str, key: str, body: bytes, *, timeout: int = 120
) -> tuple[int, dict[str, Any]]:
    """POSTs a JSON body to the service with a secret key; the status and the decoded answer."""
    request = urllib.request.Request(  # noqa: S310 - loopback URL built here
        f"http://127.0.0.1:{cfg.port}{path}",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, {}


def http_get_json(cfg: Config, path: str, key: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(  # noqa: S310 - loopback URL built here
        f"http://127.0.0.1:{cfg.port}{path}", headers={"Authorization": f"Bearer {key}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def wait_ready(cfg: Config, services: Services, timeout: int = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        services.check_alive()
        try:
            with urllib.request.urlopen(  # noqa: S310
                f"http://127.0.0.1:{cfg.port}/readyz", timeout=5
            ) as response:
                if response.status == 200:
                    return
        except urllib.error.HTTPError as error:
            # No beat runs here (its rounds would load the measurements): everything else is up.
            if json.loads(error.read() or b"{}").get("message") == "not ready: beat not seen":
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    raise RuntimeError("the service did not become ready")


# --- Profile -----------------------------------------------------------------------------------


def profile_create(cfg: Config, services: Services, results: dict[str, Any]) -> None:
    """py-spy samples every gunicorn worker during two extra create runs (not measured ones):
    wall clock (where a request's time goes, waits included) and GIL-holding only (where the
    Python CPU goes)."""
    py_spy = VENV_BIN / "py-spy"
    if not cfg.profile or not py_spy.exists():
        results["profile"] = {"skipped": "BENCH_PROFILE=0 or py-spy not installed"}
        return
    duration = max(6, cfg.duration - 4)
    results["profile"] = {}
    for kind, extra in (("wall", []), ("gil", ["--gil"])):
        raw = WORK / f"profile-{kind}.raw"
        raw.unlink(missing_ok=True)
        with (WORK / f"py-spy-{kind}.log").open("w") as spy_log:
            spy = subprocess.Popen(
                [
                    str(py_spy),
                    "record",
                    "--pid",
                    str(services.processes["web"].pid),
                    "--subprocesses",
                    "--rate",
                    "200",
                    "--duration",
                    str(duration),
                    "--format",
                    "raw",
                    "--output",
                    str(raw),
                    "--nonblocking",
                    *extra,
                ],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=spy_log,
            )
            time.sleep(1)
            run_data = wrk(
                cfg,
                Run(
                    f"profile_create_{kind}",
                    "create",
                    PAYOUTS_PATH,
                    "keys-spread.txt",
                    202,
                    duration,
                    cfg.connections,
                ),
                services,
            )
            try:
                spy.wait(timeout=60)
            except subprocess.TimeoutExpired:
                spy.kill()
        results["runs"][f"profile_create_{kind}"] = run_data
        if raw.exists():
            results["profile"][kind] = summarise_profile(raw)
        else:
            results["profile"][kind] = {"skipped": (WORK / f"py-spy-{kind}.log").read_text()[-500:]}


def _frame_name(frame: str) -> str:
    # py-spy raw frames look like "function (path/to/file.py:123)"
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    path, _, _line = where.rpartition(":")
    for marker in ("site-packages/", str(ROOT) + "/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{name} ({path})"


def summarise_profile(raw: Path, top: int = 20) -> dict[str, Any]:
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    request_samples = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_frame_name(frame) for frame in stack.split(";") if " (" in frame]
        if not frames:
            continue
        # Only samples inside a request (the workers also idle in their accept loop).
        if not any(frame.split(" (")[0].endswith("get_response") for frame in frames):
            continue
        request_samples += count
        total += count
        for name in set(frames):
            inclusive[name] = inclusive.get(name, 0) + count
        own[frames[-1]] = own.get(frames[-1], 0) + count

    def table(counts: dict[str, int]) -> list[dict[str, Any]]:
        ranked = sorted(counts.items(), key=lambda item: item[1], reverse=True)[:top]
        return [{"frame": name, "pct": round(100 * n / total, 1)} for name, n in ranked]

    ours = {
        name: n
        for name, n in inclusive.items()
        if name.split("(")[-1].startswith(("payouts/", "wallets/", "core/", "merchants/"))
    }
    return {
        "samples_in_requests": request_samples,
        "top_self": table(own),
        "top_inclusive_project": table(ours),
    }


# --- Report ------------------------------------------------------------------------------------


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if not numerator or not denominator:
        return None
    return numerator / denominator


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
            "detail": f"{_fmt(rps('create_spread'))} req/s ÷ {_fmt(pg)} TPS "
            f"({sql.get('frozen_statements', '?')} statements)",
        },
        "M1b": {
            "name": "the same against the create's SQL as it is now",
            "value": ratio(rps("create_spread"), pg_now),
            "detail": f"{_fmt(rps('create_spread'))} req/s ÷ {_fmt(pg_now)} TPS "
            f"({sql.get('statements', '?')} statements)",
        },
        "M3": {
            "name": "hot wallet: one wallet ÷ 1,000 wallets (create req/s)",
            "value": ratio(rps("create_hot"), rps("create_spread")),
            "detail": f"{_fmt(rps('create_hot'))} ÷ {_fmt(rps('create_spread'))} req/s",
        },
        "M4": {
            "name": "framework share: create ÷ authenticated no-op POST (req/s)",
            "value": ratio(rps("create_spread"), rps("noop")),
            "detail": f"{_fmt(rps('create_spread'))} ÷ {_fmt(rps('noop'))} req/s",
        },
        "M7": {
            "name": "idempotent replay: replay ÷ fresh create (req/s)",
            "value": ratio(rps("replay"), rps("create_spread")),
            "detail": f"{_fmt(rps('replay'))} ÷ {_fmt(rps('create_spread'))} req/s",
        },
    }
    m8 = {}
    for variant in ("all", "status", "dates"):
        m8[variant] = ratio(p50(f"list_{variant}_deep"), p50(f"list_{variant}_page1"))
    out["M8"] = {
        "name": "deep list: p50 100,000 rows deep ÷ p50 page 1 (worst of: none, status, dates)",
        "value": max((v for v in m8.values() if v is not None), default=None),
        "detail": ", ".join(
            f"{variant} {_fmt(p50(f'list_{variant}_deep'))}/{_fmt(p50(f'list_{variant}_page1'))}"
            f" ms = {_fmt(value, 2)}"
            for variant, value in m8.items()
        ),
        "by_filter": m8,
    }
    tail = runs.get("create_open_loop") or {}
    out["M10"] = {
        "name": "tail: create p99 ÷ p50 at ~70% of max rate, open loop",
        "value": ratio(tail.get("p99_ms"), tail.get("p50_ms")),
        "detail": (
            f"p99 {_fmt(tail.get('p99_ms'))} ms ÷ p50 {_fmt(tail.get('p50_ms'))} ms at "
            f"{_fmt(tail.get('target_rate'))} req/s target, {_fmt(tail.get('rps'))} achieved, "
            f"{tail.get('late_sends', '?')} late sends"
        ),
    }
    per = ((runs.get("create_spread") or {}).get("cpu") or {}).get("cpu_ms_per_request") or {}
    parts = {name: per.get(name) for name in ("web", "worker", "postgres_bench")}
    known = [value for value in parts.values() if value is not None]
    out["C1"] = {
        "name": "CPU per create: web + worker + PostgreSQL (ms)",
        "value": sum(known) if len(known) == len(parts) else None,
        "detail": ", ".join(f"{name} {_fmt(value, 2)} ms" for name, value in parts.items()),
    }
    page1 = {v: p50(f"list_{v}_page1") for v in ("all", "status", "dates")}
    out["L1"] = {
        "name": f"list page 1 p50 at {results['config'].get('list_wallet_payouts', 0):,} rows "
        "(worst of: none, status, dates; ms)",
        "value": max((v for v in page1.values() if v is not None), default=None),
        "detail": ", ".join(f"{v} {_fmt(ms)} ms" for v, ms in page1.items()),
    }
    bulk = runs.get("bulk_accept") or {}
    out["B1"] = {
        "name": f"bulk: one {BULK_ITEMS}-item request accepted, median (ms)",
        "value": bulk.get("median_ms"),
        "detail": f"{bulk.get('requests', 0)} requests: "
        + ", ".join(_fmt(ms, 0) for ms in bulk.get("each_ms", []))
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


def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


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
        f"Redis {results['versions'].get('redis', '?')}; load average at start "
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
            f"| {key} {row['name']} | {_fmt(row['value'], 2)} | {row['target']} | {reached} "
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
            f"{_fmt(pg.get('tps'))} | {_fmt(pg.get('latency_avg_ms'))} (avg) | | | "
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
            f"| {name} | {_fmt(data['rps'])} | {_fmt(data['p50_ms'])} | {_fmt(data['p99_ms'])} "
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
    drains = results.get("drains") or {}
    if drains:
        lines += [
            "",
            "Worker drain after each load: "
            + "; ".join(f"{name} {d['settled']} in {d['seconds']} s" for name, d in drains.items())
            + ".",
        ]
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


# --- Main --------------------------------------------------------------------------------------


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
    runs["create_open_loop"] = go(
        Run(
            "create_open_loop",
            "create",
            PAYOUTS_PATH,
            "keys-spread.txt",
            202,
            d,
            open_connections,
            rate=rate,
        )
    )
    settle("open_loop")

    runs["bulk_accept"] = bulk_accept(cfg)
    settle("bulk")

    profile_create(cfg, services, results)
    settle("final")


def wait_quiet(cfg: Config) -> None:
    """BENCH_WAIT_QUIET_SECONDS > 0: first wait (up to that long) until the machine's 1-minute
    load average is below half its cores, so other work on a shared machine weighs less."""
    limit = _env_int("BENCH_WAIT_QUIET_SECONDS", 0)
    if limit <= 0:
        return
    deadline = time.monotonic() + limit
    while os.getloadavg()[0] >= cfg.cores / 2 and time.monotonic() < deadline:
        log(f"waiting for a quieter machine (load average {os.getloadavg()[0]:.2f})")
        time.sleep(15)


def main() -> int:
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
            "worker_class": os.environ.get("GUNICORN_WORKER_CLASS", "gthread"),
            "worker_threads": int(os.environ.get("GUNICORN_THREADS", "1")),
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
    services = Services(cfg)
    error: str | None = None
    started = time.monotonic()
    try:
        flush_redis(cfg)
        prepare_database(cfg)
        capture_and_pgbench(cfg, results)
        services.start_all()
        wait_ready(cfg, services)
        measure(cfg, services, results)
    except Exception as exc:  # noqa: BLE001 - reported, and the gate still runs
        error = f"{type(exc).__name__}: {exc}"
        log(f"ERROR {error}")
    finally:
        services.stop()
    results["versions"] = versions(cfg)
    try:
        results["gate"] = gate(cfg, results)
    except Exception as exc:  # noqa: BLE001
        results["gate"] = [{"check": "gate ran", "ok": False, "detail": str(exc)}]
    if error:
        results["gate"].append({"check": "benchmark completed", "ok": False, "detail": error})
    totals = results.get("list_totals") or {}
    results["gate"].append(
        {
            "check": "list total exact at page 1 and 100,000 deep",
            "ok": bool(totals) and all(t["exact"] and t["status"] == 200 for t in totals.values()),
            "detail": {
                name: f"{t['total']} (SQL {t['expected_total']})" for name, t in totals.items()
            },
        }
    )
    results["metrics"] = metrics(results)
    results["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    results["elapsed_s"] = round(time.monotonic() - started)
    results["gate_passed"] = all(check["ok"] for check in results["gate"])
    (RESULTS_DIR / "latest.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    text = markdown(results)
    (RESULTS_DIR / "latest.md").write_text(text)
    print()
    print(text)
    verdict = "passed" if results["gate_passed"] else "FAILED"
    log(f"finished in {results['elapsed_s']}s; gate {verdict}")
    return 0 if results["gate_passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
