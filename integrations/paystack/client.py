"""The service's one Paystack client.

Every call goes to ``settings.PAYSTACK_BASE_URL`` with ``Authorization: Bearer
<PAYSTACK_SECRET_KEY>``, within ``settings.PAYSTACK_TIMEOUT_SECONDS``, and answers a
``PaystackAnswer``: the HTTP status, the JSON body, the ``ProviderExchange`` kept for audit
(never the key, never the ``Authorization`` header) and, when Paystack gave no usable answer,
why (``RetryLater``). The client never raises for provider or network trouble: each adapter
decides what a ``RetryLater`` means for its own money.

``RetryLater``, the one classification of "try again later":

* nothing was sent: no secret key configured, the connection timed out or was refused;
* the request may have been received: the read timed out, the connection broke;
* Paystack answered but not usefully: 5xx, 401/403 (our credentials), 408/429 (slow down),
  a 2xx whose body is not a JSON object.

Any other answer (2xx with a JSON object, a 4xx refusal) is Paystack's word and is left to
the adapter. Amounts travel in kobo (``kobo_from_naira`` / ``naira_from_kobo``). Webhooks are
signed with ``x-paystack-signature``, the hex HMAC-SHA512 of the raw body keyed with the secret
key (``paystack_signature_valid``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any

import requests
from django.conf import settings
from urllib3.exceptions import NameResolutionError, NewConnectionError

from core.money import minor_units_from_decimal, minor_units_to_decimal
from core.provider_exchange import ProviderExchange
from core.signing import hmac_sha512_hex_compute, hmac_sha512_hex_valid

SIGNATURE_HEADER = "x-paystack-signature"
NOT_CONFIGURED_MESSAGE = "PAYSTACK_SECRET_KEY is not configured"
MESSAGE_MAX_CHARS = 255
CREDENTIAL_STATUSES = frozenset({401, 403})
THROTTLE_STATUSES = frozenset({408, 429})
REDACTED = "[redacted]"


class RetryLater(StrEnum):
    """Why Paystack gave no usable answer to one call."""

    NOT_CONFIGURED = "not_configured"  # no secret key: nothing was sent
    CONNECT_TIMEOUT = "connect_timeout"  # no connection within the timeout: nothing was sent
    CONNECT_FAILED = "connect_failed"  # refused, or the name did not resolve: nothing was sent
    READ_TIMEOUT = "read_timeout"  # sent, no answer in time: Paystack may have received it
    CONNECTION_LOST = "connection_lost"  # broken mid-call: Paystack may have received it
    SERVER_ERROR = "server_error"  # 5xx
    CREDENTIALS = "credentials"  # 401/403: our key is wrong or lacks the permission
    THROTTLED = "throttled"  # 408/429
    UNREADABLE = "unreadable"  # 2xx whose body is not a JSON object

    @property
    def never_sent(self) -> bool:
        """True only when the request certainly never reached Paystack."""
        return self in _NEVER_SENT

    @property
    def timed_out(self) -> bool:
        return self in _TIMED_OUT

    @property
    def nothing_created(self) -> bool:
        """True when Paystack certainly created nothing: the request never reached it, or it
        refused the call without considering it (401/403, 408/429); the call can be sent again
        later."""
        return self.never_sent or self in _REFUSED_UNCONSIDERED


_NEVER_SENT = frozenset(
    {RetryLater.NOT_CONFIGURED, RetryLater.CONNECT_TIMEOUT, RetryLater.CONNECT_FAILED}
)
_TIMED_OUT = frozenset({RetryLater.CONNECT_TIMEOUT, RetryLater.READ_TIMEOUT})
_REFUSED_UNCONSIDERED = frozenset({RetryLater.CREDENTIALS, RetryLater.THROTTLED})


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


def _transport_retry_later(error: requests.RequestException) -> RetryLater:
    if isinstance(error, requests.ConnectTimeout):
        return RetryLater.CONNECT_TIMEOUT
    if isinstance(error, requests.Timeout):
        return RetryLater.READ_TIMEOUT
    if isinstance(error, requests.ConnectionError):
        reason = error.args[0] if error.args else None
        inner = getattr(reason, "reason", reason)
        if isinstance(inner, NewConnectionError | NameResolutionError):
            return RetryLater.CONNECT_FAILED
    return RetryLater.CONNECTION_LOST


def _status_retry_later(http_status: int, *, body_is_object: bool) -> RetryLater | None:
    if http_status >= 500:
        return RetryLater.SERVER_ERROR
    if http_status in CREDENTIAL_STATUSES:
        return RetryLater.CREDENTIALS
    if http_status in THROTTLE_STATUSES:
        return RetryLater.THROTTLED
    if 200 <= http_status < 300 and not body_is_object:
        return RetryLater.UNREADABLE
    return None


def _without_secret(value: Any, secret: str) -> Any:
    """``value`` with every occurrence of ``secret`` in its strings replaced."""
    if not secret:
        return value
    if isinstance(value, str):
        return value.replace(secret, REDACTED) if secret in value else value
    if isinstance(value, dict):
        return {
            _without_secret(key, secret): _without_secret(item, secret)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_without_secret(item, secret) for item in value]
    return value


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
        if not self._secret_key:
            return PaystackAnswer(
                exchange=ProviderExchange(
                    operation=operation, http_status=None, body=None, error=NOT_CONFIGURED_MESSAGE
                ),
                retry_later=RetryLater.NOT_CONFIGURED,
            )
        sent_headers = {
            **(headers or {}),
            "Authorization": f"Bearer {self._secret_key}",
            "Accept": "application/json",
        }
        timeout: float | tuple[float, float] = self.timeout_seconds
        if self.connect_timeout_seconds is not None:
            timeout = (self.connect_timeout_seconds, self.timeout_seconds)
        try:
            response = self._session.request(
                method,
                f"{self.base_url}{path}",
                json=payload,
                params=params,
                headers=sent_headers,
                timeout=timeout,
            )
        except requests.RequestException as error:
            return PaystackAnswer(
                exchange=ProviderExchange(
                    operation=operation, http_status=None, body=None, error=type(error).__name__
                ),
                retry_later=_transport_retry_later(error),
                error=error,
            )
        try:
            raw_body: Any = response.json()
        except ValueError:
            raw_body = response.text
        raw_body = _without_secret(raw_body, self._secret_key)
        body_is_object = isinstance(raw_body, dict)
        return PaystackAnswer(
            exchange=ProviderExchange(
                operation=operation, http_status=response.status_code, body=raw_body
            ),
            http_status=response.status_code,
            body=raw_body if body_is_object else {},
            retry_later=_status_retry_later(response.status_code, body_is_object=body_is_object),
        )
