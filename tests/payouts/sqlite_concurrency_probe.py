"""Run by test_concurrency.py in a subprocess with DATABASE_URL=sqlite:///...: migrates a fresh
SQLite database, then sends concurrent payout requests from threads, each thread with its own
connection, and prints one JSON line with what happened. Not collected by pytest."""

from __future__ import annotations

import json
import os
import sys
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from config.celery_app import app as celery_app  # noqa: E402
from merchants.models import Mode  # noqa: E402
from merchants.services import merchant_create  # noqa: E402
from payouts.models import Payout  # noqa: E402
from wallets.models import LedgerEntry, LedgerEntryType  # noqa: E402
from wallets.selectors import wallet_get, wallet_totals  # noqa: E402
from wallets.services import wallet_fund  # noqa: E402

URL = "/api/v1/transactions/in/merchant-wallet/payouts"


def post_all(key: str, bodies: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    barrier = threading.Barrier(len(bodies))
    results: list[tuple[int, dict[str, Any]]] = []
    lock = threading.Lock()

    def worker(body: dict[str, Any]) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        try:
            barrier.wait(timeout=30)
            response = client.post(URL, body, format="json")
            with lock:
                results.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def main(threads: int) -> dict[str, Any]:
    assert connection.vendor == "sqlite", connection.vendor
    celery_app.conf.broker_url = "memory://"
    celery_app.conf.broker_transport_options = {}
    call_command("migrate", verbosity=0, interactive=False)

    account = merchant_create(name="SQLite Probe", email="probe@example.com")
    key = account.test_key.plaintext
    wallet = wallet_get(merchant=account.merchant, mode=Mode.TEST)
    wallet_fund(wallet_id=wallet.pk, amount=Decimal("4040.00"), reference="PROBE-FUND-1")

    body = {
        "account_number": "0123456789",
        "bank_code": "058",
        "amount": "1000.00",
        "idempotency_key": "sqlite-one-key",
    }
    same = post_all(key, [body] * threads)
    same_key = {
        "statuses": [status for status, _ in same],
        "payout_ids": [p["data"]["payout"]["id"] for status, p in same if status == 202],
        "duplicates": [p["data"]["duplicate"] for status, p in same if status == 202],
        "errors": [p["message"] for status, p in same if status != 202],
        "payouts_with_key": Payout.objects.filter(idempotency_key="sqlite-one-key").count(),
        "reserve_entries": LedgerEntry.objects.filter(
            entry_type=LedgerEntryType.PAYOUT_RESERVE
        ).count(),
    }

    # 4040 - 1010 = 3030 left: exactly three more payouts of 1000 + 10 fit; the rest are refused.
    drained = post_all(
        key,
        [{**body, "idempotency_key": f"sqlite-drain-{index}"} for index in range(threads)],
    )
    wallet.refresh_from_db()
    drain = {
        "statuses": [status for status, _ in drained],
        "available": str(wallet.available_balance),
    }
    totals = wallet_totals(wallet=wallet)
    return {
        "vendor": connection.vendor,
        "same_key": same_key,
        "drain": drain,
        "balanced": totals.balanced,
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 8)))
