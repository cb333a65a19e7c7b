"""Sweep reads: the settlement account in effect and the pending one, a wallet's sweep
settings as the API shows them, the next sweep's instant, and the wallets due a sweep."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from core.dates import local_date
from core.exceptions import NotFoundError
from sweeps.models import SettlementAccount, Sweep, SweepSchedule, SweepScheduleKind, Weekday

SWEEP_SETTINGS_NOT_FOUND_MESSAGE = "Sweep settings not found"
# How far ahead ``next_sweep_at`` looks: a weekly slot after a cooling-off period always fits.
NEXT_SWEEP_HORIZON_DAYS = 15


def _accounts_in_effect(*, at: datetime) -> Q:
    return Q(effective_at__lte=at) & (Q(superseded_at__isnull=True) | Q(superseded_at__gt=at))


def settlement_account_in_effect(
    *, merchant_id: int, mode: str, at: datetime
) -> SettlementAccount | None:
    """The account sweeps of this merchant and mode pay into at ``at``, if any."""
    return (
        SettlementAccount.objects.filter(
            _accounts_in_effect(at=at), merchant_id=merchant_id, mode=mode
        )
        .select_related("bank")
        .order_by("-effective_at", "-id")
        .first()
    )


def settlement_account_pending(
    *, merchant_id: int, mode: str, at: datetime
) -> SettlementAccount | None:
    """The account set but still in its cooling-off period at ``at``, if any (at most one)."""
    return (
        SettlementAccount.objects.filter(
            merchant_id=merchant_id, mode=mode, effective_at__gt=at, superseded_at__isnull=True
        )
        .select_related("bank")
        .order_by("-effective_at", "-id")
        .first()
    )


def settlement_accounts_at(
    *, merchant_id: int, mode: str, at: datetime
) -> tuple[SettlementAccount | None, SettlementAccount | None]:
    """The account in effect at ``at`` and the one still cooling off then (each if any)."""
    return (
        settlement_account_in_effect(merchant_id=merchant_id, mode=mode, at=at),
        settlement_account_pending(merchant_id=merchant_id, mode=mode, at=at),
    )


@dataclass(frozen=True)
class SweepSettings:
    """A wallet's sweep settings as the API answers them."""

    schedule: SweepSchedule
    account: SettlementAccount | None  # in effect now
    pending_account: SettlementAccount | None  # set, in its cooling-off period
    next_sweep_at: datetime | None


def slot_at(*, day: date, schedule: SweepSchedule) -> datetime | None:
    """The instant of the schedule's slot on the Lagos ``day``, or None when it has none."""
    if schedule.schedule == SweepScheduleKind.MANUAL or schedule.time is None:
        return None
    if (
        schedule.schedule == SweepScheduleKind.WEEKLY
        and Weekday.of_index(day.weekday()) != schedule.weekday
    ):
        return None
    return timezone.make_aware(datetime.combine(day, schedule.time))


def next_sweep_at(
    *,
    schedule: SweepSchedule,
    first_effective_at: datetime | None,
    swept_today: bool,
    now: datetime,
) -> datetime | None:
    """When the beat next sweeps this wallet (if there is then something to sweep): the first
    slot whose Lagos day has no sweep yet, not before an account is in effect on that day, and
    not before ``now`` (a slot passed today without a sweep is due now). None for a manual
    schedule or without an account."""
    if first_effective_at is None:
        return None
    today = local_date(now)
    for offset in range(NEXT_SWEEP_HORIZON_DAYS):
        day = today + timedelta(days=offset)
        if offset == 0 and swept_today:
            continue
        slot = slot_at(day=day, schedule=schedule)
        if slot is None:
            continue
        due = max(slot, first_effective_at, now)
        if local_date(due) == day:
            return due
    return None


def sweep_settings_get(
    *, wallet_id: int, merchant_id: int, mode: str, now: datetime
) -> SweepSettings:
    """The wallet's schedule, its accounts and its next sweep; 404 when never set."""
    schedule = SweepSchedule.objects.filter(wallet_id=wallet_id).first()
    if schedule is None:
        raise NotFoundError(SWEEP_SETTINGS_NOT_FOUND_MESSAGE)
    account, pending = settlement_accounts_at(merchant_id=merchant_id, mode=mode, at=now)
    first_effective_at = (
        now if account is not None else pending.effective_at if pending is not None else None
    )
    swept_today = Sweep.objects.filter(wallet_id=wallet_id, sweep_date=local_date(now)).exists()
    return SweepSettings(
        schedule=schedule,
        account=account,
        pending_account=pending,
        next_sweep_at=next_sweep_at(
            schedule=schedule,
            first_effective_at=first_effective_at,
            swept_today=swept_today,
            now=now,
        ),
    )


def sweep_schedules_due(*, now: datetime) -> QuerySet[SweepSchedule]:
    """Schedules due a sweep at ``now``, in wallet order: a daily one whose Lagos time has
    passed today, a weekly one on its weekday likewise, with no sweep today, an account in
    effect, and an available balance above the amount kept (the fee is checked per wallet)."""
    local = timezone.localtime(now)
    today = local.date()
    account_in_effect = SettlementAccount.objects.filter(
        _accounts_in_effect(at=now),
        merchant_id=OuterRef("wallet__merchant_id"),
        mode=OuterRef("wallet__mode"),
    )
    swept_today = Sweep.objects.filter(wallet_id=OuterRef("wallet_id"), sweep_date=today)
    return (
        SweepSchedule.objects.filter(
            Q(schedule=SweepScheduleKind.DAILY)
            | Q(schedule=SweepScheduleKind.WEEKLY, weekday=Weekday.of_index(today.weekday())),
            time__lte=local.time(),
            wallet__available_balance__gt=F("amount_to_keep"),
        )
        .filter(Exists(account_in_effect))
        .exclude(Exists(swept_today))
        .order_by("wallet_id")
    )
