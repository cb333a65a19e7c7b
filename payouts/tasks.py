"""Celery tasks: thin, idempotent wrappers around the payout services, and the debounced wake
that publishes a dispatch round when payouts commit.

The services module imports this one to enqueue; the task bodies reach the services through the
``services`` module, looked up when a task runs, so either module may be imported first."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any, TypedDict

from celery import shared_task
from django.conf import settings
from django.core.cache import caches
from django.db import OperationalError

from core.cache import CacheUnavailable, PooledRedisCache, redis_window_open_for
from payouts import services
from payouts.exceptions import DispatchDeferredError
from payouts.models import FINAL_STATUSES, Payout

logger = logging.getLogger(__name__)

DISPATCH_MAX_RETRIES = 8
RETRY_BASE_SECONDS = 5
RETRY_MAX_SECONDS = 300
# One run of the round task dispatches at most this many rounds in a row while each one is full;
# what is left waits for the next wake or beat run.
DISPATCH_ROUNDS_PER_RUN = 20
# Celery time limits (seconds, soft then hard): a provider call is bounded by
# PAYOUT_PROVIDER_TIMEOUT_SECONDS (30); a run of rounds stays under the broker's visibility
# timeout (300). A task stopped by its limit leaves its payouts claimed, for the sweeper.


class _TaskLimits(TypedDict):
    soft_time_limit: int
    time_limit: int


PROVIDER_TASK_LIMITS: _TaskLimits = {"soft_time_limit": 90, "time_limit": 120}
ROUND_TASK_LIMITS: _TaskLimits = {"soft_time_limit": 240, "time_limit": 270}
SWEEP_TASK_LIMITS: _TaskLimits = {"soft_time_limit": 60, "time_limit": 90}


def _countdown(retries: int) -> int:
    return min(RETRY_BASE_SECONDS * 2**retries, RETRY_MAX_SECONDS)


@shared_task(bind=True, max_retries=DISPATCH_MAX_RETRIES, acks_late=True, **PROVIDER_TASK_LIMITS)
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


@shared_task(bind=True, max_retries=3, acks_late=True, **PROVIDER_TASK_LIMITS)
def payout_requery_task(self, payout_id: int) -> str | None:
    """Asks the provider for a dispatched/ambiguous payout's status (from the sweeper)."""
    payout = Payout.objects.filter(pk=payout_id).first()
    if payout is None or payout.status in FINAL_STATUSES:
        return None
    try:
        return services.payout_requery(payout=payout).status
    except OperationalError as error:
        raise self.retry(exc=error, countdown=_countdown(self.request.retries)) from error


@shared_task(**SWEEP_TASK_LIMITS)
def payouts_requery_due_task() -> str:
    """Celery beat: hand due requeries to the workers."""
    return services.payouts_requery_due(enqueue=True).summary()


@shared_task(**SWEEP_TASK_LIMITS)
def payouts_dispatch_stuck_task() -> str:
    """Celery beat: re-queue payouts whose dispatch was lost."""
    return services.payouts_dispatch_stuck(enqueue=True).summary()


@shared_task(**SWEEP_TASK_LIMITS)
def payouts_approval_expire_task() -> str:
    """Celery beat: cancel payouts whose approval waited too long (idempotent: each payout is
    locked and checked again)."""
    return services.payouts_approval_expire().summary()


@shared_task(**SWEEP_TASK_LIMITS)
def payout_counts_fold_task() -> str:
    """Celery beat: fold the list's count changes into the per-day counts (idempotent: a fold
    takes only changes no other fold holds)."""
    return f"payout_counts_fold: {services.payout_counts_fold()} change(s) folded"


@shared_task(bind=True, max_retries=3, acks_late=True, **ROUND_TASK_LIMITS)
def payouts_dispatch_round_task(self) -> str:
    """Dispatches reserved payouts in rounds (``services.payouts_dispatch_round``), round after
    round while each is full, at most ``DISPATCH_ROUNDS_PER_RUN``. Published by the wake after
    creates commit and by beat (``payouts-dispatch-round``); any number may run at once."""
    summaries: list[str] = []
    try:
        for _round in range(DISPATCH_ROUNDS_PER_RUN):
            report = services.payouts_dispatch_round()
            summaries.append(report.summary())
            if not report.full:
                break
    except OperationalError as error:
        raise self.retry(exc=error, countdown=_countdown(self.request.retries)) from error
    return "; ".join(summaries)


