"""The settlement tasks' bodies (called directly, as unit tests of a task do): the beat task
queues one run per due merchant and mode, a run task settles once however often it runs, the
share tasks create each payout once."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from collections_app.models import CollectionTransaction
from merchants.models import Mode
from payouts.models import Payout
from settlements import tasks
from settlements.models import Settlement, SettlementShare
from tests.settlements.helpers import merchant_with_wallets, paid_collection, subaccount_for

pytestmark = pytest.mark.django_db


def test_the_beat_task_queues_a_run_for_each_due_merchant_and_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    queued: list[tuple[int, str]] = []
    monkeypatch.setattr(
        tasks.settlement_run_task,
        "delay",
        lambda merchant_id, mode: queued.append((merchant_id, mode)),
    )
    merchant, other, idle = (
        merchant_with_wallets("One"),
        merchant_with_wallets("Two"),
        merchant_with_wallets("Idle"),
    )
    paid_collection(merchant=merchant)
    paid_collection(merchant=other)
    # Paid now in live mode: due on the next business day, not yet.
    paid_collection(merchant=merchant, mode=Mode.LIVE, paid_at=timezone.now())

    assert tasks.settlements_run_due_task() == 2

    assert sorted(queued) == sorted([(merchant.pk, Mode.TEST), (other.pk, Mode.TEST)])
    assert idle.pk not in [merchant_id for merchant_id, _ in queued]


def test_the_beat_task_queues_live_collections_once_due(monkeypatch: pytest.MonkeyPatch) -> None:
    queued: list[tuple[int, str]] = []
    monkeypatch.setattr(
        tasks.settlement_run_task,
        "delay",
        lambda merchant_id, mode: queued.append((merchant_id, mode)),
    )
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant, mode=Mode.LIVE, paid_at=timezone.now() - timedelta(days=8))

    tasks.settlements_run_due_task()

    assert queued == [(merchant.pk, Mode.LIVE)]


def test_the_run_task_settles_once_however_often_it_runs() -> None:
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant)

    first = tasks.settlement_run_task.run(merchant.pk, Mode.TEST)
    second = tasks.settlement_run_task.run(merchant.pk, Mode.TEST)

    assert first == Settlement.objects.get().settlement_id
    assert second is None
    assert not CollectionTransaction.objects.filter(settlement__isnull=True).exists()


def test_the_share_task_run_twice_creates_one_payout_per_share() -> None:
    merchant = merchant_with_wallets()
    first, second = subaccount_for(merchant), subaccount_for(merchant)
    paid_collection(merchant=merchant, shares={first: Decimal("700.00"), second: Decimal("5")})
    tasks.settlement_run_task.run(merchant.pk, Mode.TEST)
    settlement = Settlement.objects.get()

    tasks.settlement_shares_pay_task.run(settlement.pk)
    tasks.settlement_shares_pay_task.run(settlement.pk)

    assert Payout.objects.count() == 2
    assert not SettlementShare.objects.filter(payout__isnull=True).exists()


def test_the_sweeper_task_recovers_a_share_whose_task_was_lost(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SETTLEMENT_SHARE_PAYOUT_AFTER_SECONDS = 0
    merchant = merchant_with_wallets()
    paid_collection(merchant=merchant, shares={subaccount_for(merchant): Decimal("700.00")})
    tasks.settlement_run_task.run(merchant.pk, Mode.TEST)  # its share task never runs

    summary = tasks.settlement_shares_sweep_task.run()

    assert summary == "1 share(s) without a payout: 1 payout(s) created, 0 error(s)."
    assert SettlementShare.objects.get().payout is not None
    assert tasks.settlement_shares_sweep_task.run().startswith("0 share(s)")


def test_beat_runs_the_settlement_and_share_sweeper_tasks(settings) -> None:  # type: ignore[no-untyped-def]
    run = settings.CELERY_BEAT_SCHEDULE["settlements-run-due"]
    sweep = settings.CELERY_BEAT_SCHEDULE["settlements-share-payouts-sweep"]

    assert run["task"] == tasks.settlements_run_due_task.name
    assert run["schedule"] == timedelta(seconds=settings.SETTLEMENT_RUN_SECONDS)
    assert sweep["task"] == tasks.settlement_shares_sweep_task.name
    assert sweep["schedule"] == timedelta(seconds=settings.SETTLEMENT_SHARE_SWEEP_SECONDS)
