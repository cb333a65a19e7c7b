"""Concurrent settlement runs of one merchant and mode on real PostgreSQL, with real threads
(each its own connection): one settlement, every collection settled once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection

from collections_app.models import CollectionTransaction
from merchants.models import Mode
from settlements.models import Settlement
from settlements.platform_ledger import platform_balances
from settlements.services import settlement_run
from tests.settlements.helpers import (
    merchant_with_wallets,
    paid_collection,
    subaccount_for,
    wallet_of,
)
from wallets.models import LedgerEntry, LedgerEntryType

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def run_together(workers: list[Callable[[], Any]]) -> list[Any]:
    barrier = threading.Barrier(len(workers))
    results: list[Any] = [None] * len(workers)

    def run(index: int, work: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[index] = work()
        except Exception as error:  # noqa: BLE001 - the test inspects it
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, w)) for i, w in enumerate(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_concurrent_runs_of_one_merchant_make_one_settlement() -> None:
    merchant = merchant_with_wallets()
    subaccount = subaccount_for(merchant)
    for _ in range(20):
        paid_collection(merchant=merchant, shares={subaccount: Decimal("700.00")})

    def run() -> Any:
        return settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    results = run_together([run] * 4)

    assert not [r for r in results if isinstance(r, Exception)], results
    made = [r for r in results if r is not None]
    assert len(made) == 1
    assert Settlement.objects.count() == 1
    settlement = Settlement.objects.get()
    assert settlement.transaction_count == 20
    assert not CollectionTransaction.objects.filter(settlement__isnull=True).exists()
    assert wallet_of(merchant).available_balance == Decimal("126000.00")
    assert LedgerEntry.objects.filter(entry_type=LedgerEntryType.SETTLEMENT).count() == 1
    assert platform_balances(mode=Mode.TEST).equation_holds


def test_runs_of_two_merchants_at_once_each_settle_their_own() -> None:
    merchants = [merchant_with_wallets("One"), merchant_with_wallets("Two")]
    for merchant in merchants:
        subaccount = subaccount_for(merchant)
        for _ in range(5):
            paid_collection(merchant=merchant, shares={subaccount: Decimal("100.00")})

    results = run_together(
        [
            (lambda m=merchant: settlement_run(merchant_id=m.pk, mode=Mode.TEST))
            for merchant in merchants
            for _ in range(2)
        ]
    )

    assert not [r for r in results if isinstance(r, Exception)], results
    assert Settlement.objects.count() == 2
    for merchant in merchants:
        assert wallet_of(merchant).available_balance == Decimal("34500.00")
    assert platform_balances(mode=Mode.TEST).equation_holds
