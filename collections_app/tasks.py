"""Collection background work: expiry."""

from __future__ import annotations

from celery import shared_task

from collections_app import services


@shared_task(
    bind=True,
    max_retries=3,
    default_retry_delay=60,
    acks_late=True,
    soft_time_limit=120,
    time_limit=150,
)
def transactions_expire_task(self) -> int:
    """Beat: expires pending transactions past ``expires_at``. Safe to run twice."""
    try:
        return services.transactions_expire_due().expired
    except Exception as error:  # noqa: BLE001 - retried, then surfaced by Celery
        raise self.retry(exc=error) from error
