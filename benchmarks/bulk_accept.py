"""How long a bulk payout of 500 items (by default) takes to be accepted.

``python -m benchmarks.bulk_accept [--items N] [--runs R]`` on the database of ``DATABASE_URL``
(when unset, the embedded PostgreSQL of a running ``make run``). Inside one transaction it
creates a throwaway merchant with a funded test wallet, warms the process (bank and fee memos,
the connection) with a one-item batch, then posts ``R`` bulk requests of ``N`` items through the
Django test client, the whole request path: key authentication, throttling, JSON parsing, the
service, the envelope. Each item pays a different account, so every item costs its own sandbox
name enquiry. It prints each run's time and the statements it sent, then rolls everything back:
the database is left as it was.

The dispatch messages the payouts queue on commit never go out (the transaction is rolled back):
``--enqueue [BROKER_URL]`` times publishing ``N`` of them as well, to a throwaway queue on that
broker (default ``memory://``; with ``redis://…`` the queue is deleted afterwards), the part of
a real request that follows the commit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from decimal import Decimal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--enqueue",
        nargs="?",
        const="memory://",
        metavar="BROKER_URL",
        help="also time queuing the dispatch messages (default broker: memory://)",
    )
    arguments = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from core.api.throttling import SecretKeyRateThrottle
    from merchants.models import Mode
    from merchants.services import merchant_create
    from wallets.selectors import wallet_get
    from wallets.services import wallet_fund

    url = "/api/v1/transactions/in/merchant-wallet/payouts/bulk"
    SecretKeyRateThrottle.THROTTLE_RATES = {}  # the bench's own requests are not the limit's
    tag = f"{time.time_ns():x}"

    def body(run: int, items: int) -> bytes:
        return json.dumps(
            {
                "batch_reference": f"bench-{tag}-{run}",
                "items": [
                    {
                        "account_number": f"{1_000_000_000 + run * 100_000 + n:010d}",
                        "bank_code": "058",
                        "amount": f"{1000 + n % 500}.00",
                        "narration": f"Bench payout {n}",
                        "idempotency_key": f"bench-{tag}-{run}-{n}",
                    }
                    for n in range(items)
                ],
            }
        ).encode()

    timings: list[float] = []
    with transaction.atomic():
        account = merchant_create(name="Bulk Bench", email="bulk-bench@example.com")
        wallet = wallet_get(merchant=account.merchant, mode=Mode.TEST)
        wallet_fund(wallet_id=wallet.pk, amount=Decimal(arguments.runs * 1_000_000), reference=tag)
        client = Client(HTTP_AUTHORIZATION=f"Bearer {account.test_key.plaintext}")
        warm = client.post(url, body(0, 1), content_type="application/json")
        if warm.status_code != 202:
            raise SystemExit(f"warm-up answered {warm.status_code}: {warm.content[:300]!r}")
        for run in range(1, arguments.runs + 1):
            payload = body(run, arguments.items)
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.post(url, payload, content_type="application/json")
                elapsed = time.perf_counter() - started
            data = response.json().get("data") or {}
            accepted = (data.get("batch") or {}).get("accepted")
            if response.status_code != 202 or accepted != arguments.items:
                raise SystemExit(f"run {run}: {response.status_code} {response.content[:300]!r}")
            timings.append(elapsed)
            print(
                f"run {run}: {arguments.items} items accepted in {elapsed:.3f} s "
                f"({len(queries.captured_queries)} statements, {len(payload) / 1024:.0f} KiB body)"
            )
        transaction.set_rollback(True)
    print(
        f"bulk accept: {arguments.items} items, best {min(timings):.3f} s, "
        f"median {statistics.median(timings):.3f} s over {len(timings)} run(s)"
    )
    if arguments.enqueue:
        _time_enqueue(arguments.items, arguments.enqueue)


def _time_enqueue(count: int, broker_url: str) -> None:
    """Publishes ``count`` dispatch messages as the payouts' on-commit callbacks do, to a
    throwaway queue (deleted afterwards) on ``broker_url``; no worker consumes them."""
    import uuid

    from config.celery_app import app
    from payouts.services import payout_dispatch_enqueue

    queue = f"bench-bulk-{uuid.uuid4().hex[:12]}"
    app.conf.broker_url = broker_url
    app.conf.broker_transport_options = {}
    app.conf.task_routes = {"payouts.tasks.*": {"queue": queue}}
    app._pool = None  # publish through a pool for this broker URL
    app.__dict__.pop("amqp", None)
    try:
        payout_dispatch_enqueue(payout_id=0)  # connects
        started = time.perf_counter()
        for payout_id in range(1, count + 1):
            payout_dispatch_enqueue(payout_id=payout_id)
        elapsed = time.perf_counter() - started
    finally:
        if broker_url.startswith("redis"):
            import redis

            redis.Redis.from_url(broker_url).delete(
                queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}"
            )
    print(f"queuing {count} dispatch messages ({broker_url.split('://')[0]}): {elapsed:.3f} s")


if __name__ == "__main__":
    main()
