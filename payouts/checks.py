"""System checks for the payout dispatch and requery settings (``manage.py check``)."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Warning, register


@register()
def dispatch_timeouts_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A dispatch message the broker redelivers (its worker died) should find the dispatch
    claim already stale, so the redelivery retakes the payout at once: the broker's visibility
    timeout must exceed the claim timeout. Otherwise the redelivery finds a live claim, is
    dropped, and the payout waits for the ``dispatch_stuck`` sweeper."""
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}) or {}
    visibility_timeout = options.get("visibility_timeout")
    claim_timeout = settings.PAYOUT_DISPATCH_CLAIM_TIMEOUT
    if visibility_timeout is None:
        return []  # the broker has no visibility timeout (filesystem transport)
    if visibility_timeout > claim_timeout.total_seconds():
        return []
    return [
        Warning(
            f"CELERY_VISIBILITY_TIMEOUT ({visibility_timeout} s) is not above "
            f"PAYOUT_DISPATCH_CLAIM_TIMEOUT_SECONDS ({claim_timeout.total_seconds():.0f} s)",
            hint="A dispatch redelivered after a worker died will wait for the dispatch_stuck "
            "sweeper; raise CELERY_VISIBILITY_TIMEOUT.",
            id="payouts.W001",
        )
    ]


# Settings the requery schedule replaced; each is ignored now.
REPLACED_REQUERY_SETTINGS = (
    "PAYOUT_AMBIGUOUS_REQUERY_DELAY_SECONDS",
    "PAYOUT_REQUERY_MAX_INTERVAL_SECONDS",
    "PAYOUT_DISPATCHED_REQUERY_AFTER_SECONDS",
)


@register()
def replaced_requery_settings_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """An environment still setting the exponential backoff's variables gets a warning: they
    are ignored since ``PAYOUT_REQUERY_SCHEDULE_SECONDS`` replaced them."""
    given = [name for name in REPLACED_REQUERY_SETTINGS if name in os.environ]
    if not given:
        return []
    return [
        Warning(
            f"{', '.join(given)} no longer apply and are ignored",
            hint="Set PAYOUT_REQUERY_SCHEDULE_SECONDS (e.g. 60,180,600,1800,3600: the delay "
            "before each requery, the last repeating) and PAYOUT_REQUERY_ESCALATE_AFTER_SECONDS.",
            id="payouts.W002",
        )
    ]
