"""The service's one Paystack client.

Every call goes to ``settings.PAYSTACK_BASE_URL`` with ``Authorization: Bearer
<PAYSTACK_SECRET_KEY>``, within ``settings.PAYSTACK_TIMEOUT_SECONDS``, and answers a
``PaystackAnswer``: the HTTP status, the JSON body, the ``ProviderExchange`` kept for audit
(never the key, never the ``Authorization`` header) and, when Paystack gave no usable answer,
why (``RetryLater``). The client never raises for provider or network trouble: each adapter
decides what a ``RetryLater`` means for its own money.

The call itself and the classification of "try again later" live in ``core.provider_http``
(``provider_call``, ``RetryLater``), shared by every vendor's client. Any other answer (2xx
with a JSON object, a 4xx refusal) is Paystack's word and is left to the adapter. Amounts
travel in kobo (``kobo_from_naira`` / ``naira_from_kobo``). Webhooks are signed with
``x-paystack-signature``, the hex HMAC-SHA512 of the raw body keyed with the secret key
(``paystack_signature_valid``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import requests
from django.conf import settings

from core.money import minor_units_from_decimal, minor_units_to_decimal
from core.provider_exchange import ProviderExchange
from core.provider_http import REDACTED, RetryLater, provider_call
from core.signing import hmac_sha512_hex_compute, hmac_sha512_hex_valid

__all__ = [
    "REDACTED",
    "SIGNATURE_HEADER",
    "PaystackAnswer",
    "PaystackClient",
    "RetryLater",
    "kobo_from_naira",
    "naira_from_kobo",
    "paystack_signature_compute",
    "paystack_signature_valid",
]

SIGNATURE_HEADER = "x-paystack-signature"
NOT_CONFIGURED_MESSAGE = "PAYSTACK_SECRET_KEY is not configured"
MESSAGE_MAX_CHARS = 255


@dataclass(frozen=True)
class PaystackAnswer:
    """One call's outcome: what Paystack said (if anything) and its audit record."""

    exchange: ProviderExchange
    http_status: int | None = None  # None: no HTTP answer (see ``retry_later``)
    body: dict[str, Any] = field(default_factory=dict)  # the JSON object, else empty
    retry_later: RetryLater | None = None
    error: requests.RequestException | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """A 2xx answer with Paystack's ``"status": true``."""
        return (
            self.http_status is not None
            and 200 <= self.http_status < 300
            and self.body.get("status") is True
        )

    @property
    def data(self) -> dict[str, Any]:
        data = self.body.get("data")
        return data if isinstance(data, dict) else {}

    @property
    def message(self) -> str:
        message = self.body.get("message")
        return str(message)[:MESSAGE_MAX_CHARS] if message else ""


def kobo_from_naira(amount: Decimal) -> int:
    """``Decimal("1500.00")`` -> ``150000``; more than two decimals is a ``ValueError``."""
    return minor_units_from_decimal(amount)


def naira_from_kobo(kobo: Any) -> Decimal | None:
    """Paystack's integer kobo (or a string of ASCII digits) as naira; anything else (a float,
    a bool, a fraction of a kobo) is None."""
    if isinstance(kobo, str) and kobo.isascii() and kobo.isdigit():
        kobo = int(kobo)
    if isinstance(kobo, bool) or not isinstance(kobo, int):
        return None
    return minor_units_to_decimal(kobo)


def paystack_signature_compute(raw_body: bytes, *, secret_key: str | None = None) -> str:
    """The ``x-paystack-signature`` Paystack sends with ``raw_body``."""
    key = settings.PAYSTACK_SECRET_KEY if secret_key is None else secret_key
    return hmac_sha512_hex_compute(raw_body, secret=key)


def paystack_signature_valid(
    raw_body: bytes, signature_header: str | None, *, secret_key: str | None = None
) -> bool:
    """True when ``signature_header`` signs ``raw_body`` with the secret key (by default
    ``settings.PAYSTACK_SECRET_KEY``). Missing, non-ASCII or non-hex headers are invalid."""
    key = settings.PAYSTACK_SECRET_KEY if secret_key is None else secret_key
    return hmac_sha512_hex_valid(raw_body, signature_header, secret=key)


class PaystackClient:
    def __init__(
        self,
        *,
        base_url: str | None = None,
        secret_key: str | None = None,
        timeout_seconds: float | None = None,
        connect_timeout_seconds: float | None = None,
        session: requests.Session | None = None,
    ) -> None:
        self.base_url = (base_url or settings.PAYSTACK_BASE_URL).rstrip("/")
        self._secret_key = settings.PAYSTACK_SECRET_KEY if secret_key is None else secret_key
        self.timeout_seconds = timeout_seconds or settings.PAYSTACK_TIMEOUT_SECONDS
        self.connect_timeout_seconds = connect_timeout_seconds
        self._session = session or requests.Session()

    def __repr__(self) -> str:
        return f"PaystackClient(base_url={self.base_url!r})"

    @property
    def configured(self) -> bool:
        return bool(self._secret_key)

    def signature_valid(self, raw_body: bytes, signature_header: str | None) -> bool:
        return paystack_signature_valid(raw_body, signature_header, secret_key=self._secret_key)

    def request(
        self,
        method: str,
        path: str,
        *,
        operation: str,
        payload: dict[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> PaystackAnswer:
        """Sends one call and classifies its outcome; never raises for Paystack or network
        trouble. ``operation`` names the call in the audit record (``paystack.<verb>``)."""
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
            json_payload=payload,
            params=params,
            headers=headers,
        )
        return PaystackAnswer(
            exchange=result.exchange,
            http_status=result.http_status,
            body=result.body_object,
            retry_later=result.retry_later,
            error=result.error,
        )
