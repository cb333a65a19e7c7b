"""The service's one Flutterwave client (API v3).

Every call goes to ``settings.FLUTTERWAVE_BASE_URL`` (``https://api.flutterwave.com/v3``) with
``Authorization: Bearer <FLUTTERWAVE_SECRET_KEY>``, within
``settings.FLUTTERWAVE_TIMEOUT_SECONDS``, through ``integrations.base.ProviderClient`` and
``core.provider_http.provider_call``: it never raises for provider or network trouble, keeps the
``ProviderExchange`` for audit without the key, and says why no usable answer came back
(``RetryLater``). Each adapter decides what that means for its own money.

Flutterwave answers ``{"status": "success" | "error", "message": …, "data": …}``. Amounts travel
in naira as JSON numbers; ``json_body_encode`` writes a ``Decimal`` as its exact digits, never
through a float. Webhooks carry ``verif-hash``: the secret hash set in Flutterwave's dashboard,
sent as it is (not a signature of the body); ``flutterwave_webhook_hash_valid`` compares it in
constant time with ``settings.FLUTTERWAVE_WEBHOOK_HASH``.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.conf import settings

from integrations.base import ProviderAnswer, ProviderClient

WEBHOOK_HASH_HEADER = "verif-hash"
SUCCESS = "success"
TWO_PLACES = Decimal("0.01")


class FlutterwaveAnswer(ProviderAnswer):
    """One call's outcome: what Flutterwave said (if anything) and its audit record."""

    def body_says_ok(self) -> bool:
        """Flutterwave's ``"status": "success"``."""
        return self.body.get("status") == SUCCESS

    @property
    def data_items(self) -> list[dict[str, Any]]:
        """The objects of ``data`` when it is a list (transfers, banks), else empty."""
        data = self.body.get("data")
        if not isinstance(data, list):
            return []
        return [item for item in data if isinstance(item, dict)]


def naira_json_number(amount: Decimal) -> str:
    """``amount`` as the JSON number Flutterwave reads, exactly: ``Decimal("5500.00")`` ->
    ``5500``, ``Decimal("1500.50")`` -> ``1500.50``. More than two places, a NaN or an infinity
    is a ``ValueError``."""
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise ValueError(f"not a finite Decimal amount: {amount!r}")
    if amount != amount.quantize(TWO_PLACES):
        raise ValueError(f"more than two decimal places: {amount}")
    if amount == amount.to_integral_value():
        return str(int(amount))
    return format(amount.quantize(TWO_PLACES), "f")


def _json_text(value: Any) -> str:
    if isinstance(value, Decimal):
        return naira_json_number(value)
    if isinstance(value, float):
        raise TypeError("a float is never sent to Flutterwave; use Decimal")
    if isinstance(value, dict):
        members = (f"{json.dumps(str(key))}:{_json_text(item)}" for key, item in value.items())
        return "{" + ",".join(members) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_json_text(item) for item in value) + "]"
    return json.dumps(value)


def json_body_encode(payload: Mapping[str, Any]) -> bytes:
    """The JSON text of ``payload`` with every ``Decimal`` written as its exact number."""
    return _json_text(dict(payload)).encode("utf-8")


def flutterwave_webhook_hash_valid(
    verif_hash_header: str | None, *, secret_hash: str | None = None
) -> bool:
    """True when the ``verif-hash`` header equals the configured secret hash (by default
    ``settings.FLUTTERWAVE_WEBHOOK_HASH``), compared in constant time. No hash configured, or a
    missing header, is never valid."""
    expected = settings.FLUTTERWAVE_WEBHOOK_HASH if secret_hash is None else secret_hash
    if not expected or not verif_hash_header:
        return False
    return hmac.compare_digest(verif_hash_header.encode("utf-8"), expected.encode("utf-8"))


class FlutterwaveClient(ProviderClient[FlutterwaveAnswer]):
    settings_prefix = "FLUTTERWAVE"
    answer_class = FlutterwaveAnswer

    def body_encode(self, payload: Mapping[str, Any]) -> bytes:
        """Every payload as ``json_body_encode`` writes it: amounts exact, never a float."""
        return json_body_encode(payload)
