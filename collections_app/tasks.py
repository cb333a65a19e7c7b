"""Collection background work: expiry and the delivery of events."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from collections_app.deliveries import webhook_deliveries_sweep, webhook_delivery_attempt
from collections_app.models import DeliveryStatus
from collections_app.services import transactions_expire_due


@shared_task(bind=True, max_retries=3, default_retry_delay=60, acks_late=True)
def transactions_expire_task(self) -> int:  # type: ignore[no-untyped-def]
    """Beat: expires pending transactions past ``expires_at``. Safe to run twice."""
    try:
        return transactions_expire_due().expired
    except Exception as error:  # noqa: BLE001 - retried, then surfaced by Celery
        raise self.retry(exc=error) from error


@shared_task(bind=True, acks_late=True, max_retries=None)
def webhook_delivery_send_task(self, delivery_id: int) -> str:  # type: ignore[no-untyped-def]
    """Makes the due attempt of one delivery. A failed attempt whose next try is near
    (``WEBHOOK_TASK_RETRY_MAX_COUNTDOWN_SECONDS``) is retried by this task with a countdown on
    the same queue; later ones are picked up by ``webhook_deliveries_sweep_task``. Running it
    twice is harmless: only a due, unclaimed delivery is sent."""
    recorded = webhook_delivery_attempt(delivery_id=delivery_id)
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
    """Beat: enqueues deliveries whose next attempt is due (long backoffs and lost tasks)."""
    return webhook_deliveries_sweep()
