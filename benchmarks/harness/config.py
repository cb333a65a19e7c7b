"""What every part of the bench shares: the paths (the repository, ``benchmarks/results``, the
scratch directory ``var/bench``, the virtualenv), the service's routes it drives, the figures'
fixed sizes, ``Config`` (the run's settings from the environment, and the environment the
service processes get), the log line, and running a command to completion."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from cryptography.fernet import Fernet

from benchmarks.harness.broker import broker_env

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH_DIR = ROOT / "benchmarks"
RESULTS_DIR = BENCH_DIR / "results"
WORK = ROOT / "var" / "bench"
LUA = BENCH_DIR / "lua" / "bench.lua"
VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python")

PAYOUTS_PATH = "/api/v1/transactions/in/merchant-wallet/payouts"
NOOP_PATH = "/bench/noop"
BULK_ITEMS = 500
BULK_REQUESTS = 5


def log(message: str) -> None:
    print(f"[bench {datetime.now(UTC):%H:%M:%S}] {message}", flush=True)


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


@dataclass
class Config:
    pg_host: str = os.environ.get("BENCH_PG_HOST", "127.0.0.1")
    pg_port: int = env_int("BENCH_PG_PORT", 5432)
    pg_user: str = os.environ.get("BENCH_PG_USER", "postgres")
    database: str = os.environ.get("BENCH_DATABASE", "bench")
    redis_url: str = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/10")
    duration: int = env_int("BENCH_DURATION", 12)
    list_duration: int = env_int("BENCH_LIST_DURATION", 8)
    warmup: int = 3
    connections: int = env_int("BENCH_CONNECTIONS", 16)
    wallets: int = env_int("BENCH_WALLETS", 1000)
    payouts: int = env_int("BENCH_PAYOUTS", 1_000_000)
    cores: int = os.cpu_count() or 1
    # One gunicorn process per core, four view threads each: a request waits for any of its
    # process's four threads rather than for one process's only thread, which held the open-loop
    # tail down (docs/benchmarks.md, "The tail, phase by phase").
    web_concurrency: int = env_int("WEB_CONCURRENCY", os.cpu_count() or 1)
    web_threads: int = env_int("GUNICORN_THREADS", 4)
    celery_concurrency: int = env_int("CELERY_CONCURRENCY", os.cpu_count() or 1)
    drain_timeout: int = env_int("BENCH_DRAIN_TIMEOUT", 240)
    profile: bool = os.environ.get("BENCH_PROFILE", "1") != "0"
    web_cpus: str = os.environ.get("BENCH_WEB_CPUS", "")
    worker_cpus: str = os.environ.get("BENCH_WORKER_CPUS", "")
    worker_nice: int = env_int("BENCH_WORKER_NICE", 10)
    salt: str = field(default_factory=lambda: secrets.token_hex(6))
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(40))
    field_encryption_key: str = field(default_factory=lambda: Fernet.generate_key().decode())
    port: int = 0

    @property
    def threads(self) -> int:
        return max(1, min(self.cores, 4))

    @property
    def pgbench_database(self) -> str:
        return f"{self.database}_pgbench"

    @property
    def list_merchant(self) -> int:
        return self.wallets + 1

    def dsn(self, database: str | None = None) -> str:
        return (
            f"postgresql://{self.pg_user}@{self.pg_host}:{self.pg_port}/{database or self.database}"
        )

    def pg_connection_args(self) -> list[str]:
        """Where psql and pgbench connect: ``-h host -p port -U user``."""
        return ["-h", self.pg_host, "-p", str(self.pg_port), "-U", self.pg_user]

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
            **broker_env(self),  # BENCH_BROKER: Redis, or RabbitMQ with queues of the run's
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
            "REFUND_PROVIDER_LIVE": "sandbox",
            "SECURE_SSL_REDIRECT": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "VAR_DIR": str(WORK / "var"),
            "PYTHONUNBUFFERED": "1",
        }


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
