"""Factories for sweep rows: settlement accounts as ``sweep_settings_set`` writes them (without
the name enquiry or the cooling-off wait: ``effective_at`` is whatever the test needs) and
schedules. Sweeps themselves are made through ``sweeps.services``."""

from __future__ import annotations

from datetime import time, timedelta
from decimal import Decimal

import factory
from django.utils import timezone

from merchants.models import Mode
from sweeps.models import SettlementAccount, SweepSchedule, SweepScheduleKind
from wallets.providers.sandbox import sandbox_account_name
from wallets.selectors import bank_get_by_code


class SettlementAccountFactory(factory.django.DjangoModelFactory):
    """In effect since an hour ago unless ``effective_at`` says otherwise."""

    class Meta:
        model = SettlementAccount

    # ``merchant`` is required: SettlementAccountFactory(merchant=...)
    mode = Mode.TEST
    bank = factory.LazyFunction(lambda: bank_get_by_code(bank_code="058"))
    account_number = factory.Sequence(lambda n: f"{1_200_000_000 + n:010d}")
    account_name = factory.LazyAttribute(lambda o: sandbox_account_name(o.account_number))
    effective_at = factory.LazyFunction(lambda: timezone.now() - timedelta(hours=1))


class SweepScheduleFactory(factory.django.DjangoModelFactory):
    """Daily at 09:00 Lagos, keeping nothing."""

    class Meta:
        model = SweepSchedule

    # ``wallet`` is required: SweepScheduleFactory(wallet=...)
    schedule = SweepScheduleKind.DAILY
    time = time(9, 0)
    weekday = None
    amount_to_keep = Decimal("0.00")
