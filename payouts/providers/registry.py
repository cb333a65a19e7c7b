"""Which provider carries a payout. The merchant never chooses: the key's mode does.

``PAYOUT_PROVIDER_BY_MODE`` maps a mode to a provider name; the name is stored on the payout at
creation, so later calls (dispatch, requery, sweepers) always reach the provider that holds it.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from payouts.providers.base import PayoutProvider

PROVIDER_CLASSES: dict[str, str] = {
    "sandbox": "payouts.providers.sandbox.SandboxProvider",
    "paystack": "payouts.providers.paystack.PaystackProvider",
}
DEFAULT_PROVIDER_BY_MODE: dict[str, str] = {"test": "sandbox", "live": "paystack"}


class UnknownProviderError(LookupError):
    pass


def provider_name_for_mode(mode: str) -> str:
    by_mode = getattr(settings, "PAYOUT_PROVIDER_BY_MODE", None) or DEFAULT_PROVIDER_BY_MODE
    try:
        return by_mode[mode]
    except KeyError:
        raise UnknownProviderError(f"no payout provider configured for mode {mode!r}") from None


def provider_get(name: str) -> PayoutProvider:
    try:
        path = PROVIDER_CLASSES[name]
    except KeyError:
        raise UnknownProviderError(f"unknown payout provider {name!r}") from None
    return import_string(path)()
