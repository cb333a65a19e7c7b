"""The beat task of the sweeps, and concurrent runs on PostgreSQL: however many runs meet on a
wallet (beat runs, "sweep now"), the day's sweep is one payout."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings
from django.db import connections, transaction

from merchants.models import Mode
from merchants.services import MerchantCreated
from payouts.models import Payout
from sweeps.models import Sweep, SweepSchedule
from sweeps.services import sweep_run_due, sweep_run_now
from sweeps.tasks import sweep_run_due_task
from tests.payouts.helpers import fund_wallet
from tests.sweeps.factories import SettlementAccountFactory, SweepScheduleFactory
from wallets.models import Wallet
from wallets.selectors import wallet_get

LAGOS = ZoneInfo("Africa/Lagos")
MONDAY_0910 = datetime(2026, 11, 23, 9, 10, tzinfo=LAGOS)
THREADS = 6


def _sweep_ready(merchant_account: MerchantCreated) -> Wallet:
    """Daily at 09:00, an account in effect, NGN 100,000 available in the test wallet."""
    wallet = wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)
    SettlementAccountFactory(
        merchant=merchant_account.merchant,
        account_number="0123456789",
        effective_at=MONDAY_0910 - timedelta(days=7),
    )
    SweepScheduleFactory(wallet=wallet)
    return fund_wallet(wallet, "100000.00")


@pytest.mark.django_db
def test_the_beat_entry_runs_the_task_every_sweep_run_seconds() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["sweeps-run-due"]

    assert entry["task"] == "sweeps.tasks.sweep_run_due_task"
    assert entry["schedule"] == timedelta(seconds=60)


@pytest.mark.django_db
def test_the_task_sweeps_what_is_due_now(merchant_account: MerchantCreated) -> None:
    wallet = _sweep_ready(merchant_account)
    SweepSchedule.objects.update(time=time(0, 0))

    summary = sweep_run_due_task()

    assert summary.startswith("sweep_run_due: 1 swept")
    assert Payout.objects.filter(wallet=wallet).count() == 1
    assert sweep_run_due_task().startswith("sweep_run_due: 0 swept")


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


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_concurrent_runs_pay_once(merchant_account: MerchantCreated) -> None:
    wallet = _sweep_ready(merchant_account)

    def run(index: int) -> Any:
        if index % 2:
            return sweep_run_now(
                merchant=merchant_account.merchant, mode=Mode.TEST, now=MONDAY_0910
            )
        return sweep_run_due(now=MONDAY_0910)

    results = _run_in_threads(THREADS, run)

    assert not [result for result in results if isinstance(result, Exception)]
    [payout] = Payout.objects.filter(wallet=wallet)
    assert Sweep.objects.get().payout == payout
    wallet.refresh_from_db()
    assert wallet.available_balance == Decimal("100000.00") - payout.total_debit_amount


@pytest.mark.django_db(transaction=True)
def test_a_run_skips_a_wallet_another_run_holds_and_sweep_now_waits_for_it(
    merchant_account: MerchantCreated,
) -> None:
    wallet = _sweep_ready(merchant_account)
    holding = threading.Event()
    release = threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                SweepSchedule.objects.select_for_update().get(wallet=wallet)
                holding.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(timeout=30)
    try:
        busy = sweep_run_due(now=MONDAY_0910)
    finally:
        release.set()
        holder.join(timeout=30)
    made = sweep_run_now(merchant=merchant_account.merchant, mode=Mode.TEST, now=MONDAY_0910)

    assert (busy.busy, busy.swept) == (1, [])
    assert not made.duplicate
    assert Payout.objects.filter(wallet=wallet).count() == 1
