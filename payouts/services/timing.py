"""When payouts are asked about again: the delays of requery and dispatch, from settings."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings

logger = logging.getLogger(__name__)


def seconds_setting(name: str, default: int) -> timedelta:
    value = getattr(settings, name, None)
    if value is None:
        return timedelta(seconds=default)
    return value if isinstance(value, timedelta) else timedelta(seconds=value)


def ambiguous_requery_delay() -> timedelta:
    return seconds_setting("PAYOUT_AMBIGUOUS_REQUERY_DELAY", 300)


def requery_max_interval() -> timedelta:
    return seconds_setting("PAYOUT_REQUERY_MAX_INTERVAL", 6 * 3600)


def dispatched_requery_after() -> timedelta:
    return seconds_setting("PAYOUT_DISPATCHED_REQUERY_AFTER", 300)


def dispatch_claim_timeout() -> timedelta:
    return seconds_setting("PAYOUT_DISPATCH_CLAIM_TIMEOUT", 180)


def next_requery_at(*, now: datetime, requery_count: int) -> datetime:
    """Exponential backoff: delay, 2×delay, 4×delay, … capped at the maximum interval."""
    delay = ambiguous_requery_delay() * (2 ** min(requery_count, 16))
    return now + min(delay, max(requery_max_interval(), ambiguous_requery_delay()))
