"""Concurrent refunds on real PostgreSQL rows with real threads: the sum of refunds never
exceeds what the customer paid, and one idempotency key makes one refund."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection

from collections_app.models import CollectionTransaction
from core.exceptions import ApplicationError
from merchants.models import Merchant, Mode
from refunds.models import Refund
from refunds.services import RefundCreateResult, refund_create
from settlements.platform_ledger import platform_balances
from tests.refunds.factories import paid_collection

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
        thread.join(timeout=30)
    return results


def refund(merchant: Merchant, collection: CollectionTransaction, amount: str, key: str):  # type: ignore[no-untyped-def]
    return lambda: refund_create(
        merchant=merchant,
        mode=Mode.TEST,
        transaction_reference=collection.reference,
        amount=Decimal(amount),
        reason="",
        idempotency_key=key,
        initiated_by="test",
    )


def test_concurrent_refunds_never_exceed_the_amount_paid(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)

    results = run_together([refund(merchant, collection, "2500.00", f"k{n}") for n in range(6)])

    accepted = [r for r in results if isinstance(r, RefundCreateResult)]
    refused = [r for r in results if isinstance(r, ApplicationError)]
    assert len(accepted) == 2  # 2 x 2,500.00 of the 7,000.00 owed; a third needs the wallet
    assert len(refused) == 4
    collection.refresh_from_db()
    assert collection.amount_refunded == Decimal("5000.00")
    assert collection.amount_refunded <= collection.amount_paid
    assert platform_balances(mode=Mode.TEST).equation_holds


def test_concurrent_refunds_with_a_funded_wallet_stop_at_the_amount_paid(
    merchant: Merchant,
) -> None:
    from tests.refunds.factories import wallet_of
    from wallets.services import wallet_fund

    collection = paid_collection(merchant=merchant)
    wallet_fund(wallet_id=wallet_of(merchant).pk, amount=Decimal("50000.00"), reference="f")

    results = run_together([refund(merchant, collection, "2000.00", f"k{n}") for n in range(6)])

    accepted = [r for r in results if isinstance(r, RefundCreateResult)]
    assert len(accepted) == 3  # 3 x 2,000.00; a fourth would pass 7,205.00
    collection.refresh_from_db()
    assert collection.amount_refunded == Decimal("6000.00")
    assert platform_balances(mode=Mode.TEST).equation_holds


def test_concurrent_requests_with_one_key_make_one_refund(merchant: Merchant) -> None:
    collection = paid_collection(merchant=merchant)

    results = run_together([refund(merchant, collection, "100.00", "same") for _ in range(4)])

    assert all(isinstance(r, RefundCreateResult) for r in results), results
    assert sum(1 for r in results if not r.duplicate) == 1
    assert Refund.objects.count() == 1
    collection.refresh_from_db()
    assert collection.amount_refunded == Decimal("100.00")
