"""The payout providers by name, and each mode's provider. The merchant never chooses.

``PAYOUT_PROVIDER_BY_MODE`` maps a mode to its provider name, stored on the payout at creation;
routing (``payouts.services.routing``) chooses the provider of each attempt, and every later
call about an attempt (requery, sweepers) reaches the provider the attempt went to.
"""

from __future__ import annotations

from core.provider_registry import ProviderRegistry, UnknownProviderError
from payouts.providers.base import PayoutProvider

PROVIDER_CLASSES: dict[str, str] = {
    "sandbox": "payouts.providers.sandbox.SandboxProvider",
    "sandbox-b": "payouts.providers.sandbox.SandboxBProvider",
    "paystack": "payouts.providers.paystack.PaystackProvider",
    "flutterwave": "payouts.providers.flutterwave.FlutterwaveProvider",
}
DEFAULT_PROVIDER_BY_MODE: dict[str, str] = {"test": "sandbox", "live": "paystack"}
REGISTRY = ProviderRegistry(
    kind="payout",
    setting="PAYOUT_PROVIDER_BY_MODE",
    classes=PROVIDER_CLASSES,
    default_by_mode=DEFAULT_PROVIDER_BY_MODE,
)

__all__ = ["UnknownProviderError", "provider_get", "provider_name_for_mode"]


def provider_name_for_mode(mode: str) -> str:
    return REGISTRY.name_for_mode(mode)


def provider_get(name: str) -> PayoutProvider:
    return REGISTRY.build(name)
