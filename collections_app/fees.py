"""The collection fee: a pure calculation over the active ``CollectionFeeSchedule``."""

from __future__ import annotations

from decimal import Decimal

from collections_app.models import CollectionFeeSchedule
from core.exceptions import ServiceUnavailableError
from core.money import round_amount

HUNDRED = Decimal("100")


def collection_fee_schedule_get_active() -> CollectionFeeSchedule:
    schedule = CollectionFeeSchedule.objects.filter(is_active=True).order_by("-id").first()
    if schedule is None:
        raise ServiceUnavailableError("Collection pricing is not configured; try again later")
    return schedule


def collection_fee_calculate(*, amount: Decimal, schedule: CollectionFeeSchedule) -> Decimal:
    """``percentage_rate`` % of ``amount`` plus the flat fee (waived below the threshold),
    capped at ``fee_cap``; rounded half-up to the kobo.

    With the default schedule (1.5% + 100, waived below 2,500, cap 2,000): 1,000 → 15.00;
    2,500 → 137.50; 7,000 → 205.00; 200,000 → 2,000.00 (capped).
    """
    fee = amount * schedule.percentage_rate / HUNDRED
    if amount >= schedule.flat_fee_waiver_below:
        fee += schedule.flat_fee
    fee = round_amount(fee)
    if schedule.fee_cap is not None and fee > schedule.fee_cap:
        fee = schedule.fee_cap
    return round_amount(fee)
