"""The finance dashboard's reads: one Lagos day's payouts by status, today's and yesterday's
beside it, the last 14 days, the payouts still waiting longest, the reconciliation exceptions
still to work, and the settlements of the chosen day and today in each mode.

Reads only, in a fixed number of queries whatever the number of payouts, days or statuses: one
grouped query covers every day of the page (the 14-day window and today), one each lists the
oldest pending, ambiguous, held for suspected fraud and escalated (unresolved past a day)
payouts, one counts them all, one counts the unresolved exceptions, one the provider transfer
events in conflict, one adds up the settlements. Every day is a local (``TIME_ZONE``, Africa/Lagos)
calendar day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, TypedDict
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import Count, F, Q, QuerySet, Sum
from django.db.models.functions import Coalesce, TruncDate

from core.dates import local_date, local_day_bounds, local_now
from merchants.models import Mode
from payouts.models import (
    FINAL_STATUSES,
    Payout,
    PayoutStatus,
    ProviderTransferEventRecord,
    ProviderTransferEventResult,
)
from reconciliation.selectors import exceptions_unresolved_count
from settlements.selectors import SettlementDayFigures, settlement_day_figures

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class _WaitingSince(TypedDict):
        waiting_since: datetime

    PayoutsWaiting = QuerySet[WithAnnotations[Payout, _WaitingSince]]

ZERO = Decimal("0.00")
SERIES_DAYS = 14
OLDEST_LIMIT = 10

# Waiting for the provider or for the dispatcher; ambiguous payouts are listed on their own.
WAITING_STATUSES: tuple[str, ...] = (
    PayoutStatus.RESERVED,
    PayoutStatus.PROCESSING,
    PayoutStatus.DISPATCHED,
)
# Not final yet: the series' "pending" (everything neither successful nor failed).
NOT_FINAL_STATUSES: tuple[str, ...] = (*WAITING_STATUSES, PayoutStatus.AMBIGUOUS)
# Sent, without a final answer: what the requery schedule escalates after a day.
ESCALATABLE_STATUSES: tuple[str, ...] = (PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS)


@dataclass(frozen=True)
class StatusFigures:
    """The payouts of one status created on one day."""

    status: str
    label: str
    count: int
    amount: Decimal
    fees: Decimal


@dataclass(frozen=True)
class DayFigures:
    """The payouts created on one Lagos day, by status, with their total and success rate."""

    day: date
    by_status: tuple[StatusFigures, ...]  # every status, in PayoutStatus order

    @property
    def count(self) -> int:
        return sum(row.count for row in self.by_status)

    @property
    def amount(self) -> Decimal:
        return sum((row.amount for row in self.by_status), ZERO)

    @property
    def fees(self) -> Decimal:
        return sum((row.fees for row in self.by_status), ZERO)

    def status_count(self, status: str) -> int:
        return next(row.count for row in self.by_status if row.status == status)

    @property
    def final_count(self) -> int:
        return sum(self.status_count(status) for status in FINAL_STATUSES)

    @property
    def success_rate(self) -> Decimal | None:
        """Successful / (successful + failed) in per cent, one decimal; ``None`` when none of
        the day's payouts is final yet."""
        final = self.final_count
        if final == 0:
            return None
        rate = Decimal(self.status_count(PayoutStatus.SUCCESSFUL) * 100) / Decimal(final)
        return rate.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class SeriesPoint:
    """One day of the 14-day series."""

    day: date
    successful_count: int
    successful_amount: Decimal
    failed_count: int
    pending_count: int  # created that day and not final yet (ambiguous included)


@dataclass(frozen=True)
class WaitingPayout:
    """A payout still waiting, with the instant its wait began and how long it has lasted."""

    payout: Payout
    since: datetime
    age: timedelta

    @property
    def age_text(self) -> str:
        return age_text(self.age)


