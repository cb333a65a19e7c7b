"""Webhook delivery work: one task per due attempt, and the beat sweeper for the rest.

Every task here is routed to the webhooks queue (``CELERY_TASK_ROUTES``, ``WEBHOOK_QUEUE``) and
served by the webhooks worker pool (Procfile ``webhooks``), never by the worker that moves
money."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from webhooks import deliveries
from webhooks.models import DeliveryStatus

SWEEP_SOFT_TIME_LIMIT_SECONDS = 60
SWEEP_TIME_LIMIT_SECONDS = 90


@shared_task(
    bind=True,
    acks_late=True,
    max_retries=None,
    soft_time_limit=settings.WEBHOOK_TASK_SOFT_TIME_LIMIT_SECONDS,
    time_limit=settings.WEBHOOK_TASK_TIME_LIMIT_SECONDS,
)
def webhook_delivery_send_task(self, delivery_id: int, deferrals: int = 0) -> str:
    """Makes the due attempt of one delivery. A failed attempt whose next try is near
    (``WEBHOOK_TASK_RETRY_MAX_COUNTDOWN_SECONDS``) is retried by this task with a countdown on
    the same queue; later ones are picked up by ``webhook_deliveries_sweep_task``. A delivery
    deferred by its merchant's cap of attempts in flight is retried by this task when its
    deferral ends. Running it twice is harmless: only a due, unclaimed delivery is sent.

    Time limits: the attempt itself ends by ``WEBHOOK_DELIVERY_DEADLINE_SECONDS``; the soft and
    hard limits (deadline + 15 s, + 30 s) stop a task stuck anywhere else, and its claim then
    runs out for the sweeper (``WEBHOOK_DELIVERY_CLAIM_SECONDS`` exceeds the hard limit)."""
    outcome = deliveries.webhook_delivery_attempt(delivery_id=delivery_id, deferrals=deferrals)
    if outcome is None:
        return "not due"
    if isinstance(outcome, deliveries.DeliveryDeferred):
        countdown = (outcome.until - timezone.now()).total_seconds()
        raise self.retry(
            args=(delivery_id,),
            kwargs={"deferrals": deferrals + 1},
            countdown=max(countdown, 0.0),
            max_retries=None,
        )
    delivery = outcome.delivery
    if delivery.status == DeliveryStatus.PENDING and delivery.next_attempt_at is not None:
        countdown = (delivery.next_attempt_at - timezone.now()).total_seconds()
        if countdown <= settings.WEBHOOK_TASK_RETRY_MAX_COUNTDOWN_SECONDS:
            raise self.retry(
                args=(delivery_id,), kwargs={}, countdown=max(countdown, 0.0), max_retries=None
            )
    return str(delivery.status)


@shared_task(
    acks_late=True,
    soft_time_limit=SWEEP_SOFT_TIME_LIMIT_SECONDS,
    time_limit=SWEEP_TIME_LIMIT_SECONDS,
)
def webhook_deliveries_sweep_task() -> int:
    """Beat: enqueues deliveries whose next attempt is due (long backoffs and lost tasks),
    round-robin across merchants.

    Also what recovers a send task that was lost (a broker outage, a task published under an
    older name): every pending delivery whose attempt is due is enqueued again."""
    return deliveries.webhook_deliveries_sweep()
