"""Which provider takes a collection payment, by the key's mode (``COLLECTION_PROVIDER_BY_MODE``).

``sandbox`` means no external provider: the hosted checkout's test forms confirm the payment.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from collections_app.providers.base import CollectionProvider

SANDBOX = "sandbox"
PROVIDER_CLASSES: dict[str, str] = {
    "paystack": "collections_app.providers.paystack.PaystackCollectionProvider",
}
DEFAULT_PROVIDER_BY_MODE: dict[str, str] = {"test": SANDBOX, "live": "paystack"}


class UnknownProviderError(LookupError):
    pass


def collection_provider_name(mode: str) -> str:
    by_mode = getattr(settings, "COLLECTION_PROVIDER_BY_MODE", None) or DEFAULT_PROVIDER_BY_MODE
    try:
        return by_mode[mode]
    except KeyError:
        raise UnknownProviderError(f"no collection provider configured for {mode!r}") from None


def collection_provider_get(name: str) -> CollectionProvider:
    try:
        path = PROVIDER_CLASSES[name]
    except KeyError:
        raise UnknownProviderError(f"unknown collection provider {name!r}") from None
    return import_string(path)()