@dataclass(frozen=True)
class FinanceDashboard:
    day: date
    today: date
    mode: str
    chosen: DayFigures
    today_figures: DayFigures  # the same object as ``chosen`` when the chosen day is today
    yesterday_figures: DayFigures  # the day before today (the routine is yesterday and today)
    series: tuple[SeriesPoint, ...]  # SERIES_DAYS points, oldest first, ending at ``day``
    oldest_pending: tuple[WaitingPayout, ...]  # reserved, processing, dispatched
    oldest_ambiguous: tuple[WaitingPayout, ...]
    pending_total: int
    ambiguous_total: int
    # Held for suspected fraud (``fraud_flagged_at``), flagged longest ago first.
    oldest_held: tuple[WaitingPayout, ...]
    held_total: int
    # Unresolved past ``PAYOUT_REQUERY_ESCALATE_AFTER`` (``requery_escalated_at``).
    oldest_escalated: tuple[WaitingPayout, ...]
    escalated_total: int
    # Provider transfer events that contradict a final payout (``conflict``), every day.
    transfer_event_conflicts: int
    exceptions: dict[str, int]  # {"open": n, "proposed": m}, every statement import
    # The settlements settled on the chosen day (when it is not today) and today, per mode
    # (live first); empty when not asked for.
    settlements: tuple[SettlementDayFigures, ...] = ()

    @property
    def is_today(self) -> bool:
        return self.day == self.today


