"""Which provider carries a payout. The merchant never chooses: the key's mode does.

``PAYOUT_PROVIDER_BY_MODE`` maps a mode to a provider name; the name is stored on the payout at
creation, so later calls (dispatch, requery, sweepers) always reach the provider that holds it.
"""

from __future__ import annotations

from core.provider_registry import ProviderRegistry, UnknownProviderError
from payouts.providers.base import PayoutProvider

PROVIDER_CLASSES: dict[str, str] = {
    "sandbox": "payouts.providers.sandbox.SandboxProvider",
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
