"""When collected money settles: the Lagos business-day calendar and each mode's cut-off.

Test mode settles at once: every run takes every paid collection (cut-off: now). Live mode is
T+1 on business days: a collection paid on Lagos day D settles on the first business day after
D (Monday to Friday, not one of ``SETTLEMENT_HOLIDAYS``), at or after ``SETTLEMENT_LIVE_HOUR``
Lagos time. So a live run at ``now`` takes the collections paid before the start of the latest
business day whose settlement hour has come (``settlement_cutoff``).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.utils import timezone

from core.dates import local_date, local_day_start
from merchants.models import Mode

# How far back a live cut-off is looked for: more than any run of holidays and weekends.
LOOKBACK_DAYS = 366


def settlement_holidays() -> frozenset[date]:
    """``SETTLEMENT_HOLIDAYS`` as dates (the settings check them at start-up)."""
    return frozenset(date.fromisoformat(str(day)) for day in settings.SETTLEMENT_HOLIDAYS)


def is_business_day(day: date, *, holidays: frozenset[date] | None = None) -> bool:
    """Monday to Friday and not a settlement holiday."""
    if holidays is None:
        holidays = settlement_holidays()
    return day.weekday() < 5 and day not in holidays


def next_business_day_after(day: date) -> date:
    """The first business day strictly after ``day``."""
    holidays = settlement_holidays()
    candidate = day + timedelta(days=1)
    for _step in range(LOOKBACK_DAYS):
        if is_business_day(candidate, holidays=holidays):
            return candidate
        candidate += timedelta(days=1)
    raise ValueError(f"no business day within {LOOKBACK_DAYS} days after {day}")


def settlement_hour_on(day: date) -> datetime:
    """``SETTLEMENT_LIVE_HOUR`` on the Lagos ``day`` (aware)."""
    return timezone.make_aware(datetime.combine(day, time(hour=settings.SETTLEMENT_LIVE_HOUR)))


def live_settlement_due_at(paid_at: datetime) -> datetime:
    """When a live collection paid at ``paid_at`` is due to settle."""
    return settlement_hour_on(next_business_day_after(local_date(paid_at)))


def settlement_due_at(*, mode: str, paid_at: datetime) -> datetime:
    """When a collection of ``mode`` paid at ``paid_at`` is due to settle (test: at once)."""
    if mode == Mode.TEST:
        return paid_at
    return live_settlement_due_at(paid_at)


def live_settlement_cutoff(now: datetime) -> datetime | None:
    """The start of the latest Lagos business day whose settlement hour is at or before
    ``now``: every live collection paid before it is due. ``None`` if there is no such day in
    the last ``LOOKBACK_DAYS`` (a calendar of nothing but holidays)."""
    holidays = settlement_holidays()
    day = local_date(now)
    for _step in range(LOOKBACK_DAYS):
        if is_business_day(day, holidays=holidays) and settlement_hour_on(day) <= now:
            return local_day_start(day)
        day -= timedelta(days=1)
    return None


def settlement_cutoff(*, mode: str, now: datetime) -> datetime | None:
    """A run at ``now`` settles the collections of ``mode`` paid before this instant."""
    if mode == Mode.TEST:
        return now
    return live_settlement_cutoff(now)
