"""The finance dashboard's 14-day chart: an inline SVG drawn on the server, no JavaScript.

One bar per Lagos day, its height the amount of the day's successful payouts, its count above
it; the day's failed payouts marked under the baseline; the day under each bar. Each bar, failed
mark and day label is a link (``<a href>`` inside the SVG) to the matching payout list, with a
``<title>`` tooltip. Coordinates come from integer kobo and ``Decimal``, never ``float``; every
text and attribute goes through ``format_html``, so the result is safe without ``mark_safe``.
The colours come from classes styled with the admin's CSS variables (dark mode included) by the
page that embeds the chart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.money import format_amount_display, minor_units_from_decimal
from payouts.models import PayoutStatus
from reconciliation.dashboard import NOT_FINAL_STATUSES, SeriesPoint

# Layout, in SVG user units.
SLOT_WIDTH = 44
BAR_WIDTH = 28
PLOT_LEFT = 96
PLOT_TOP = 24
PLOT_HEIGHT = 160
BASELINE = PLOT_TOP + PLOT_HEIGHT
FAILED_ROW = BASELINE + 16
WEEKDAY_ROW = BASELINE + 34
DATE_ROW = BASELINE + 48
HEIGHT = BASELINE + 56
MIN_VISIBLE_BAR = Decimal(1)
COORDINATE = Decimal("0.01")
ZERO_AMOUNT = Decimal("0.00")

SVG_NAMESPACE = "http://www.w3.org/2000/svg"

# (day, statuses or None for every status) -> the payout list's URL.
DayUrl = Callable[[date, Sequence[str] | None], str]


def _number(value: Decimal | int) -> str:
    """A coordinate as SVG reads it: ``"12.35"``, ``"0"``."""
    return format(Decimal(value).quantize(COORDINATE, rounding=ROUND_HALF_UP).normalize(), "f")


def _join(parts: Iterable[SafeString]) -> SafeString:
    return format_html_join("", "{}", ((part,) for part in parts))


def _bar_height(amount: Decimal, largest_kobo: int) -> Decimal:
    kobo = minor_units_from_decimal(amount)
    if kobo <= 0 or largest_kobo <= 0:
        return Decimal(0)
    height = Decimal(kobo) * PLOT_HEIGHT / Decimal(largest_kobo)
    return max(height, MIN_VISIBLE_BAR)


def _axis(largest: Decimal, width: int) -> SafeString:
    """Gridlines with their amounts: zero, half and the largest day."""
    levels = [(Decimal(0), ZERO_AMOUNT)]
    if largest > 0:
        levels += [(Decimal(PLOT_HEIGHT) / 2, largest / 2), (Decimal(PLOT_HEIGHT), largest)]
    return _join(
        format_html(
            '<line class="dash-grid" x1="{}" y1="{}" x2="{}" y2="{}"/>'
            '<text class="dash-axis" x="{}" y="{}" text-anchor="end">{}</text>',
            PLOT_LEFT,
            _number(BASELINE - height),
            PLOT_LEFT + width,
            _number(BASELINE - height),
            PLOT_LEFT - 6,
            _number(BASELINE - height + 4),
            format_amount_display(amount),
        )
        for height, amount in levels
    )


def _day_link(
    css_class: str, href: str, count: int, day: date, title: str, mark: SafeString
) -> SafeString:
    """One of a day's marks as a link to the payouts it counts, with the count and the day as
    data attributes and ``title`` as its tooltip."""
    return format_html(
        '<a class="{}" href="{}" data-count="{}" data-day="{}"><title>{}</title>{}</a>',
        css_class,
        href,
        count,
        day.isoformat(),
        title,
        mark,
    )


def _bar(
    point: SeriesPoint, index: int, largest_kobo: int, day_url: DayUrl, zone: str
) -> SafeString:
    slot_left = PLOT_LEFT + index * SLOT_WIDTH
    bar_left = slot_left + (SLOT_WIDTH - BAR_WIDTH) // 2
    centre = slot_left + SLOT_WIDTH // 2
    height = _bar_height(point.successful_amount, largest_kobo)
    top = Decimal(BASELINE) - height
    day_text = f"{point.day:%a} {point.day.isoformat()} ({zone})"
    bar = _day_link(
        "dash-bar-link",
        day_url(point.day, (PayoutStatus.SUCCESSFUL,)),
        point.successful_count,
        point.day,
        f"{day_text}: {point.successful_count} successful, "
        f"{format_amount_display(point.successful_amount)}",
        format_html(
            '<rect class="dash-hit" x="{}" y="{}" width="{}" height="{}"/>'
            '<rect class="dash-bar" x="{}" y="{}" width="{}" height="{}"/>'
            '<text class="dash-count" x="{}" y="{}" text-anchor="middle">{}</text>',
            slot_left,
            PLOT_TOP,
            SLOT_WIDTH,
            PLOT_HEIGHT,
            bar_left,
            _number(top),
            BAR_WIDTH,
            _number(height),
            centre,
            _number(top - 4),
            point.successful_count,
        ),
    )
    failed = SafeString("")
    if point.failed_count:
        failed = _day_link(
            "dash-failed-link",
            day_url(point.day, (PayoutStatus.FAILED,)),
            point.failed_count,
            point.day,
            f"{day_text}: {point.failed_count} failed",
            format_html(
                '<text class="dash-failed" x="{}" y="{}" text-anchor="middle">\u2715 {}</text>',
                centre,
                FAILED_ROW,
                point.failed_count,
            ),
        )
    total = point.successful_count + point.failed_count + point.pending_count
    label = _day_link(
        "dash-day-link",
        day_url(point.day, None),
        total,
        point.day,
        f"{day_text}: {total} payouts ({point.successful_count} successful, "
        f"{point.failed_count} failed, {point.pending_count} pending)",
        format_html(
            '<text class="dash-axis" x="{}" y="{}" text-anchor="middle">{}</text>'
            '<text class="dash-axis" x="{}" y="{}" text-anchor="middle">{}</text>',
            centre,
            WEEKDAY_ROW,
            f"{point.day:%a}",
            centre,
            DATE_ROW,
            f"{point.day.day} {point.day:%b}",
        ),
    )
    return _join((bar, failed, label))


def daily_series_svg(points: Sequence[SeriesPoint], *, day_url: DayUrl, zone: str) -> SafeString:
    """The chart of ``points`` (oldest first) as SVG markup, safe to put in a page as it is.

    ``day_url(day, statuses)`` gives the payout list of that day's payouts in those statuses
    (every status for ``None``); ``zone`` names the time zone of the days (``local_zone_label``).
    """
    width = SLOT_WIDTH * len(points)
    largest = max((point.successful_amount for point in points), default=ZERO_AMOUNT)
    largest_kobo = minor_units_from_decimal(largest)
    first, last = (points[0].day, points[-1].day) if points else (None, None)
    title = (
        f"Successful payouts per day, {first} to {last} ({zone}): bar height is the amount, the "
        "figure above it the count; \u2715 marks failed payouts"
    )
    pending = ", ".join(NOT_FINAL_STATUSES)
    return format_html(
        '<svg xmlns="{}" class="dash-chart" viewBox="0 0 {} {}" role="img" '
        'aria-labelledby="dash-chart-title" data-testid="dashboard-chart">'
        '<title id="dash-chart-title">{}</title>'
        "<desc>Pending means {}.</desc>"
        "{}{}"
        "</svg>",
        SVG_NAMESPACE,
        PLOT_LEFT + width + 8,
        HEIGHT,
        title,
        pending,
        _axis(largest, width),
        _join(
            _bar(point, index, largest_kobo, day_url, zone) for index, point in enumerate(points)
        ),
    )
