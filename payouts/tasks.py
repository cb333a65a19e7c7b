"""Celery tasks: thin, idempotent wrappers around the payout services.

The services module imports this one to enqueue; the task bodies reach the services through the
``services`` module, looked up when a task runs, so either module may be imported first."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import OperationalError

from payouts import services
from payouts.exceptions import DispatchDeferredError
from payouts.models import FINAL_STATUSES, Payout

logger = logging.getLogger(__name__)

DISPATCH_MAX_RETRIES = 8
RETRY_BASE_SECONDS = 5
RETRY_MAX_SECONDS = 300


def _countdown(retries: int) -> int:
    return min(RETRY_BASE_SECONDS * 2**retries, RETRY_MAX_SECONDS)


@shared_task(bind=True, max_retries=DISPATCH_MAX_RETRIES, acks_late=True)
def payout_dispatch_task(self, payout_id: int, allow_retry: bool = True) -> str | None:
    """Sends a reserved payout to its provider. Does nothing unless the payout is ``reserved``
    (or ``processing`` with a stale claim), so duplicates and redeliveries are harmless."""
    try:
        payout = services.payout_dispatch(payout_id=payout_id)
    except (DispatchDeferredError, OperationalError) as error:
        if not allow_retry:
            logger.warning(
                "payout %s not dispatched (%s); the sweeper will retry", payout_id, error
            )
            return None
        raise self.retry(exc=error, countdown=_countdown(self.request.retries)) from error
    return payout.status if payout is not None else None


@shared_task(bind=True, max_retries=3, acks_late=True)
def payout_requery_task(self, payout_id: int) -> str | None:
    """Asks the provider for a dispatched/ambiguous payout's status (from the sweeper)."""
    payout = Payout.objects.filter(pk=payout_id).first()
    if payout is None or payout.status in FINAL_STATUSES:
        return None
    try:
        return services.payout_requery(payout=payout).status
    except OperationalError as error:
        raise self.retry(exc=error, countdown=_countdown(self.request.retries)) from error


@shared_task
def payouts_requery_due_task() -> str:
    """Celery beat: hand due requeries to the workers."""
    return services.payouts_requery_due(enqueue=True).summary()


@shared_task
def payouts_dispatch_stuck_task() -> str:
    """Celery beat: re-queue payouts whose dispatch was lost."""
    return services.payouts_dispatch_stuck(enqueue=True).summary()
