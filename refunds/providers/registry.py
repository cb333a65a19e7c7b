"""Which provider carries a refund, by the collection's mode (``REFUND_PROVIDER_BY_MODE``).

The name is stored on the refund when it is created, so every later call (send, requery, the
sweeper) reaches the provider that holds it.
"""

from __future__ import annotations

from core.provider_registry import ProviderRegistry, UnknownProviderError
from refunds.providers.base import RefundProvider

PROVIDER_CLASSES: dict[str, str] = {
    "sandbox": "refunds.providers.sandbox.SandboxRefundProvider",
    "paystack": "refunds.providers.paystack.PaystackRefundProvider",
}
DEFAULT_PROVIDER_BY_MODE: dict[str, str] = {"test": "sandbox", "live": "paystack"}
REGISTRY = ProviderRegistry(
    kind="refund",
    setting="REFUND_PROVIDER_BY_MODE",
    classes=PROVIDER_CLASSES,
    default_by_mode=DEFAULT_PROVIDER_BY_MODE,
)

__all__ = ["UnknownProviderError", "refund_provider_get", "refund_provider_name"]


def refund_provider_name(mode: str) -> str:
    return REGISTRY.name_for_mode(mode)


def refund_provider_get(name: str) -> RefundProvider:
    return REGISTRY.build(name)
