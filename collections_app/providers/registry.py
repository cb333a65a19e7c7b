"""Which provider takes a collection payment, by the key's mode (``COLLECTION_PROVIDER_BY_MODE``).

``sandbox`` means no external provider: the hosted checkout's test forms confirm the payment.
"""

from __future__ import annotations

from collections_app.providers.base import CollectionProvider
from core.provider_registry import ProviderRegistry, UnknownProviderError

SANDBOX = "sandbox"
PROVIDER_CLASSES: dict[str, str] = {
    "paystack": "collections_app.providers.paystack.PaystackCollectionProvider",
}
DEFAULT_PROVIDER_BY_MODE: dict[str, str] = {"test": SANDBOX, "live": "paystack"}
REGISTRY = ProviderRegistry(
    kind="collection",
    setting="COLLECTION_PROVIDER_BY_MODE",
    classes=PROVIDER_CLASSES,
    default_by_mode=DEFAULT_PROVIDER_BY_MODE,
)

__all__ = ["SANDBOX", "UnknownProviderError", "collection_provider_get", "collection_provider_name"]


def collection_provider_name(mode: str) -> str:
    return REGISTRY.name_for_mode(mode)


def collection_provider_get(name: str) -> CollectionProvider:
    return REGISTRY.build(name)
