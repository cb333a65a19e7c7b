"""CPU per payout create and per list page, in process: a fixed number of requests through
Django's test client under the benchmark's settings (production plus the no-op route), timed by
this process's CPU time and the PostgreSQL backend's (``/proc/<pid>/stat``, so PostgreSQL must
run on this machine). Not part of ``make bench``: a focused A/B measure for changes to the
create or list path, steadier than a load run on a noisy machine.

Run on a database with the migrations applied and a Redis database of its own::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> CACHE_URL=redis://127.0.0.1:6379/<n> \\
        .venv/bin/python -m benchmarks.create_cpu --requests 300 --rounds 5

Each round creates ``--requests`` payouts (fresh idempotency keys, one merchant's test wallet),
then reads page 1 of the list as many times; the medians over rounds are printed (ms per
request: the web process, PostgreSQL, and both). The dispatcher is not run: each create's wake
publishes to the broker at most once per wake interval, as under load.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import time
from collections.abc import Callable
from decimal import Decimal

import django

from benchmarks.harness.config import NOOP_PATH, PAYOUTS_PATH

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _backend_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def _environment() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.bench_settings")
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(40))
    os.environ.setdefault("CELERY_BROKER_URL", os.environ.get("CACHE_URL", ""))
    for name in ("READ", "WRITE", "NAME_ENQUIRY", "PAYOUT_BULK"):
        os.environ.setdefault(f"THROTTLE_RATE_{name}", "100000000/s")
    os.environ.setdefault("SESSION_COOKIE_SECURE", "0")
    os.environ.setdefault("CSRF_COOKIE_SECURE", "0")
    os.environ.setdefault("FUNDING_WEBHOOK_SECRET", "create-cpu-funding")
    if "FIELD_ENCRYPTION_KEYS" not in os.environ:
        from cryptography.fernet import Fernet

        os.environ["FIELD_ENCRYPTION_KEYS"] = Fernet.generate_key().decode()
    for name in ("PAYOUT", "COLLECTION", "REFUND"):
        os.environ.setdefault(f"{name}_PROVIDER_LIVE", "sandbox")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
    os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=("create", "list", "noop"), action="append")
    args = parser.parse_args()
    _environment()
    django.setup()

    from django.db import connection
    from django.test import Client

    from merchants.services import merchant_create
    from wallets.models import Wallet
    from wallets.services import wallet_fund

    tag = secrets.token_hex(4)
    created = merchant_create(name=f"CPU {tag}", email=f"cpu-{tag}@example.com")
    wallet = Wallet.objects.get(merchant=created.merchant, mode="test")
    wallet_fund(wallet_id=wallet.pk, amount=Decimal("1000000000.00"), reference=f"FUND-{tag}")
    client = Client(HTTP_HOST="127.0.0.1")
    authorization = f"Bearer {created.test_key.plaintext}"
    sequence = iter(range(10**9))

    def create() -> None:
        body = {
            "account_number": "0123456789",
            "bank_code": "058",
            "amount": "100.00",
            "narration": "cpu",
            "idempotency_key": f"cpu-{tag}-{next(sequence)}",
        }
        response = client.post(
            PAYOUTS_PATH, body, content_type="application/json", HTTP_AUTHORIZATION=authorization
        )
        assert response.status_code == 202, response.content

    def list_page() -> None:
        response = client.get(PAYOUTS_PATH, HTTP_AUTHORIZATION=authorization)
        assert response.status_code == 200, response.content

    def noop() -> None:
        response = client.post(
            NOOP_PATH, {}, content_type="application/json", HTTP_AUTHORIZATION=authorization
        )
        assert response.status_code in (200, 202), response.content

    create()  # warms the memos and the connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]

    def timed(request: Callable[[], None]) -> tuple[float, float]:
        web_start, pg_start = time.process_time(), _backend_cpu_seconds(backend)
        for _ in range(args.requests):
            request()
        web = (time.process_time() - web_start) * 1000 / args.requests
        pg = (_backend_cpu_seconds(backend) - pg_start) * 1000 / args.requests
        return web, pg

    kinds = {"create": create, "list": list_page, "noop": noop}
    chosen = args.only or ["create", "list", "noop"]
    results: dict[str, list[tuple[float, float]]] = {kind: [] for kind in chosen}
    for _ in range(args.rounds):
        for kind in chosen:
            results[kind].append(timed(kinds[kind]))
    for kind, runs in results.items():
        web = statistics.median(run[0] for run in runs)
        pg = statistics.median(run[1] for run in runs)
        both = statistics.median(run[0] + run[1] for run in runs)
        each = ", ".join(f"{run[0]:.2f}+{run[1]:.2f}" for run in runs)
        print(f"{kind}: web {web:.2f} ms, postgres {pg:.2f} ms, both {both:.2f} ms ({each})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
