"""Real threads against one wallet on PostgreSQL: the row lock must serialise every balance
change. Without ``select_for_update`` in ``wallet_lock``, or with a ``wallet_reserve_if_covered``
that read the balance before its update, these tests lose updates or overdraw and fail."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.db import connections, transaction
from django.test import Client

from merchants.models import Mode
from merchants.services import merchant_create
from tests.wallets.writers import wallet_reserve
from wallets.api.views import funding_signature_compute
from wallets.exceptions import InsufficientBalanceError
from wallets.models import FundingTransfer, LedgerEntry, LedgerEntryType, Wallet
from wallets.selectors import ledger_snapshot_mismatch_count, wallet_totals
from wallets.services import (
    wallet_fund,
    wallet_lock,
    wallet_reserve_if_covered,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
]

D = Decimal
THREADS = 12
OPERATIONS_PER_THREAD = 12


def _run_in_threads(count: int, target: Callable[[int], Any]) -> list[Any]:
    """Starts ``count`` threads together (barrier) and returns their results or exceptions."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = target(index)
        except Exception as error:  # noqa: BLE001 - reported to the test below
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    return results


@pytest.fixture
def wallet() -> Wallet:
    merchant = merchant_create(name="Busy Shop", email="busy@example.com").merchant
    wallet = Wallet.objects.get(merchant=merchant, mode=Mode.TEST)
    wallet_fund(wallet_id=wallet.pk, amount=D("100.00"), reference="SEED-0")
    return wallet


def test_concurrent_funding_and_reserving_never_loses_money(wallet: Wallet) -> None:
    """Half the threads fund 10.00 at a time, half reserve 7.00 at a time (some reserves fail
    for lack of balance). Every success is accounted for exactly, balances never go negative
    and each balance equals the sum of its ledger deltas."""

    def work(index: int) -> dict[str, int]:
        done = {"funded": 0, "reserved": 0, "refused": 0}
        for step in range(OPERATIONS_PER_THREAD):
            if index % 2 == 0:
                wallet_fund(wallet_id=wallet.pk, amount=D("10.00"), reference=f"F-{index}-{step}")
                done["funded"] += 1
            else:
                try:
                    with transaction.atomic():
                        locked = wallet_lock(wallet_id=wallet.pk)
                        wallet_reserve(
                            wallet=locked, amount=D("7.00"), reference=f"R-{index}-{step}"
                        )
                    done["reserved"] += 1
                except InsufficientBalanceError:
                    done["refused"] += 1
        return done

    results = _run_in_threads(THREADS, work)
    errors = [result for result in results if isinstance(result, Exception)]
    assert errors == []
    funded = sum(result["funded"] for result in results)
    reserved = sum(result["reserved"] for result in results)

    wallet.refresh_from_db()
    assert wallet.available_balance >= 0
    assert wallet.reserved_balance >= 0
    assert wallet.reserved_balance == D("7.00") * reserved
    assert wallet.available_balance == D("100.00") + D("10.00") * funded - D("7.00") * reserved
    totals = wallet_totals(wallet=wallet)
    assert totals.balanced
    assert totals.funded == D("100.00") + D("10.00") * funded
    assert LedgerEntry.objects.filter(wallet=wallet).count() == 1 + funded + reserved
    assert LedgerEntry.objects.filter(available_balance_after__lt=0).count() == 0


def test_concurrent_reserves_never_overdraw(wallet: Wallet) -> None:
    """100.00 available, twelve threads each try to reserve 30.00: exactly three succeed."""

    def reserve(index: int) -> bool:
        try:
            with transaction.atomic():
                locked = wallet_lock(wallet_id=wallet.pk)
                wallet_reserve(wallet=locked, amount=D("30.00"), reference=f"R-{index}")
        except InsufficientBalanceError:
            return False
        return True

    results = _run_in_threads(THREADS, reserve)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert results.count(True) == 3
    wallet.refresh_from_db()
    assert (wallet.available_balance, wallet.reserved_balance) == (D("10.00"), D("90.00"))
    assert wallet_totals(wallet=wallet).balanced


