"""Celery tasks of the sweeps: the beat run that makes every due sweep."""

from __future__ import annotations

import logging

from celery import shared_task

from sweeps import services

logger = logging.getLogger(__name__)


@shared_task(soft_time_limit=240, time_limit=270)
def sweep_run_due_task() -> str:
    """Beat (every ``SWEEP_RUN_SECONDS``): makes the sweeps due now. Idempotent (one sweep per
    wallet per Lagos day) and safe to run concurrently (a wallet another run holds is skipped);
    a failure is logged, never raised, and the next run tries again."""
    try:
        return services.sweep_run_due().summary()
    except Exception:  # noqa: BLE001 - the next beat run tries again
        logger.exception("sweep run failed")
        return "sweep_run_due: failed"
