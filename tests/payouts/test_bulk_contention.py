"""Overlapping bulk and single creates on PostgreSQL (threads, committed transactions): requests
that share idempotency keys, in any order, each get a defined answer (202, or 409 for a key
used with other parameters), never a 500 from a deadlock, and each key makes one payout."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from merchants.models import Mode
from payouts.models import Payout
from tests.payouts.helpers import (
    GOOD_ACCOUNT,
    GTB_CODE,
    PAYOUTS_URL,
    assert_wallet_balanced,
    fund_wallet,
)
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_get

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BULK_URL = f"{PAYOUTS_URL}/bulk"
KEYS_PER_ROUND = 12
ROUNDS = 4


def _item(key: str) -> dict[str, Any]:
    return {
        "account_number": GOOD_ACCOUNT,
        "bank_code": GTB_CODE,
        "amount": "100.00",
        "idempotency_key": key,
    }


def _post_at_once(
    client_for: Callable[[str], APIClient], api_key: str, requests: list[tuple[str, Any]]
) -> list[int]:
    """Every (url, body) posted by its own thread, released together; their status codes."""
    barrier = threading.Barrier(len(requests))
    statuses: list[int] = []
    lock = threading.Lock()

    def send(url: str, body: Any) -> None:
        try:
            client = client_for(api_key)
            barrier.wait(timeout=30)
            response = client.post(url, body, format="json")
            with lock:
                statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=request) for request in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(statuses) == len(requests)
    return statuses


def test_bulks_sharing_keys_in_other_orders_never_deadlock(merchant_account, client_for) -> None:
    wallet = fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "100000")
    shuffle = random.Random(20261127)  # noqa: S311 - test data
    all_keys: list[str] = []
    for round_number in range(ROUNDS):
        keys = [f"overlap-{round_number}-{index:02d}" for index in range(KEYS_PER_ROUND)]
        all_keys += keys
        shuffled = keys[:]
        shuffle.shuffle(shuffled)
        orders = [keys, list(reversed(keys)), shuffled]
        requests: list[tuple[str, Any]] = [
            (
                BULK_URL,
                {
                    "batch_reference": f"overlap-{round_number}-{n}",
                    "items": [_item(k) for k in order],
                },
            )
            for n, order in enumerate(orders)
        ]
        # A single create of a key in the middle races the three bulks.
        requests.append((PAYOUTS_URL, _item(keys[KEYS_PER_ROUND // 2])))

        statuses = _post_at_once(client_for, merchant_account.test_key.plaintext, requests)

        assert statuses == [202] * len(requests), statuses

    assert Payout.objects.filter(wallet=wallet).count() == len(all_keys)
    assert set(Payout.objects.values_list("idempotency_key", flat=True)) == set(all_keys)
    reserves = LedgerEntry.objects.filter(wallet=wallet, entry_type=LedgerEntryType.PAYOUT_RESERVE)
    assert reserves.count() == len(all_keys)
    wallet.refresh_from_db()
    assert wallet.reserved_balance == Decimal("110.00") * len(all_keys)
    assert_wallet_balanced(wallet)


def test_a_key_reused_with_other_parameters_in_a_racing_bulk_is_a_409_item(
    merchant_account, client_for
) -> None:
    wallet = fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "100000")
    keys = [f"conflict-{index:02d}" for index in range(KEYS_PER_ROUND)]
    other = [{**_item(key), "amount": "200.00"} for key in reversed(keys)]
    requests: list[tuple[str, Any]] = [
        (BULK_URL, {"batch_reference": "conflict-a", "items": [_item(key) for key in keys]}),
        (BULK_URL, {"batch_reference": "conflict-b", "items": other}),
    ]

    statuses = _post_at_once(client_for, merchant_account.test_key.plaintext, requests)

    assert statuses == [202, 202]
    assert Payout.objects.filter(wallet=wallet).count() == len(keys)
    amounts = set(Payout.objects.values_list("amount", flat=True))
    assert len(amounts) == 1  # one of the two bulks made every payout; the other's items 409
    assert_wallet_balanced(wallet)