def age_text(age: timedelta) -> str:
    """``"12 min"``, ``"3 h 12 min"``, ``"2 d 4 h"``; a negative age (clock skew) is ``"0 min"``."""
    minutes = max(age // timedelta(minutes=1), 0)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min"


def series_days(last: date) -> list[date]:
    """The ``SERIES_DAYS`` days ending at ``last``, oldest first."""
    return [last - timedelta(days=offset) for offset in range(SERIES_DAYS - 1, -1, -1)]


def _day_status_rows(
    *, mode: str, windows: list[tuple[date, date]]
) -> dict[tuple[date, str], tuple[int, Decimal, Decimal]]:
    """(Lagos day, status) -> (count, amount, fees) of the payouts created in any window."""
    created = Q()
    for first, last in windows:
        start, end = local_day_bounds(first, last)
        created |= Q(created_at__gte=start, created_at__lt=end)
    rows = (
        Payout.objects.filter(created, mode=mode)
        .order_by()
        .values("status", day=TruncDate("created_at", tzinfo=ZoneInfo(settings.TIME_ZONE)))
        .annotate(count=Count("id"), amount=Sum("amount"), fees=Sum("fee_amount"))
    )
    return {
        (row["day"], row["status"]): (row["count"], row["amount"] or ZERO, row["fees"] or ZERO)
        for row in rows
    }


def _day_figures(
    day: date, rows: dict[tuple[date, str], tuple[int, Decimal, Decimal]]
) -> DayFigures:
    figures = []
    for status, label in PayoutStatus.choices:
        count, amount, fees = rows.get((day, status), (0, ZERO, ZERO))
        figures.append(StatusFigures(status, label, count, amount, fees))
    return DayFigures(day=day, by_status=tuple(figures))


def _series_point(day: date, figures: DayFigures) -> SeriesPoint:
    successful = next(row for row in figures.by_status if row.status == PayoutStatus.SUCCESSFUL)
    return SeriesPoint(
        day=day,
        successful_count=successful.count,
        successful_amount=successful.amount,
        failed_count=figures.status_count(PayoutStatus.FAILED),
        pending_count=sum(figures.status_count(status) for status in NOT_FINAL_STATUSES),
    )


def oldest_pending(*, mode: str, limit: int = OLDEST_LIMIT) -> PayoutsWaiting:
    """Reserved, processing and dispatched payouts, created longest ago first."""
    return (
        Payout.objects.filter(mode=mode, status__in=WAITING_STATUSES)
        .select_related("merchant")
        .annotate(waiting_since=F("created_at"))
        .order_by("created_at", "id")[:limit]
    )


def oldest_ambiguous(*, mode: str, limit: int = OLDEST_LIMIT) -> PayoutsWaiting:
    """Ambiguous payouts, ambiguous longest first (since creation when the instant is unknown)."""
    return (
        Payout.objects.filter(mode=mode, status=PayoutStatus.AMBIGUOUS)
        .select_related("merchant")
        .annotate(waiting_since=Coalesce("ambiguous_since", "created_at"))
        .order_by("waiting_since", "id")[:limit]
    )


def oldest_held(*, mode: str, limit: int = OLDEST_LIMIT) -> PayoutsWaiting:
    """Ambiguous payouts held for suspected fraud, flagged longest ago first: finance settles
    them (two people); no provider failure answer releases them."""
    return (
        Payout.objects.filter(mode=mode, status=PayoutStatus.AMBIGUOUS)
        .filter(fraud_flagged_at__isnull=False)
        .select_related("merchant")
        .annotate(waiting_since=F("fraud_flagged_at"))
        .order_by("waiting_since", "id")[:limit]
    )


def oldest_escalated(*, mode: str, limit: int = OLDEST_LIMIT) -> PayoutsWaiting:
    """Dispatched or ambiguous payouts unresolved past ``PAYOUT_REQUERY_ESCALATE_AFTER``,
    sent longest ago first (still requeried hourly)."""
    return (
        Payout.objects.filter(mode=mode, status__in=ESCALATABLE_STATUSES)
        .filter(requery_escalated_at__isnull=False)
        .select_related("merchant")
        .annotate(waiting_since=Coalesce("dispatched_at", "created_at"))
        .order_by("waiting_since", "id")[:limit]
    )


def _waiting(payouts: PayoutsWaiting, now: datetime) -> tuple[WaitingPayout, ...]:
    return tuple(
        WaitingPayout(payout=payout, since=payout.waiting_since, age=now - payout.waiting_since)
        for payout in payouts
    )


def dashboard_default_mode() -> str:
    """The mode the dashboard opens on: live once there is any live payout, else test (a
    test-mode install would otherwise open on zeros)."""
    return Mode.LIVE if Payout.objects.filter(mode=Mode.LIVE).exists() else Mode.TEST


def finance_dashboard(
    *, day: date, mode: str, now: datetime | None = None, with_settlements: bool = False
) -> FinanceDashboard:
    """Everything the finance dashboard shows for the Lagos ``day`` and ``mode``; with
    ``with_settlements``, the settlements of ``day`` and today in both modes too."""
    now = local_now() if now is None else now
    today = local_date(now)
    yesterday = today - timedelta(days=1)
    days = series_days(day)
    windows = [(days[0], days[-1])]
    if not days[0] <= yesterday <= today <= days[-1]:
        windows.append((yesterday, today))
    rows = _day_status_rows(mode=mode, windows=windows)
    figures_by_day = {each: _day_figures(each, rows) for each in {*days, yesterday, today}}

    settlements: tuple[SettlementDayFigures, ...] = ()
    if with_settlements:
        settlement_days = sorted({day, today})
        modes = (Mode.LIVE, Mode.TEST)
        by_day = settlement_day_figures(days=settlement_days, modes=modes)
        settlements = tuple(
            by_day[(each, each_mode)] for each in settlement_days for each_mode in modes
        )
    totals = Payout.objects.filter(mode=mode, status__in=NOT_FINAL_STATUSES).aggregate(
        pending=Count("id", filter=Q(status__in=WAITING_STATUSES)),
        ambiguous=Count("id", filter=Q(status=PayoutStatus.AMBIGUOUS)),
        held=Count("id", filter=Q(status=PayoutStatus.AMBIGUOUS, fraud_flagged_at__isnull=False)),
        escalated=Count(
            "id",
            filter=Q(status__in=ESCALATABLE_STATUSES, requery_escalated_at__isnull=False),
        ),
    )
    conflicts = ProviderTransferEventRecord.objects.filter(
        result=ProviderTransferEventResult.CONFLICT, payout__mode=mode
    ).count()
    return FinanceDashboard(
        day=day,
        today=today,
        mode=mode,
        chosen=figures_by_day[day],
        today_figures=figures_by_day[today],
        yesterday_figures=figures_by_day[yesterday],
        series=tuple(_series_point(each, figures_by_day[each]) for each in days),
        oldest_pending=_waiting(oldest_pending(mode=mode), now),
        oldest_ambiguous=_waiting(oldest_ambiguous(mode=mode), now),
        pending_total=totals["pending"],
        ambiguous_total=totals["ambiguous"],
        oldest_held=_waiting(oldest_held(mode=mode), now),
        held_total=totals["held"],
        oldest_escalated=_waiting(oldest_escalated(mode=mode), now),
        escalated_total=totals["escalated"],
        transfer_event_conflicts=conflicts,
        exceptions=exceptions_unresolved_count(mode=mode),
        settlements=settlements,
    )
