"""``benchmarks/capacity.py`` at a tiny size: it creates and dispatches its payouts and measures
statements, WAL bytes, CPU and the wallet's lock hold for each (docs/scaling.md's capacity
model reads these figures from ``make bench``)."""

from __future__ import annotations

import pytest

from benchmarks.capacity import capacity_measure
from payouts.models import Payout, PayoutStatus

pytestmark = pytest.mark.django_db(transaction=True)


def test_capacity_measures_each_create_and_dispatch_of_five_payouts() -> None:
    report = capacity_measure(payouts=5)

    create, dispatch = report.create.per_payout, report.dispatch.per_payout
    assert report.create.payouts == report.dispatch.payouts == 5
    assert report.dispatched == 5
    assert Payout.objects.filter(status=PayoutStatus.RESERVED).count() == 0
    assert 1 <= create["statements"] <= 20
    assert create["wal_bytes"] > 0
    assert dispatch["wal_bytes"] > 0
    assert report.dispatch.statements > 0
    assert create["python_cpu_ms"] > 0
    hold = report.lock_hold()
    assert hold["samples"] == 5
    assert 0 < hold["p50_ms"] <= hold["p99_ms"]
    assert set(report.as_dict()) == {"create", "dispatch", "dispatched", "lock_hold"}
