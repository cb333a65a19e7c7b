"""When payouts are asked about again: the requery schedule banks use, when an unresolved payout
is escalated, and the dispatch delays, from settings.

A dispatched or ambiguous payout is requeried on ``PAYOUT_REQUERY_SCHEDULE`` (seconds): by
default 60 (jittered up to ``PAYOUT_REQUERY_FIRST_JITTER``, 30 s, so the first requery lands at
60–90 s), 180, 600, 1800, then 3600 for every later one. NIP delivers most transfers within
about 60 s and banks start their own transaction status query 30–90 s after a timeout, so the
first ask comes then; later asks thin out to hourly. After ``PAYOUT_REQUERY_ESCALATE_AFTER``
(24 h: the CBN requires a failed transfer reversed within a day) without a final answer the
payout is escalated to finance, and still requeried hourly: it is never failed without a final
answer.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings

logger = logging.getLogger(__name__)

DEFAULT_REQUERY_SCHEDULE: tuple[int, ...] = (60, 180, 600, 1800, 3600)
DEFAULT_REQUERY_FIRST_JITTER = 30
DEFAULT_REQUERY_ESCALATE_AFTER = 24 * 3600


def seconds_setting(name: str, default: int) -> timedelta:
    value = getattr(settings, name, None)
    if value is None:
        return timedelta(seconds=default)
    return value if isinstance(value, timedelta) else timedelta(seconds=value)


def requery_schedule() -> tuple[timedelta, ...]:
    """``PAYOUT_REQUERY_SCHEDULE``: the delay before each requery, the last repeating."""
    steps: Sequence[int | float | timedelta] = (
        getattr(settings, "PAYOUT_REQUERY_SCHEDULE", None) or DEFAULT_REQUERY_SCHEDULE
    )
    return tuple(step if isinstance(step, timedelta) else timedelta(seconds=step) for step in steps)


def requery_first_jitter() -> timedelta:
    return seconds_setting("PAYOUT_REQUERY_FIRST_JITTER", DEFAULT_REQUERY_FIRST_JITTER)


def requery_escalate_after() -> timedelta:
    return seconds_setting("PAYOUT_REQUERY_ESCALATE_AFTER", DEFAULT_REQUERY_ESCALATE_AFTER)


def dispatch_claim_timeout() -> timedelta:
    return seconds_setting("PAYOUT_DISPATCH_CLAIM_TIMEOUT", 180)


def requery_delay(*, requery_count: int) -> timedelta:
    """How long after ``now`` the next requery comes, once ``requery_count`` were made: the
    schedule's step (the last one repeating); the first step jittered within its window."""
    schedule = requery_schedule()
    delay = schedule[min(requery_count, len(schedule) - 1)]
    if requery_count == 0:
        jitter = requery_first_jitter().total_seconds()
        delay += timedelta(seconds=random.uniform(0, jitter))  # noqa: S311 - spreading load
    return delay


def next_requery_at(*, now: datetime, requery_count: int) -> datetime:
    """When a dispatched or ambiguous payout that was requeried ``requery_count`` times is
    asked about next."""
    return now + requery_delay(requery_count=requery_count)
