"""``manage.py settle_collections``: settles what is due, one merchant or mode when asked, as at
``--now``; the summary on stdout (or one JSON object); usage errors before anything runs."""

from __future__ import annotations

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from merchants.models import Mode
from settlements.models import Settlement
from tests.settlements.helpers import merchant_with_wallets, paid_collection, wallet_of

pytestmark = pytest.mark.django_db


def _settle(*args: str) -> str:
    out = StringIO()
    call_command("settle_collections", *args, "--no-progress", stdout=out)
    return out.getvalue()


def test_it_settles_every_due_merchant_and_prints_a_line_each_and_the_summary() -> None:
    one, two = merchant_with_wallets("One"), merchant_with_wallets("Two")
    paid_collection(merchant=one)
    paid_collection(merchant=two)

    lines = _settle("--mode", "test").strip().splitlines()

    assert len(lines) == 3
    assert lines[-1] == "Settled 2 of 2 merchant run(s) due (test), net 14000.00; 0 error(s)."
    assert Settlement.objects.count() == 2


def test_merchant_limits_the_run_to_one_merchant() -> None:
    one, two = merchant_with_wallets("One"), merchant_with_wallets("Two")
    paid_collection(merchant=one)
    paid_collection(merchant=two)

    data = json.loads(_settle("--merchant", str(one.pk), "--json"))

    assert data["ok"] is True
    assert [s["merchant_id"] for s in data["settlements"]] == [one.pk]
    assert wallet_of(two).available_balance == Decimal("0.00")


def test_now_settles_live_collections_as_the_schedule_says(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SETTLEMENT_LIVE_HOUR = 9
    settings.SETTLEMENT_HOLIDAYS = []
    merchant = merchant_with_wallets()
    from django.utils import timezone

    paid_at = timezone.make_aware(timezone.datetime(2026, 11, 27, 12, 0))  # a Friday
    paid_collection(merchant=merchant, mode=Mode.LIVE, paid_at=paid_at)

    assert "Settled 0 of 0" in _settle("--mode", "live", "--now", "2026-11-30T08:00:00")
    assert "Settled 1 of 1" in _settle("--mode", "live", "--now", "2026-11-30T09:00:00+01:00")
    assert wallet_of(merchant, Mode.LIVE).available_balance == Decimal("7000.00")


def test_an_unknown_merchant_or_a_bad_instant_is_a_usage_error() -> None:
    with pytest.raises(CommandError, match="does not exist"):
        _settle("--merchant", "999999")
    with pytest.raises(CommandError, match="ISO 8601"):
        _settle("--now", "tomorrow")
