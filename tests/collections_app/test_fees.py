"""The collection fee: 1.5% + 100 (waived below 2,500), capped at 2,000, half-up to the kobo."""

from __future__ import annotations

from decimal import Decimal

import pytest

from collections_app.fees import collection_fee_calculate, collection_fee_schedule_get_active
from collections_app.models import CollectionFeeSchedule
from core.exceptions import ServiceUnavailableError
from tests.collections_app.factories import CollectionFeeScheduleFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("amount", "fee"),
    [
        ("0.01", "0.00"),
        ("0.34", "0.01"),  # 0.0051
        ("3.00", "0.05"),  # 0.045 rounds half-up (banker's rounding would give 0.04)
        ("1000.00", "15.00"),  # flat fee waived below 2,500
        ("2499.99", "37.50"),  # 37.49985
        ("2500.00", "137.50"),  # flat fee from 2,500
        ("7000.00", "205.00"),
        ("126666.00", "1999.99"),
        ("126666.66", "2000.00"),  # 1999.9999 rounds to the cap
        ("126700.00", "2000.00"),
        ("200000.00", "2000.00"),  # capped
        ("9999999999.99", "2000.00"),
    ],
)
def test_default_schedule(amount: str, fee: str, fee_schedule) -> None:
    assert collection_fee_calculate(amount=Decimal(amount), schedule=fee_schedule) == Decimal(fee)


def test_the_data_migration_seeds_the_default_schedule() -> None:
    schedule = collection_fee_schedule_get_active()
    assert schedule.percentage_rate == Decimal("1.50")
    assert schedule.flat_fee == Decimal("100.00")
    assert schedule.flat_fee_waiver_below == Decimal("2500.00")
    assert schedule.fee_cap == Decimal("2000.00")
    assert schedule.currency == "NGN"


def test_a_schedule_without_cap_is_uncapped() -> None:
    schedule = CollectionFeeScheduleFactory.build(fee_cap=None)
    assert collection_fee_calculate(amount=Decimal("1000000.00"), schedule=schedule) == Decimal(
        "15100.00"
    )


def test_the_active_schedule_is_used() -> None:
    CollectionFeeSchedule.objects.update(is_active=False)
    CollectionFeeScheduleFactory(percentage_rate=Decimal("2.00"), flat_fee=Decimal("0"))
    schedule = collection_fee_schedule_get_active()
    assert collection_fee_calculate(amount=Decimal("1000.00"), schedule=schedule) == Decimal(
        "20.00"
    )


def test_missing_schedule_is_503() -> None:
    CollectionFeeSchedule.objects.update(is_active=False)
    with pytest.raises(ServiceUnavailableError):
        collection_fee_schedule_get_active()


def test_only_one_schedule_can_be_active(fee_schedule) -> None:
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        CollectionFeeScheduleFactory()
