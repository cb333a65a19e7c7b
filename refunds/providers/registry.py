"""Which provider carries a refund, by the collection's mode (``REFUND_PROVIDER_BY_MODE``).

The name is stored on the refund when it is created, so every later call (send, requery, the
sweeper) reaches the provider that holds it.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from refunds.providers.base import RefundProvider

PROVIDER_CLASSES: dict[str, str] = {
    "sandbox": "refunds.providers.sandbox.SandboxRefundProvider",
    "paystack": "refunds.providers.paystack.PaystackRefundProvider",
}
DEFAULT_PROVIDER_BY_MODE: dict[str, str] = {"test": "sandbox", "live": "paystack"}


class UnknownProviderError(LookupError):
    pass


def refund_provider_name(mode: str) -> str:
    by_mode = getattr(settings, "REFUND_PROVIDER_BY_MODE", None) or DEFAULT_PROVIDER_BY_MODE
    try:
        return by_mode[mode]
    except KeyError:
        raise UnknownProviderError(f"no refund provider configured for mode {mode!r}") from None


def refund_provider_get(name: str) -> RefundProvider:
    try:
        path = PROVIDER_CLASSES[name]
    except KeyError:
        raise UnknownProviderError(f"unknown refund provider {name!r}") from None
    return import_string(path)()