def test_concurrent_atomic_reservations_never_overdraw(wallet: Wallet) -> None:
    """100.00 available, twelve threads each reserve 30.00 with the conditional update: exactly
    three succeed, each with its entry, and every snapshot is a running sum."""

    def reserve(index: int) -> bool:
        try:
            with transaction.atomic():
                wallet_reserve_if_covered(
                    wallet_id=wallet.pk, amount=D("30.00"), reference=f"A-{index}"
                )
        except InsufficientBalanceError:
            return False
        return True

    results = _run_in_threads(THREADS, reserve)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert results.count(True) == 3
    wallet.refresh_from_db()
    assert (wallet.available_balance, wallet.reserved_balance) == (D("10.00"), D("90.00"))
    reserves = LedgerEntry.objects.filter(wallet=wallet, entry_type=LedgerEntryType.PAYOUT_RESERVE)
    assert reserves.count() == 3
    assert ledger_snapshot_mismatch_count() == 0
    assert wallet_totals(wallet=wallet).balanced


def test_atomic_reservations_fundings_and_locked_reservations_interleave_without_loss(
    wallet: Wallet,
) -> None:
    """A third of the threads fund 10.00 at a time, a third reserve 7.00 after locking the row
    (``wallet_reserve``), a third reserve 7.00 with the conditional update: both kinds of
    reservation wait for each other's row lock, so nothing is lost or overdrawn."""

    def work(index: int) -> dict[str, int]:
        done = {"funded": 0, "reserved": 0, "refused": 0}
        for step in range(OPERATIONS_PER_THREAD):
            reference = f"M-{index}-{step}"
            try:
                if index % 3 == 0:
                    wallet_fund(wallet_id=wallet.pk, amount=D("10.00"), reference=reference)
                    done["funded"] += 1
                    continue
                with transaction.atomic():
                    if index % 3 == 1:
                        locked = wallet_lock(wallet_id=wallet.pk)
                        wallet_reserve(wallet=locked, amount=D("7.00"), reference=reference)
                    else:
                        wallet_reserve_if_covered(
                            wallet_id=wallet.pk, amount=D("7.00"), reference=reference
                        )
                done["reserved"] += 1
            except InsufficientBalanceError:
                done["refused"] += 1
        return done

    results = _run_in_threads(THREADS, work)
    assert [r for r in results if isinstance(r, Exception)] == []
    funded = sum(result["funded"] for result in results)
    reserved = sum(result["reserved"] for result in results)

    wallet.refresh_from_db()
    assert wallet.reserved_balance == D("7.00") * reserved
    assert wallet.available_balance == D("100.00") + D("10.00") * funded - D("7.00") * reserved
    assert wallet.available_balance >= 0
    assert LedgerEntry.objects.filter(wallet=wallet).count() == 1 + funded + reserved
    assert ledger_snapshot_mismatch_count() == 0
    assert wallet_totals(wallet=wallet).balanced


def test_concurrent_replays_of_one_notification_credit_once(wallet: Wallet, settings) -> None:
    settings.FUNDING_WEBHOOK_SECRET = "concurrency-secret"
    body = json.dumps(
        {
            "reference": "PRV-REPLAYED",
            "account_number": wallet.static_account_number,
            "amount": "500.00",
        }
    ).encode()
    signature = funding_signature_compute(body, secret="concurrency-secret")

    def post(_index: int) -> tuple[int, bool]:
        response = Client().post(
            "/api/v1/webhooks/funding",
            data=body,
            content_type="application/json",
            HTTP_X_PROVIDER_SIGNATURE=signature,
        )
        return response.status_code, response.json()["data"]["duplicate"]

    results = _run_in_threads(THREADS, post)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert {status for status, _duplicate in results} == {200}
    assert [duplicate for _status, duplicate in results].count(False) == 1
    wallet.refresh_from_db()
    assert wallet.available_balance == D("600.00")
    assert FundingTransfer.objects.filter(provider_reference="PRV-REPLAYED").count() == 1
    assert LedgerEntry.objects.filter(reference="PRV-REPLAYED").count() == 1
