"""Real concurrency: threads, each with its own connection, committing their transactions."""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection

from merchants.models import Mode
from payouts.models import Payout
from tests.payouts.helpers import PAYOUTS_URL, assert_wallet_balanced, fund_wallet
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_get

pytestmark = [pytest.mark.slow]
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
