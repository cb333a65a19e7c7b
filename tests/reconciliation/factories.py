"""Factories for reconciliation rows, for reads (lists, counts, the dashboard); imports go
through ``reconciliation.services.statement_import``."""

from __future__ import annotations

import factory

from core.dates import local_today
from reconciliation.models import MatchCategory, ReconciliationItem, ReconciliationRun


class ReconciliationRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ReconciliationRun

    statement_format = "paystack_transfers"
    mode = "live"
    file_name = factory.Sequence(lambda n: f"statement-{n}.csv")
    file_sha256 = factory.Sequence(lambda n: f"{n:064x}")
    period_start = factory.LazyFunction(local_today)
    period_end = factory.LazyFunction(local_today)


class ReconciliationItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ReconciliationItem

    run = factory.SubFactory(ReconciliationRunFactory)
    line_number = factory.Sequence(lambda n: n + 1)
    category = MatchCategory.NOT_OURS
