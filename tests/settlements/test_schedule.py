"""The live settlement calendar: T+1 on Lagos business days, at or after the settlement hour,
weekends and SETTLEMENT_HOLIDAYS skipped; test mode settles at once."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from merchants.models import Mode
from settlements.schedule import (
    is_business_day,
    live_settlement_cutoff,
    live_settlement_due_at,
    next_business_day_after,
    settlement_cutoff,
    settlement_due_at,
)


@pytest.fixture(autouse=True)
def _calendar(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SETTLEMENT_LIVE_HOUR = 9
    settings.SETTLEMENT_HOLIDAYS = ["2026-12-25", "2026-12-28"]


LAGOS = ZoneInfo("Africa/Lagos")


def lagos(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=LAGOS)


def test_weekdays_are_business_days_weekends_and_holidays_are_not() -> None:
    assert is_business_day(date(2026, 11, 27))  # Friday
    assert not is_business_day(date(2026, 11, 28))  # Saturday
    assert not is_business_day(date(2026, 11, 29))  # Sunday
    assert not is_business_day(date(2026, 12, 25))  # a holiday on a Friday


def test_the_next_business_day_skips_weekends_and_holidays() -> None:
    assert next_business_day_after(date(2026, 11, 26)) == date(2026, 11, 27)
    assert next_business_day_after(date(2026, 11, 27)) == date(2026, 11, 30)
    # Thursday 24 Dec: Friday 25 is a holiday, Monday 28 too.
    assert next_business_day_after(date(2026, 12, 24)) == date(2026, 12, 29)


def test_a_collection_paid_on_friday_is_due_monday_at_the_settlement_hour() -> None:
    assert live_settlement_due_at(lagos(2026, 11, 27, 23, 59)) == lagos(2026, 11, 30, 9, 0)


def test_a_collection_paid_in_the_early_lagos_morning_counts_for_that_lagos_day() -> None:
    # 23:30 UTC on Tuesday is 00:30 on Wednesday in Lagos: due on Thursday.
    paid_at = datetime(2026, 11, 24, 23, 30, tzinfo=UTC)
    assert live_settlement_due_at(paid_at) == lagos(2026, 11, 26, 9, 0)


def test_the_live_cutoff_is_the_start_of_the_latest_business_day_past_its_hour() -> None:
    # Monday before nine: Friday's run is the latest, it took what was paid up to Thursday.
    assert live_settlement_cutoff(lagos(2026, 11, 30, 8, 59)) == lagos(2026, 11, 27)
    # Monday at nine: Friday, Saturday and Sunday are due.
    assert live_settlement_cutoff(lagos(2026, 11, 30, 9, 0)) == lagos(2026, 11, 30)
    # Saturday: still Friday's.
    assert live_settlement_cutoff(lagos(2026, 11, 28, 15, 0)) == lagos(2026, 11, 27)
    # On a holiday nothing new is due.
    assert live_settlement_cutoff(lagos(2026, 12, 25, 12, 0)) == lagos(2026, 12, 24)


def test_the_settlement_hour_is_a_setting(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SETTLEMENT_LIVE_HOUR = 14
    assert live_settlement_cutoff(lagos(2026, 11, 26, 13, 0)) == lagos(2026, 11, 25)
    assert live_settlement_cutoff(lagos(2026, 11, 26, 14, 0)) == lagos(2026, 11, 26)


def test_test_mode_settles_at_once() -> None:
    now = lagos(2026, 11, 28, 3, 0)  # a Saturday night
    assert settlement_cutoff(mode=Mode.TEST, now=now) == now
    assert settlement_due_at(mode=Mode.TEST, paid_at=now) == now
    assert settlement_cutoff(mode=Mode.LIVE, now=now) == lagos(2026, 11, 27)
