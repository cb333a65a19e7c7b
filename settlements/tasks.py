"""Celery tasks of settlements: thin, idempotent wrappers around ``settlements.services``.

Beat runs ``settlements_run_due_task`` (every ``SETTLEMENT_RUN_SECONDS``), which queues one
``settlement_run_task`` per merchant and mode due, and ``settlement_shares_sweep_task``, which
creates any share payout still missing. The services module imports this one to enqueue; the
task bodies reach the services through the ``services`` module, looked up when a task runs."""

from __future__ import annotations

import logging
from typing import TypedDict

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from merchants.models import Mode
from settlements import services

logger = logging.getLogger(__name__)


class _TaskLimits(TypedDict):
    soft_time_limit: int
    time_limit: int


RUN_TASK_LIMITS: _TaskLimits = {"soft_time_limit": 240, "time_limit": 270}
PAYOUT_TASK_LIMITS: _TaskLimits = {"soft_time_limit": 120, "time_limit": 150}


@shared_task(bind=True, max_retries=3, acks_late=True, **RUN_TASK_LIMITS)
def settlement_run_task(self, merchant_id: int, mode: str) -> str | None:
    """Settles one merchant's due collections of ``mode``. Safe to run twice or at once: the
    second run finds nothing left."""
    try:
        settlement = services.settlement_run(merchant_id=merchant_id, mode=mode)
    except OperationalError as error:
        raise self.retry(exc=error, countdown=30 * 2**self.request.retries) from error
    return settlement.settlement_id if settlement is not None else None


@shared_task(**RUN_TASK_LIMITS)
def settlements_run_due_task() -> int:
    """Beat: queues a run for every merchant and mode with collections due now."""
    now = timezone.now()
    queued = 0
    for mode in (Mode.TEST, Mode.LIVE):
        for merchant_id in services.settlements_due(mode=mode, now=now):
            settlement_run_task.delay(merchant_id, mode)
            queued += 1
    return queued


@shared_task(bind=True, max_retries=3, acks_late=True, **PAYOUT_TASK_LIMITS)
def settlement_shares_pay_task(self, settlement_pk: int) -> str:
    """Creates the payouts of a settlement's shares (queued when the settlement commits)."""
    try:
        return services.settlement_shares_pay(settlement_pk=settlement_pk).summary()
    except OperationalError as error:
        raise self.retry(exc=error, countdown=30 * 2**self.request.retries) from error


@shared_task(**PAYOUT_TASK_LIMITS)
def settlement_shares_sweep_task() -> str:
    """Beat: creates the payout of every share whose task was lost."""
    return services.settlement_shares_sweep().summary()
