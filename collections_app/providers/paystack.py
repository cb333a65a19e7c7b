"""Live-mode collection adapter modelled on Paystack's Transactions API.

* ``POST /transaction/initialize`` with our reference, the customer's email and the total in
  kobo answers ``{authorization_url, access_code, reference}``: the customer pays on
  ``authorization_url`` and comes back to ``callback_url`` (our return route).
* ``GET /transaction/verify/:reference`` reads the outcome: ``success`` → paid;
  ``failed``/``reversed`` → failed; anything else (``ongoing``, ``pending``, ``abandoned``,
  ``processing``, ``queued``, or not found) → still pending.
* Paystack signs its webhooks with ``x-paystack-signature`` = hex HMAC-SHA512 of the raw body
  keyed with the secret key (``paystack_signature_valid``). A webhook is only a hint: the
  outcome always comes from ``verify``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from decimal import Decimal
from typing import Any

import requests
from django.conf import settings

from collections_app.providers.base import (
    CheckoutRequest,
    CheckoutSession,
    ProviderExchange,
    ProviderRefusedError,
    ProviderUnavailableError,
    VerifiedStatus,
    VerifiedTransaction,
)
from core.money import minor_units_from_decimal, minor_units_to_decimal

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "x-paystack-signature"
CHANNELS = {"card": ["card"], "bank": ["bank"], "bank-transfer": ["bank_transfer"]}
PAID_STATUSES = frozenset({"success"})
FAILED_STATUSES = frozenset({"failed", "reversed"})
RETRY_LATER_HTTP = frozenset({401, 403, 408, 429})


def paystack_signature_compute(raw_body: bytes, *, secret_key: str) -> str:
    return hmac.new(secret_key.encode("utf-8"), raw_body, hashlib.sha512).hexdigest()


def paystack_signature_valid(raw_body: bytes, signature: str, *, secret_key: str) -> bool:
    if not secret_key or not signature:
        return False
    expected = paystack_signature_compute(raw_body, secret_key=secret_key)
    return hmac.compare_digest(expected, signature.strip().lower())


def _kobo(amount: Decimal) -> int:
    return minor_units_from_decimal(amount)


def _naira(kobo: Any) -> Decimal | None:
    """Paystack's integer kobo as naira; anything else (a float, a fraction of a kobo) is None."""
    if isinstance(kobo, str) and kobo.isascii() and kobo.isdigit():
        kobo = int(kobo)
    if isinstance(kobo, bool) or not isinstance(kobo, int):
        return None
    return minor_units_to_decimal(kobo)


class PaystackCollectionProvider:
    name = "paystack"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        secret_key: str | None = None,
        timeout_seconds: float | None = None,
        session: requests.Session | None = None,
    ) -> None:
        self.base_url = (base_url or settings.PAYSTACK_BASE_URL).rstrip("/")
        self._secret_key = secret_key if secret_key is not None else settings.PAYSTACK_SECRET_KEY
        self.timeout_seconds = timeout_seconds or settings.PAYSTACK_TIMEOUT_SECONDS
        self._session = session or requests.Session()

    def initialize(self, request: CheckoutRequest) -> CheckoutSession:
        status, body, exchange = self._call(
            "POST",
            "/transaction/initialize",
            operation="paystack.transaction_initialize",
            payload={
                "email": request.email,
                "amount": _kobo(request.amount),
                "currency": request.currency,
                "reference": request.reference,
                "callback_url": request.return_url,
                "channels": CHANNELS.get(request.channel, ["card"]),
                "metadata": request.metadata,
            },
        )
        data = body.get("data") if isinstance(body.get("data"), dict) else {}
        url = str(data.get("authorization_url") or "")
        if status is not None and 200 <= status < 300 and body.get("status") is True and url:
            return CheckoutSession(
                authorization_url=url,
                access_code=str(data.get("access_code") or ""),
                reference=str(data.get("reference") or request.reference),
                raw=(exchange,),
            )
        message = str(body.get("message") or "")[:255]
        if status is None or status >= 500 or status in RETRY_LATER_HTTP or 200 <= status < 300:
            raise ProviderUnavailableError(message or "payment provider unavailable")
        raise ProviderRefusedError(message or f"payment provider refused (HTTP {status})")

    def verify(self, *, reference: str) -> VerifiedTransaction:
        status, body, exchange = self._call(
            "GET", f"/transaction/verify/{reference}", operation="paystack.transaction_verify"
        )
        message = str(body.get("message") or "")[:255]
        if status in (400, 404) and body.get("status") is False:
            # Paystack has no transaction under this reference: nothing was paid.
            return VerifiedTransaction(
                status=VerifiedStatus.PENDING, reference=reference, message=message, raw=(exchange,)
            )
        data = body.get("data") if isinstance(body.get("data"), dict) else None
        if (
            status is None
            or not (200 <= status < 300)
            or body.get("status") is not True
            or not data
        ):
            raise ProviderUnavailableError(message or "payment provider unavailable")
        if str(data.get("reference") or "") != reference:
            raise ProviderUnavailableError("payment provider answered for another reference")
        provider_status = str(data.get("status") or "").lower()
        if provider_status in PAID_STATUSES:
            verified = VerifiedStatus.PAID
        elif provider_status in FAILED_STATUSES:
            verified = VerifiedStatus.FAILED
        else:
            verified = VerifiedStatus.PENDING
        authorization = data.get("authorization")
        card = None
        if isinstance(authorization, dict) and authorization.get("last4"):
            card = {
                "brand": str(authorization.get("brand") or authorization.get("card_type") or ""),
                "last4": str(authorization.get("last4"))[-4:],
            }
        return VerifiedTransaction(
            status=verified,
            reference=reference,
            amount_paid=_naira(data.get("amount")),
            currency=str(data.get("currency") or ""),
            gateway_reference=str(data.get("id") or ""),
            channel=str(data.get("channel") or ""),
            card=card,
            message=str(data.get("gateway_response") or message)[:255],
            raw=(exchange,),
        )

    def _call(
        self,
        method: str,
        path: str,
        *,
        operation: str,
        payload: dict[str, Any] | None = None,
    ) -> tuple[int | None, dict[str, Any], ProviderExchange]:
        if not self._secret_key:
            raise ProviderUnavailableError("PAYSTACK_SECRET_KEY is not configured")
        headers = {"Authorization": f"Bearer {self._secret_key}", "Accept": "application/json"}
        try:
            response = self._session.request(
                method,
                f"{self.base_url}{path}",
                json=payload,
                headers=headers,
                timeout=self.timeout_seconds,
            )
        except requests.RequestException as error:
            logger.warning("paystack %s failed: %s", operation, type(error).__name__)
            raise ProviderUnavailableError("payment provider unreachable") from error
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        exchange = ProviderExchange(
            operation=operation, http_status=response.status_code, body=body
        )
        return response.status_code, body if isinstance(body, dict) else {}, exchange
