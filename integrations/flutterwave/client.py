"""The service's one Flutterwave client (API v3).

Every call goes to ``settings.FLUTTERWAVE_BASE_URL`` (``https://api.flutterwave.com/v3``) with
``Authorization: Bearer <FLUTTERWAVE_SECRET_KEY>``, within
``settings.FLUTTERWAVE_TIMEOUT_SECONDS``, through ``core.provider_http.provider_call``: it never
raises for provider or network trouble, keeps the ``ProviderExchange`` for audit without the
key, and says why no usable answer came back (``RetryLater``). Each adapter decides what that
means for its own money.

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
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import requests
from django.conf import settings

from core.provider_exchange import ProviderExchange
from core.provider_http import RetryLater, provider_call

WEBHOOK_HASH_HEADER = "verif-hash"
NOT_CONFIGURED_MESSAGE = "FLUTTERWAVE_SECRET_KEY is not configured"
MESSAGE_MAX_CHARS = 255
SUCCESS = "success"
TWO_PLACES = Decimal("0.01")


@dataclass(frozen=True)
class FlutterwaveAnswer:
    """One call's outcome: what Flutterwave said (if anything) and its audit record."""

    exchange: ProviderExchange
    http_status: int | None = None  # None: no HTTP answer (see ``retry_later``)
    body: dict[str, Any] = field(default_factory=dict)  # the JSON object, else empty
    retry_later: RetryLater | None = None
    error: requests.RequestException | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """A 2xx answer with Flutterwave's ``"status": "success"``."""
        return (
            self.http_status is not None
            and 200 <= self.http_status < 300
            and self.body.get("status") == SUCCESS
        )

    @property
    def data(self) -> dict[str, Any]:
        """``data`` when it is one object (a transfer, a resolved account), else empty."""
        data = self.body.get("data")
        return data if isinstance(data, dict) else {}

    @property
    def data_items(self) -> list[dict[str, Any]]:
        """The objects of ``data`` when it is a list (transfers, banks), else empty."""
        data = self.body.get("data")
        if not isinstance(data, list):
            return []
        return [item for item in data if isinstance(item, dict)]

    @property
    def message(self) -> str:
        message = self.body.get("message")
        return str(message)[:MESSAGE_MAX_CHARS] if message else ""


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


class FlutterwaveClient:
    def __init__(
        self,
        *,
        base_url: str | None = None,
        secret_key: str | None = None,
        timeout_seconds: float | None = None,
        connect_timeout_seconds: float | None = None,
        session: requests.Session | None = None,
    ) -> None:
        self.base_url = (base_url or settings.FLUTTERWAVE_BASE_URL).rstrip("/")
        self._secret_key = settings.FLUTTERWAVE_SECRET_KEY if secret_key is None else secret_key
        self.timeout_seconds = timeout_seconds or settings.FLUTTERWAVE_TIMEOUT_SECONDS
        self.connect_timeout_seconds = connect_timeout_seconds
        self._session = session or requests.Session()

    def __repr__(self) -> str:
        return f"FlutterwaveClient(base_url={self.base_url!r})"

    @property
    def configured(self) -> bool:
        return bool(self._secret_key)

    def request(
        self,
        method: str,
        path: str,
        *,
        operation: str,
        payload: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> FlutterwaveAnswer:
        """Sends one call and classifies its outcome; never raises for Flutterwave or network
        trouble. ``operation`` names the call in the audit record (``flutterwave.<verb>``)."""
        timeout: float | tuple[float, float] = self.timeout_seconds
        if self.connect_timeout_seconds is not None:
            timeout = (self.connect_timeout_seconds, self.timeout_seconds)
        result = provider_call(
            self._session,
            method,
            f"{self.base_url}{path}",
            operation=operation,
            secret_key=self._secret_key,
            not_configured_message=NOT_CONFIGURED_MESSAGE,
            timeout=timeout,
            body=None if payload is None else json_body_encode(payload),
            params=params,
        )
        return FlutterwaveAnswer(
            exchange=result.exchange,
            http_status=result.http_status,
            body=result.body_object,
            retry_later=result.retry_later,
            error=result.error,
        )
