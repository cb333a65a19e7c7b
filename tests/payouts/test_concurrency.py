"""Real concurrency on PostgreSQL (threads, committed transactions) and on the embedded SQLite
default (a subprocess running the app on a SQLite file with threads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from merchants.models import Mode
from payouts.models import Payout
from tests.payouts.helpers import PAYOUTS_URL, assert_wallet_balanced, fund_wallet
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_get

pytestmark = [pytest.mark.slow]

PROBE = Path(__file__).with_name("sqlite_concurrency_probe.py")
THREADS = 8


def post_concurrently(client_for, key: str, bodies: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    barrier = threading.Barrier(len(bodies))
    results: list[tuple[int, Any]] = []
    lock = threading.Lock()

    def worker(body: dict[str, Any]) -> None:
        try:
            client = client_for(key)
            barrier.wait(timeout=30)
            response = client.post(PAYOUTS_URL, body, format="json")
            with lock:
                results.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == len(bodies)
    return results


@pytest.mark.django_db(transaction=True)
def test_identical_concurrent_requests_create_one_payout(merchant_account, client_for) -> None:
    assert connection.vendor == "postgresql" or not os.environ.get("REQUIRE_POSTGRES")
    wallet = fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "5000")
    body = {
        "account_number": "0123456789",
        "bank_code": "058",
        "amount": "1000.00",
        "idempotency_key": "concurrent-one-key",
    }
    results = post_concurrently(client_for, merchant_account.test_key.plaintext, [body] * THREADS)

    assert [status for status, _ in results] == [202] * THREADS
    payout_ids = {payload["data"]["payout"]["id"] for _, payload in results}
    assert len(payout_ids) == 1
    duplicates = sorted(payload["data"]["duplicate"] for _, payload in results)
    assert duplicates == [False] + [True] * (THREADS - 1)
    assert Payout.objects.count() == 1
    assert LedgerEntry.objects.filter(entry_type=LedgerEntryType.PAYOUT_RESERVE).count() == 1
    wallet.refresh_from_db()
    assert wallet.reserved_balance == Decimal("1010.00")
    assert_wallet_balanced(wallet)


@pytest.mark.django_db(transaction=True)
def test_concurrent_payouts_never_overdraw(merchant_account, client_for) -> None:
    wallet = fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "3030")
    bodies = [
        {
            "account_number": "0123456789",
            "bank_code": "058",
            "amount": "1000.00",
            "idempotency_key": f"overdraw-{index}",
        }
        for index in range(THREADS)
    ]
    results = post_concurrently(client_for, merchant_account.test_key.plaintext, bodies)

    statuses = sorted(status for status, _ in results)
    assert statuses == [202] * 3 + [400] * (THREADS - 3)
    refusals = {p["message"] for status, p in results if status == 400}
    assert refusals == {"insufficient available wallet balance"}
    wallet.refresh_from_db()
    assert wallet.available_balance == Decimal("0.00")
    assert wallet.reserved_balance == Decimal("3030.00")
    assert Payout.objects.count() == 3
    assert_wallet_balanced(wallet)


@pytest.mark.multiprocess
def test_identical_concurrent_requests_on_sqlite(tmp_path: Path) -> None:
    """The embedded default: the app on a SQLite file (WAL, IMMEDIATE transactions), migrated
    from scratch, hit by threads with one idempotency key and by threads draining the wallet."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "VAR_DIR": str(tmp_path / "var"),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "CELERY_BROKER_URL": "memory://",
    }
    completed = subprocess.run(
        [sys.executable, str(PROBE), str(THREADS)],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["vendor"] == "sqlite"

    same_key = report["same_key"]
    assert same_key["statuses"] == [202] * THREADS
    assert len(set(same_key["payout_ids"])) == 1
    assert sorted(same_key["duplicates"]) == [False] + [True] * (THREADS - 1)
    assert same_key["payouts_with_key"] == 1
    assert same_key["reserve_entries"] == 1

    drain = report["drain"]
    assert sorted(drain["statuses"]) == [202] * 3 + [400] * (THREADS - 3)
    assert drain["available"] == "0.00"
    assert report["balanced"] is True
