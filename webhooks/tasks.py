"""Webhook delivery work: one task per due attempt, and the beat sweeper for the rest."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from webhooks import deliveries
from webhooks.models import DeliveryStatus


@shared_task(bind=True, acks_late=True, max_retries=None)
def webhook_delivery_send_task(self, delivery_id: int) -> str:  # type: ignore[no-untyped-def]
    """Makes the due attempt of one delivery. A failed attempt whose next try is near
    (``WEBHOOK_TASK_RETRY_MAX_COUNTDOWN_SECONDS``) is retried by this task with a countdown on
    the same queue; later ones are picked up by ``webhook_deliveries_sweep_task``. Running it
    twice is harmless: only a due, unclaimed delivery is sent."""
    recorded = deliveries.webhook_delivery_attempt(delivery_id=delivery_id)
    if recorded is None:
        return "not due"
    delivery = recorded.delivery
    if delivery.status == DeliveryStatus.PENDING and delivery.next_attempt_at is not None:
        countdown = (delivery.next_attempt_at - timezone.now()).total_seconds()
        if countdown <= settings.WEBHOOK_TASK_RETRY_MAX_COUNTDOWN_SECONDS:
            raise self.retry(countdown=max(countdown, 0.0), max_retries=None)
    return str(delivery.status)


@shared_task(acks_late=True)
def webhook_deliveries_sweep_task() -> int:
    """Beat: enqueues deliveries whose next attempt is due (long backoffs and lost tasks).

    Also what recovers a send task that was lost (a broker outage, a task published under an
    older name): every pending delivery whose attempt is due is enqueued again."""
    return deliveries.webhook_deliveries_sweep()