# --- The wake -----------------------------------------------------------------------------------


def dispatch_wake_interval() -> float:
    """``PAYOUT_DISPATCH_WAKE_INTERVAL_MS``, in seconds."""
    return max(0.0, float(getattr(settings, "PAYOUT_DISPATCH_WAKE_INTERVAL_MS", 100)) / 1000)


WAKE_WINDOW_KEY = "payouts:dispatch-wake"
# A run starts this long after its window closes, so a commit the window's holder could not
# see (made just before the window closed, by another host's clock) is still before it.
WAKE_START_MARGIN_SECONDS = 0.02


class DispatchWake:
    """Publishes ``payouts_dispatch_round_task`` when payouts commit: at most one run per
    interval (``PAYOUT_DISPATCH_WAKE_INTERVAL_MS``), timed for the interval's end, and never a
    commit without a run that starts after it.

    * The first commit after an interval ended opens a new one and publishes a run with a
      ``countdown`` reaching just past its end;
    * every other commit inside the interval publishes nothing: that run starts after it and
      takes its payout with the rest, in one round.

    The interval is one for every web process and host when the cache is Redis
    (``CACHE_URL=redis://…``: one ``SET NX PX`` and its ``PTTL`` in one round trip,
    ``core.cache.redis_window_open_for``), so however many processes accept payouts, a burst
    costs one publish and the worker one round per interval. Each process remembers until when
    the interval it last saw is open (from the ``PTTL``, read no earlier than it asked), and its
    commits until then cost no round trip at all. On any other cache (the embedded default's
    local memory) each process keeps its own interval on ``clock``, as it does while the Redis
    cache is unavailable. Thread-safe.
    A publish that fails (the broker is down) is logged and the commit's request still answers;
    beat's ``payouts-dispatch-round`` runs the round later, so an outage delays dispatch but
    never loses one. An interval of 0 publishes every commit at once.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._interval_end = -math.inf

    def reset(self) -> None:
        with self._lock:
            self._interval_end = -math.inf

    def _interval_opened(self, interval: float) -> bool:
        with self._lock:
            if self.clock() < self._interval_end:
                return False  # an interval this process knows of is still open
        backend = caches["default"]
        if isinstance(backend, PooledRedisCache):
            asked_at = self.clock()
            try:
                opened, left_ms = redis_window_open_for(
                    backend, WAKE_WINDOW_KEY, milliseconds=math.ceil(interval * 1000)
                )
            except CacheUnavailable:
                pass  # Redis is down: this process keeps its own interval meanwhile
            else:
                # Open at least until then: Redis answered after ``asked_at``. Commits before it
                # need no round trip; the run published for the interval starts after them.
                with self._lock:
                    self._interval_end = max(self._interval_end, asked_at + left_ms / 1000)
                return opened
        with self._lock:
            now = self.clock()
            if now < self._interval_end:
                return False
            self._interval_end = now + interval
            return True

    def __call__(self) -> bool:
        """True when it published (or tried to, and the broker took it)."""
        interval = dispatch_wake_interval()
        if interval <= 0:
            return _dispatch_round_publish(countdown=None)
        if not self._interval_opened(interval):
            return False
        return _dispatch_round_publish(countdown=interval + WAKE_START_MARGIN_SECONDS)


def _dispatch_round_publish(*, countdown: float | None) -> bool:
    options: dict[str, Any] = {"countdown": countdown} if countdown else {}
    try:
        payouts_dispatch_round_task.apply_async(
            retry_policy=services.PUBLISH_RETRY_POLICY, **options
        )
    except Exception:
        logger.exception(
            "could not enqueue a dispatch round; beat's payouts-dispatch-round will run it"
        )
        return False
    return True


dispatch_wake = DispatchWake()


def payout_dispatch_wake() -> None:
    """``transaction.on_commit`` callback of a payout create: wakes the dispatcher
    (``DispatchWake``). Never raises."""
    dispatch_wake()
