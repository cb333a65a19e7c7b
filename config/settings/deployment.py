"""What a running service (``DEBUG`` off) must have configured.

``config.settings.production`` and ``config.settings.local`` call
``deployment_settings_check(globals())`` once their settings are final; the test settings do
not. ``SECRET_KEY`` is checked in ``config.settings.base`` already. Messages name the variable
to set and never its value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from core.crypto import KEY_GENERATE_HINT, encryption_keys_parse, encryption_keys_problem

PAYSTACK = "paystack"
FLUTTERWAVE = "flutterwave"
# setting holding the providers per mode -> the variable choosing the live one
LIVE_PROVIDER_SETTINGS = {
    "PAYOUT_PROVIDER_BY_MODE": "PAYOUT_PROVIDER_LIVE",
    "COLLECTION_PROVIDER_BY_MODE": "COLLECTION_PROVIDER_LIVE",
    "REFUND_PROVIDER_BY_MODE": "REFUND_PROVIDER_LIVE",
}


def deployment_settings_check(settings: Mapping[str, Any]) -> None:
    """Raises ``ImproperlyConfigured`` naming the first variable that must be set."""
    funding_secret = str(settings.get("FUNDING_WEBHOOK_SECRET") or "").strip()
    if not funding_secret or funding_secret == settings["DEFAULT_FUNDING_WEBHOOK_SECRET"]:
        raise ImproperlyConfigured(
            "FUNDING_WEBHOOK_SECRET is empty or the public development default; set "
            "FUNDING_WEBHOOK_SECRET to the secret shared with the funding provider "
            "(or DEBUG=1 locally)."
        )
    encryption_keys = encryption_keys_parse(settings.get("FIELD_ENCRYPTION_KEYS"))
    if settings["DEFAULT_FIELD_ENCRYPTION_KEY"] in encryption_keys:
        raise ImproperlyConfigured(
            "FIELD_ENCRYPTION_KEYS is unset or holds the public development key; set "
            "FIELD_ENCRYPTION_KEYS to Fernet keys of your own, comma-separated, the newest first "
            f"({KEY_GENERATE_HINT}) (or DEBUG=1 locally)."
        )
    problem = encryption_keys_problem(encryption_keys)
    if problem:
        raise ImproperlyConfigured(f"{problem} (or DEBUG=1 locally).")
    if not str(settings.get("PAYSTACK_SECRET_KEY") or "").strip():
        for setting, variable in LIVE_PROVIDER_SETTINGS.items():
            if (settings.get(setting) or {}).get("live") == PAYSTACK:
                raise ImproperlyConfigured(
                    f"PAYSTACK_SECRET_KEY is not set but the live provider {setting}['live'] "
                    f"({variable}) is {PAYSTACK}; set PAYSTACK_SECRET_KEY, or choose another "
                    f"live provider with {variable} (or DEBUG=1 locally)."
                )
    live_payouts = (settings.get("PAYOUT_PROVIDER_BY_MODE") or {}).get("live")
    if live_payouts == FLUTTERWAVE:
        for variable in ("FLUTTERWAVE_SECRET_KEY", "FLUTTERWAVE_WEBHOOK_HASH"):
            if not str(settings.get(variable) or "").strip():
                raise ImproperlyConfigured(
                    f"{variable} is not set but the live payout provider (PAYOUT_PROVIDER_LIVE) "
                    f"is {FLUTTERWAVE}; set {variable}, or choose another live provider with "
                    "PAYOUT_PROVIDER_LIVE (or DEBUG=1 locally)."
                )
    live_name_enquiry = str((settings.get("NAME_ENQUIRY_PROVIDERS") or {}).get("live") or "")
    if (
        FLUTTERWAVE in live_name_enquiry.lower()
        and not str(settings.get("FLUTTERWAVE_SECRET_KEY") or "").strip()
    ):
        raise ImproperlyConfigured(
            "FLUTTERWAVE_SECRET_KEY is not set but the live name-enquiry provider "
            "(NAME_ENQUIRY_PROVIDER_LIVE) is Flutterwave's; set FLUTTERWAVE_SECRET_KEY, or "
            "choose another with NAME_ENQUIRY_PROVIDER_LIVE (or DEBUG=1 locally)."
        )
