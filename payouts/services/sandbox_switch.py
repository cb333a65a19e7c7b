"""The test-mode switch of a sandbox payout provider, per merchant: ``down``, ``slow`` or
``up``. It changes how a sandbox provider answers that merchant's payouts only
(``payouts.providers.sandbox``); no other merchant, and no live provider, ever sees it."""

from __future__ import annotations

import logging

from core.exceptions import ApplicationError, NotFoundError
from merchants.models import Merchant
from payouts.models import SandboxProviderSwitch, SandboxSwitchState
from payouts.providers.sandbox import SANDBOX_PROVIDER_NAMES

logger = logging.getLogger(__name__)

PROVIDER_NOT_FOUND_MESSAGE = "Sandbox payout provider not found"


def sandbox_provider_switch_set(
    *, merchant: Merchant, provider_name: str, state: str
) -> SandboxProviderSwitch:
    """Switches ``provider_name`` (a sandbox provider, else 404) to ``state`` for ``merchant``'s
    test payouts; the next send to it answers accordingly."""
    if provider_name not in SANDBOX_PROVIDER_NAMES:
        raise NotFoundError(PROVIDER_NOT_FOUND_MESSAGE)
    if state not in SandboxSwitchState.values:
        raise ApplicationError(f"state: must be one of {', '.join(SandboxSwitchState.values)}")
    switch, _created = SandboxProviderSwitch.objects.update_or_create(
        merchant=merchant, provider_name=provider_name, defaults={"state": state}
    )
    logger.info("merchant %s switched %s %s (test mode)", merchant.pk, provider_name, state)
    return switch


def sandbox_provider_switches(*, merchant: Merchant) -> dict[str, str]:
    """Every sandbox provider's state for ``merchant`` (``up`` unless switched)."""
    switched = dict(
        SandboxProviderSwitch.objects.filter(merchant=merchant).values_list(
            "provider_name", "state"
        )
    )
    return {name: switched.get(name, SandboxSwitchState.UP) for name in SANDBOX_PROVIDER_NAMES}
