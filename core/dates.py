"""Local time: the one time zone (``TIME_ZONE``, Africa/Lagos) every person-facing page, report
and export uses, always with its offset shown, and the bounds of a local calendar day.

Stored instants stay UTC; a day in a filter, a statement or a dashboard is a Lagos day.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.utils import dateformat, timezone


def local_now() -> datetime:
    return timezone.localtime()


def local_today() -> date:
    return timezone.localdate()


def local_date(value: datetime) -> date:
    """The local calendar day an instant falls on."""
    return timezone.localtime(value).date()


def local_day_start(day: date) -> datetime:
    """The instant the local ``day`` begins (aware)."""
    return timezone.make_aware(datetime.combine(day, time.min))


def local_day_bounds(first: date, last: date | None = None) -> tuple[datetime, datetime]:
    """``[start, end)`` covering the local days ``first`` to ``last`` (both included)."""
    last = first if last is None else last
    return local_day_start(first), local_day_start(last + timedelta(days=1))


def local_isoformat(value: datetime | None) -> str:
    """``2026-11-23T00:30:00+01:00``; ``""`` for no value. For CSV exports and reports."""
    if value is None:
        return ""
    return timezone.localtime(value).isoformat(timespec="seconds")


def local_text(value: datetime | None) -> str:
    """``2026-11-23 00:30:00 +01:00``; ``"—"`` for no value. For pages people read."""
    if value is None:
        return "—"
    local = timezone.localtime(value)
    return f"{local:%Y-%m-%d %H:%M:%S} {utc_offset_text(local)}"


def utc_offset_text(value: datetime | None = None) -> str:
    """The local offset from UTC as ``+01:00``."""
    local = timezone.localtime(value)
    offset = local.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{rest:02d}"


def local_zone_label() -> str:
    """``Africa/Lagos (UTC+01:00)``: how pages name the time zone they use."""
    return f"{timezone.get_current_timezone_name()} (UTC{utc_offset_text()})"


def local_zone_short_label(value: datetime | None = None) -> str:
    """``WAT (Lagos)``: the zone's abbreviation at ``value`` and its city, for one line a
    customer reads; ``UTC+01:00 (Lagos)`` when the zone has no abbreviation."""
    local = timezone.localtime(value)
    abbreviation = local.tzname() or ""
    if not abbreviation or abbreviation[0] in "+-":
        abbreviation = f"UTC{utc_offset_text(local)}"
    city = timezone.get_current_timezone_name().rsplit("/", 1)[-1].replace("_", " ")
    return abbreviation if city == abbreviation else f"{abbreviation} ({city})"


def local_clock_text(value: datetime) -> str:
    """``08:05 WAT (Lagos), 24 Nov 2026``: an instant as the checkout shows it."""
    local = timezone.localtime(value)
    return f"{local:%H:%M} {local_zone_short_label(local)}, {dateformat.format(local, 'j M Y')}"
