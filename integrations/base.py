"""The base of every vendor's client, its answers and its adapters.

A vendor (``integrations/<vendor>/``) names its settings prefix (``<PREFIX>_BASE_URL``,
``<PREFIX>_SECRET_KEY``, ``<PREFIX>_TIMEOUT_SECONDS``), what "ok" means in its answers' bodies
and, when requests' own JSON encoding will not do, how a payload is written. The rest is the
same for every vendor and lives here:

* ``ProviderClient.request``: one call to ``<base_url><path>`` with the secret key, within the
  timeouts, through ``core.provider_http.provider_call`` (it never raises for provider or
  network trouble, keeps the exchange for audit without the key and says why no usable answer
  came back), answered as the vendor's ``ProviderAnswer``;
* ``ProviderAdapter``: the base of a domain app's adapter (payouts, refunds, collections, name
  enquiry), one client built from the adapter's arguments or the settings, and ``_call``, one
  request whose "nothing came back" is logged under the adapter's own module (an adapter that
  must stop there overrides ``_unanswered``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import requests
from django.conf import settings

from core.provider_exchange import ProviderExchange
from core.provider_http import ProviderCallResult, RetryLater, provider_call

MESSAGE_MAX_CHARS = 255

AnswerT = TypeVar("AnswerT", bound="ProviderAnswer")


@dataclass(frozen=True)
class ProviderAnswer:
    """One call's outcome: what the vendor said (if anything) and its audit record."""

    exchange: ProviderExchange
    http_status: int | None = None  # None: no HTTP answer (see ``retry_later``)
    body: dict[str, Any] = field(default_factory=dict)  # the JSON object, else empty
    retry_later: RetryLater | None = None
    error: requests.RequestException | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_call(cls: type[AnswerT], result: ProviderCallResult) -> AnswerT:
        return cls(
            exchange=result.exchange,
            http_status=result.http_status,
            body=result.body_object,
            retry_later=result.retry_later,
            error=result.error,
        )

    def body_says_ok(self) -> bool:
        """The vendor's own word for success in the body (its ``status`` field)."""
        raise NotImplementedError

    @property
    def ok(self) -> bool:
        """A 2xx answer whose body says the call succeeded."""
        return (
            self.http_status is not None and 200 <= self.http_status < 300 and self.body_says_ok()
        )

    @property
    def data(self) -> dict[str, Any]:
        """``data`` when it is one object, else empty."""
        data = self.body.get("data")
        return data if isinstance(data, dict) else {}

    @property
    def message(self) -> str:
        message = self.body.get("message")
        return str(message)[:MESSAGE_MAX_CHARS] if message else ""


class ProviderClient(Generic[AnswerT]):
    """A vendor's one client: its URL, secret key and timeouts from the arguments or from the
    settings named by ``settings_prefix``."""

    settings_prefix: ClassVar[str]
    answer_class: type[AnswerT]

    def __init__(
        self,
        *,
        base_url: str | None = None,
        secret_key: str | None = None,
        timeout_seconds: float | None = None,
        connect_timeout_seconds: float | None = None,
        session: requests.Session | None = None,
    ) -> None:
        self.base_url = (base_url or self.setting("BASE_URL")).rstrip("/")
        self._secret_key: str = self.setting("SECRET_KEY") if secret_key is None else secret_key
        self.timeout_seconds: float = timeout_seconds or self.setting("TIMEOUT_SECONDS")
        self.connect_timeout_seconds = connect_timeout_seconds
        self._session = session or requests.Session()

    @classmethod
    def setting(cls, name: str) -> Any:
        """The vendor's setting ``<settings_prefix>_<name>``."""
        return getattr(settings, f"{cls.settings_prefix}_{name}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    @property
    def configured(self) -> bool:
        return bool(self._secret_key)

    def body_encode(self, payload: Mapping[str, Any]) -> bytes | None:
        """The payload's JSON text when the vendor needs it written exactly; None lets requests
        encode it."""
        return None

    def request(
        self,
        method: str,
        path: str,
        *,
        operation: str,
        payload: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AnswerT:
        """Sends one call and classifies its outcome; never raises for the vendor's or network
        trouble. ``operation`` names the call in the audit record (``<vendor>.<verb>``)."""
        timeout: float | tuple[float, float] = self.timeout_seconds
        if self.connect_timeout_seconds is not None:
            timeout = (self.connect_timeout_seconds, self.timeout_seconds)
        body = None if payload is None else self.body_encode(payload)
        json_payload = None if payload is None or body is not None else dict(payload)
        result = provider_call(
            self._session,
            method,
            f"{self.base_url}{path}",
            operation=operation,
            secret_key=self._secret_key,
            not_configured_message=f"{self.settings_prefix}_SECRET_KEY is not configured",
            timeout=timeout,
            json_payload=json_payload,
            body=body,
            params=params,
            headers=headers,
        )
        return self.answer_class.from_call(result)


class ProviderAdapter(Generic[AnswerT]):
    """The base of an adapter on one vendor's client."""

    name: str
    client_class: type[ProviderClient[AnswerT]]
    # The longest connect timeout when it should be shorter than the read timeout (None: the
    # read timeout).
    connect_timeout_max_seconds: float | None = None

    def __init__(
        self,
        *,
        base_url: str | None = None,
        secret_key: str | None = None,
        timeout_seconds: float | None = None,
        session: requests.Session | None = None,
    ) -> None:
        timeout_seconds = timeout_seconds or self.default_timeout_seconds()
        self.client = self.client_class(
            base_url=base_url,
            secret_key=secret_key,
            timeout_seconds=timeout_seconds,
            connect_timeout_seconds=self.connect_timeout_seconds(timeout_seconds),
            session=session,
        )

    def default_timeout_seconds(self) -> float:
        """The read timeout when the caller names none."""
        return self.client_class.setting("TIMEOUT_SECONDS")

    def connect_timeout_seconds(self, timeout_seconds: float) -> float | None:
        """A shorter connect timeout, or ``None`` for the read timeout."""
        if self.connect_timeout_max_seconds is None:
            return None
        return min(timeout_seconds, self.connect_timeout_max_seconds)

    def _call(
        self,
        method: str,
        path: str,
        *,
        operation: str,
        payload: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> AnswerT:
        answer = self.client.request(
            method, path, operation=operation, payload=payload, params=params
        )
        if answer.http_status is None:
            self._unanswered(answer, operation=operation)
        return answer

    def _unanswered(self, answer: AnswerT, *, operation: str) -> None:
        """Nothing came back (not configured, or no HTTP answer): logged."""
        logging.getLogger(type(self).__module__).warning(
            "%s %s failed: %s", self.name, operation, answer.exchange.error
        )
