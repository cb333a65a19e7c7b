"""Concurrent settlement runs of one merchant and mode on real PostgreSQL, with real threads
(each its own connection): one settlement, every collection settled once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection, transaction

from collections_app.models import CollectionTransaction
from merchants.models import Mode
from settlements.models import Settlement
from settlements.platform_ledger import platform_balances
from settlements.services import platform_wallet_get, settlement_run
from tests.settlements.helpers import (
    merchant_with_wallets,
    paid_collection,
    subaccount_for,
    wallet_of,
)
from wallets.models import LedgerEntry, LedgerEntryType, Wallet

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


def test_a_run_without_shares_does_not_wait_for_the_platform_wallet() -> None:
    merchant = merchant_with_wallets()  # its wallets' ids are below the platform's
    paid_collection(merchant=merchant)
    platform_wallet = platform_wallet_get(mode=Mode.TEST)
    holding, release = threading.Event(), threading.Event()

    def hold_the_platform_wallet() -> None:
        with transaction.atomic():
            Wallet.objects.select_for_update().get(pk=platform_wallet.pk)
            holding.set()
            release.wait(timeout=30)

    def settle() -> Any:
        holding.wait(timeout=30)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '3s'")  # waiting on the platform wallet fails
        try:
            return settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)
        finally:
            release.set()

    results = run_together([hold_the_platform_wallet, settle])

    assert isinstance(results[1], Settlement)
    assert wallet_of(merchant).available_balance == Decimal("7000.00")


def test_a_merchant_created_after_the_platform_settles_its_shares() -> None:
    platform_wallet = platform_wallet_get(mode=Mode.TEST)  # the lower wallet ids
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant, shares={subaccount_for(merchant): Decimal("700.00")})

    settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)

    assert settlement is not None
    platform_wallet.refresh_from_db()
    assert platform_wallet.available_balance == Decimal("700.00")
