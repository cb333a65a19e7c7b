"""Live-mode payout adapter modelled on Paystack's Transfers API.

* ``POST /transferrecipient`` creates the beneficiary (``type=nuban``).
* ``POST /transfer`` initiates the transfer with ``reference`` = our ``internal_reference``
  (Paystack refuses a second transfer with the same reference: the idempotency guarantee).
* ``GET /transfer/verify/:reference`` reads its status without resubmitting.

Classification, so that money is never lost or paid twice:

* recipient step fails (timeout, 5xx, 401, 429) → ``NOT_SENT`` (no transfer can exist yet; retry);
  recipient refused (4xx) → ``REJECTED``;
* transfer: could not connect → ``NOT_SENT``; read timeout, broken connection or 5xx →
  ``UNKNOWN`` (the request may have been received: the payout becomes ambiguous, never failed);
  4xx → verify by reference: if Paystack holds the transfer its status wins, else ``REJECTED``;
* ``success`` → ``SUCCESSFUL``; ``failed``/``reversed``/``rejected``/``abandoned``/``blocked`` →
  ``FAILED``; ``pending``/``otp``/``received``/``queued``/``processing`` → ``PENDING``.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

import requests
from django.conf import settings
from urllib3.exceptions import NameResolutionError, NewConnectionError

from core.money import minor_units_from_decimal
from payouts.providers.base import (
    ProviderExchange,
    TransferOutcome,
    TransferRequest,
    TransferResult,
)

logger = logging.getLogger(__name__)

SUCCESS_STATUSES = frozenset({"success"})
FAILED_STATUSES = frozenset({"failed", "reversed", "rejected", "abandoned", "blocked"})
PENDING_STATUSES = frozenset({"pending", "otp", "received", "queued", "processing"})
RETRY_LATER_HTTP = frozenset({401, 403, 408, 429})


def status_outcome(status: str) -> TransferOutcome:
    status = (status or "").lower()
    if status in SUCCESS_STATUSES:
        return TransferOutcome.SUCCESSFUL
    if status in FAILED_STATUSES:
        return TransferOutcome.FAILED
    if status in PENDING_STATUSES:
        return TransferOutcome.PENDING
    return TransferOutcome.UNKNOWN


def _never_connected(error: requests.RequestException) -> bool:
    """True only when the request certainly never left this machine."""
    if isinstance(error, requests.ConnectTimeout):
        return True
    if isinstance(error, requests.ConnectionError) and not isinstance(error, requests.Timeout):
        reason = error.args[0] if error.args else None
        inner = getattr(reason, "reason", reason)
        return isinstance(inner, NewConnectionError | NameResolutionError)
    return False


def _kobo(amount: Decimal) -> int:
    return minor_units_from_decimal(amount)


class _Answer:
    """One HTTP exchange: parsed body or the transport error, plus its audit record."""

    def __init__(
        self,
        *,
        exchange: ProviderExchange,
        http_status: int | None = None,
        body: Any = None,
        error: requests.RequestException | None = None,
    ) -> None:
        self.exchange = exchange
        self.http_status = http_status
        self.body = body if isinstance(body, dict) else {}
        self.error = error

    @property
    def data(self) -> dict[str, Any]:
        data = self.body.get("data")
        return data if isinstance(data, dict) else {}

    @property
    def message(self) -> str:
        message = self.body.get("message")
        return str(message)[:255] if message else ""

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and self.http_status is not None
            and 200 <= self.http_status < 300
            and self.body.get("status") is True
        )


class PaystackProvider:
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
        self.timeout_seconds = timeout_seconds or getattr(
            settings, "PAYOUT_PROVIDER_TIMEOUT_SECONDS", settings.PAYSTACK_TIMEOUT_SECONDS
        )
        self._session = session or requests.Session()

    # --- Protocol ---------------------------------------------------------------------------

    def initiate_transfer(self, request: TransferRequest) -> TransferResult:
        recipient = self._call(
            "POST",
            "/transferrecipient",
            operation="paystack.create_recipient",
            payload={
                "type": "nuban",
                "name": request.account_name,
                "account_number": request.account_number,
                "bank_code": request.bank_code,
                "currency": request.currency,
            },
        )
        recipient_code = str(recipient.data.get("recipient_code") or "")
        if not recipient.ok or not recipient_code:
            return self._recipient_failure(recipient)

        transfer = self._call(
            "POST",
            "/transfer",
            operation="paystack.initiate_transfer",
            payload={
                "source": "balance",
                "amount": _kobo(request.amount),
                "recipient": recipient_code,
                "reference": request.reference,
                "reason": request.narration or "",
                "currency": request.currency,
            },
        )
        raw = (recipient.exchange, transfer.exchange)
        if transfer.error is not None:
            outcome = (
                TransferOutcome.NOT_SENT
                if _never_connected(transfer.error)
                else TransferOutcome.UNKNOWN
            )
            return TransferResult(outcome=outcome, message="Payout provider unreachable", raw=raw)
        status_code = transfer.http_status or 0
        if status_code >= 500:
            return TransferResult(
                outcome=TransferOutcome.UNKNOWN,
                message=transfer.message or f"Payout provider error (HTTP {status_code})",
                raw=raw,
            )
        if transfer.ok:
            return TransferResult(
                outcome=status_outcome(str(transfer.data.get("status", ""))),
                provider_reference=str(transfer.data.get("transfer_code") or ""),
                message=transfer.message,
                raw=raw,
            )
        if status_code in RETRY_LATER_HTTP:
            logger.error("paystack refused the transfer call with HTTP %s; will retry", status_code)
            return TransferResult(
                outcome=TransferOutcome.NOT_SENT, message=transfer.message, raw=raw
            )
        # Refused (4xx or status false). A duplicate reference means an earlier attempt got
        # through: whatever Paystack holds under our reference is the truth.
        verified = self.verify_transfer(reference=request.reference)
        raw = raw + verified.raw
        if verified.outcome == TransferOutcome.NOT_FOUND:
            return TransferResult(
                outcome=TransferOutcome.REJECTED,
                message=transfer.message or "Transfer refused by the payout provider",
                raw=raw,
            )
        return TransferResult(
            outcome=verified.outcome,
            provider_reference=verified.provider_reference,
            message=verified.message,
            raw=raw,
        )

    def verify_transfer(self, *, reference: str) -> TransferResult:
        answer = self._call(
            "GET", f"/transfer/verify/{reference}", operation="paystack.verify_transfer"
        )
        raw = (answer.exchange,)
        if answer.error is not None:
            return TransferResult(
                outcome=TransferOutcome.UNKNOWN, message="Payout provider unreachable", raw=raw
            )
        status_code = answer.http_status or 0
        if answer.ok:
            return TransferResult(
                outcome=status_outcome(str(answer.data.get("status", ""))),
                provider_reference=str(answer.data.get("transfer_code") or ""),
                message=answer.message,
                raw=raw,
            )
        if status_code == 404 or (status_code == 400 and "not found" in answer.message.lower()):
            return TransferResult(
                outcome=TransferOutcome.NOT_FOUND, message=answer.message, raw=raw
            )
        return TransferResult(
            outcome=TransferOutcome.UNKNOWN,
            message=answer.message or f"Payout provider error (HTTP {status_code})",
            raw=raw,
        )

    # --- HTTP -------------------------------------------------------------------------------

    @staticmethod
    def _recipient_failure(recipient: _Answer) -> TransferResult:
        status_code = recipient.http_status or 0
        if (
            recipient.error is not None
            or status_code >= 500
            or status_code in RETRY_LATER_HTTP
            or recipient.ok  # answered but without a recipient code: try again later
        ):
            return TransferResult(
                outcome=TransferOutcome.NOT_SENT,
                message=recipient.message or "Payout provider unreachable",
                raw=(recipient.exchange,),
            )
        return TransferResult(
            outcome=TransferOutcome.REJECTED,
            message=recipient.message or "Beneficiary refused by the payout provider",
            raw=(recipient.exchange,),
        )

    def _call(
        self,
        method: str,
        path: str,
        *,
        operation: str,
        payload: dict[str, Any] | None = None,
    ) -> _Answer:
        headers = {
            "Authorization": f"Bearer {self._secret_key}",
            "Accept": "application/json",
        }
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
            return _Answer(
                exchange=ProviderExchange(
                    operation=operation, http_status=None, body=None, error=type(error).__name__
                ),
                error=error,
            )
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        return _Answer(
            exchange=ProviderExchange(
                operation=operation, http_status=response.status_code, body=body
            ),
            http_status=response.status_code,
            body=body,
        )
