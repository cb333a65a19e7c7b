"""One HTTP call to a provider with a secret key, and the one classification of its outcome.

Every vendor client (``integrations/<vendor>/client.py``) sends through ``provider_call``: it
never raises for provider or network trouble, keeps the ``ProviderExchange`` for audit with the
secret replaced wherever the answer echoes it (the ``Authorization`` header is never kept), and
names why no usable answer came back (``RetryLater``):

* nothing was sent: no secret key configured, the connection timed out or was refused;
* the request may have been received: the read timed out, the connection broke;
* the provider answered but not usefully: 5xx, 401/403 (our credentials), 408/429 (slow down),
  a 2xx whose body is not a JSON object.

Any other answer (a 2xx JSON object, a 4xx refusal) is the provider's word, left to the adapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import requests
from urllib3.exceptions import NameResolutionError, NewConnectionError

from core.provider_exchange import ProviderExchange

CREDENTIAL_STATUSES = frozenset({401, 403})
THROTTLE_STATUSES = frozenset({408, 429})
REDACTED = "[redacted]"


class RetryLater(StrEnum):
    """Why a provider gave no usable answer to one call."""

    NOT_CONFIGURED = "not_configured"  # no secret key: nothing was sent
    CONNECT_TIMEOUT = "connect_timeout"  # no connection within the timeout: nothing was sent
    CONNECT_FAILED = "connect_failed"  # refused, or the name did not resolve: nothing was sent
    READ_TIMEOUT = "read_timeout"  # sent, no answer in time: the provider may have received it
    CONNECTION_LOST = "connection_lost"  # broken mid-call: the provider may have received it
    SERVER_ERROR = "server_error"  # 5xx
    CREDENTIALS = "credentials"  # 401/403: our key is wrong or lacks the permission
    THROTTLED = "throttled"  # 408/429
    UNREADABLE = "unreadable"  # 2xx whose body is not a JSON object

    @property
    def never_sent(self) -> bool:
        """True only when the request certainly never reached the provider."""
        return self in _NEVER_SENT

    @property
    def timed_out(self) -> bool:
        return self in _TIMED_OUT

    @property
    def nothing_created(self) -> bool:
        """True when the provider certainly created nothing: the request never reached it, or
        it refused the call without considering it (401/403, 408/429); the call can be sent
        again later."""
        return self.never_sent or self in _REFUSED_UNCONSIDERED


_NEVER_SENT = frozenset(
    {RetryLater.NOT_CONFIGURED, RetryLater.CONNECT_TIMEOUT, RetryLater.CONNECT_FAILED}
)
_TIMED_OUT = frozenset({RetryLater.CONNECT_TIMEOUT, RetryLater.READ_TIMEOUT})
_REFUSED_UNCONSIDERED = frozenset({RetryLater.CREDENTIALS, RetryLater.THROTTLED})


@dataclass(frozen=True)
class ProviderCallResult:
    """What one call brought back: the audit record, the HTTP status (None: no answer), the
    decoded body (JSON, else the text; the secret replaced) and why to try again later."""

    exchange: ProviderExchange
    http_status: int | None = None
    raw_body: Any = None
    retry_later: RetryLater | None = None
    error: requests.RequestException | None = field(default=None, repr=False, compare=False)

    @property
    def body_object(self) -> dict[str, Any]:
        """The body when it is a JSON object, else empty."""
        return self.raw_body if isinstance(self.raw_body, dict) else {}


def transport_retry_later(error: requests.RequestException) -> RetryLater:
    """A call that raised: was it certainly never sent, or may it have been received?"""
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


def status_retry_later(http_status: int, *, body_is_object: bool) -> RetryLater | None:
    """An answer that is no usable word from the provider, or None when it is one."""
    if http_status >= 500:
        return RetryLater.SERVER_ERROR
    if http_status in CREDENTIAL_STATUSES:
        return RetryLater.CREDENTIALS
    if http_status in THROTTLE_STATUSES:
        return RetryLater.THROTTLED
    if 200 <= http_status < 300 and not body_is_object:
        return RetryLater.UNREADABLE
    return None


def without_secret(value: Any, secret: str) -> Any:
    """``value`` with every occurrence of ``secret`` in its strings replaced."""
    if not secret:
        return value
    if isinstance(value, str):
        return value.replace(secret, REDACTED) if secret in value else value
    if isinstance(value, dict):
        return {
            without_secret(key, secret): without_secret(item, secret) for key, item in value.items()
        }
    if isinstance(value, list):
        return [without_secret(item, secret) for item in value]
    return value


def provider_call(
    session: requests.Session,
    method: str,
    url: str,
    *,
    operation: str,
    secret_key: str,
    not_configured_message: str,
    timeout: float | tuple[float, float],
    json_payload: dict[str, Any] | None = None,
    body: bytes | None = None,
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> ProviderCallResult:
    """Sends one call with ``Authorization: Bearer <secret_key>`` and classifies its outcome.
    ``body`` is JSON text already encoded (sent as ``application/json``); ``json_payload`` is
    encoded by requests. Without a secret key nothing is sent."""
    if not secret_key:
        return ProviderCallResult(
            exchange=ProviderExchange(
                operation=operation, http_status=None, body=None, error=not_configured_message
            ),
            retry_later=RetryLater.NOT_CONFIGURED,
        )
    sent_headers = {
        **(headers or {}),
        "Authorization": f"Bearer {secret_key}",
        "Accept": "application/json",
    }
    if body is not None:
        sent_headers["Content-Type"] = "application/json"
    try:
        response = session.request(
            method,
            url,
            json=json_payload,
            data=body,
            params=params,
            headers=sent_headers,
            timeout=timeout,
        )
    except requests.RequestException as error:
        return ProviderCallResult(
            exchange=ProviderExchange(
                operation=operation, http_status=None, body=None, error=type(error).__name__
            ),
            retry_later=transport_retry_later(error),
            error=error,
        )
    try:
        raw_body: Any = response.json()
    except ValueError:
        raw_body = response.text
    raw_body = without_secret(raw_body, secret_key)
    return ProviderCallResult(
        exchange=ProviderExchange(
            operation=operation, http_status=response.status_code, body=raw_body
        ),
        http_status=response.status_code,
        raw_body=raw_body,
        retry_later=status_retry_later(
            response.status_code, body_is_object=isinstance(raw_body, dict)
        ),
    )
