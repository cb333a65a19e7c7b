"""Races on real PostgreSQL rows with real threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from collections_app.models import (
    Channel,
    CollectionTransaction,
    Customer,
    PaymentStatus,
    TransactionAttempt,
)
from collections_app.services import (
    CustomerInfo,
    transaction_confirm,
    transaction_initialize,
    transactions_expire_due,
)
from merchants.models import Mode
from tests.collections_app.factories import CollectionTransactionFactory
from tests.payment_items.factories import PaymentItemFactory
from webhooks.models import Event

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


def test_parallel_identical_initializations_create_one_transaction(fee_schedule) -> None:
    item = PaymentItemFactory(amount=Decimal("7000.00"))

    def initialize() -> str:
        return transaction_initialize(
            merchant=item.merchant,
            mode=Mode.TEST,
            payment_item_id=item.pk,
            transaction_reference="race-1",
            channel=Channel.CARD,
            amount=Decimal("7000.00"),
            customer_info=CustomerInfo("race@example.com", "08031234567", "Ada", "Obi"),
            callback_url="https://8.8.8.8/callback",
        ).transaction.reference

    results = run_together([initialize] * 5)
    assert all(isinstance(r, str) for r in results), results
    assert len(set(results)) == 1
    assert CollectionTransaction.objects.count() == 1
    assert Customer.objects.count() == 1


def test_parallel_paid_and_failed_confirmations_apply_exactly_one() -> None:
    txn = CollectionTransactionFactory()

    def confirm(outcome: str) -> Callable[[], bool]:
        return lambda: transaction_confirm(collection=txn, outcome=outcome).applied

    results = run_together([confirm(PaymentStatus.PAID), confirm(PaymentStatus.FAILED)] * 2)
    assert sorted(results) == [False, False, False, True], results
    txn.refresh_from_db()
    applied = TransactionAttempt.objects.get(transaction=txn, applied=True)
    assert txn.payment_status == applied.outcome
    assert txn.no_of_attempts == 4
    assert (txn.paid_at is not None) is (txn.payment_status == PaymentStatus.PAID)


def test_parallel_declines_count_every_attempt_and_fail_once_at_the_limit() -> None:
    """Six declined cards at once with a limit of three: the count grows under the row lock,
    so exactly the third fails the transaction (one event); the rest are recorded."""
    txn = CollectionTransactionFactory()

    def decline() -> int | None:
        return transaction_confirm(
            collection=txn, outcome=PaymentStatus.FAILED, attempt_limit=3
        ).attempts_left

    results = run_together([decline] * 6)
    assert sorted(results, key=lambda left: -1 if left is None else left) == [
        None,
        None,
        None,
        None,
        1,
        2,
    ], results
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.FAILED
    assert txn.no_of_attempts == 6
    attempts = TransactionAttempt.objects.filter(transaction=txn)
    assert attempts.filter(applied=True).count() == 1
    assert attempts.filter(applied=False, status_before=PaymentStatus.PENDING).count() == 2
    assert attempts.filter(status_before=PaymentStatus.FAILED).count() == 3
    assert list(Event.objects.values_list("event_type", flat=True)) == ["transaction.failed"]


def test_expiry_racing_a_payment_leaves_one_consistent_outcome() -> None:
    txn = CollectionTransactionFactory(expires_at=timezone.now() - timedelta(seconds=1))
    results = run_together(
        [
            lambda: transactions_expire_due().expired,
            lambda: transaction_confirm(collection=txn, outcome=PaymentStatus.PAID).applied,
        ]
    )
    txn.refresh_from_db()
    payment_applied = results[1]
    assert txn.payment_status in (PaymentStatus.EXPIRED, PaymentStatus.PAID)
    assert (txn.payment_status == PaymentStatus.PAID) is payment_applied
    assert (txn.paid_at is not None) is payment_applied
    assert results[0] == (0 if payment_applied else 1)
