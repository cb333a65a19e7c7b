"""Celery tasks: thin, idempotent wrappers around the refund services.

The services module imports this one to enqueue; the task bodies reach the services through the
``services`` module, looked up when a task runs, so either module may be imported first."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from refunds import services

SEND_MAX_RETRIES = 5
RETRY_BASE_SECONDS = 5
RETRY_MAX_SECONDS = 300


def _countdown(retries: int) -> int:
    return min(RETRY_BASE_SECONDS * 2**retries, RETRY_MAX_SECONDS)


@shared_task(
    bind=True, max_retries=SEND_MAX_RETRIES, acks_late=True, soft_time_limit=90, time_limit=120
)
def refund_send_task(self, refund_id: int) -> str | None:
    """Sends a pending refund to its provider or asks about it; a final refund is left alone,
    so duplicates and redeliveries are harmless."""
    try:
        refund = services.refund_send(refund_id=refund_id)
    except OperationalError as error:
        raise self.retry(exc=error, countdown=_countdown(self.request.retries)) from error
    return refund.status if refund is not None else None


@shared_task(acks_late=True, soft_time_limit=60, time_limit=90)
def refunds_check_due_task() -> int:
    """Beat: queues the send or requery of every pending refund whose next check has come."""
    return services.refunds_check_due().enqueued
