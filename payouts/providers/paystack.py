"""Live-mode payout adapter modelled on Paystack's Transfers API. The HTTP (URL, key,
timeouts, the raw exchange, what "try again later" means) lives in ``integrations.paystack``;
this adapter maps its answers onto ``TransferResult``.

* ``POST /transferrecipient`` creates the beneficiary (``type=nuban``).
* ``POST /transfer`` initiates the transfer with ``reference`` = our ``internal_reference``
  (Paystack refuses a second transfer with the same reference: the idempotency guarantee).
* ``GET /transfer/verify/:reference`` reads its status without resubmitting.

Classification, so that money is never lost or paid twice:

* recipient step fails (timeout, 5xx, 401, 429, unreadable) → ``NOT_SENT`` (no transfer can
  exist yet; retry); recipient refused (4xx) → ``REJECTED``;
* transfer: could not connect → ``NOT_SENT``; read timeout, broken connection or 5xx →
  ``UNKNOWN`` (the request may have been received: the payout becomes ambiguous, never failed);
  401/403/408/429 → ``NOT_SENT`` (refused without being considered); other 4xx or an
  unreadable 2xx → verify by reference: if Paystack holds the transfer its status wins, else
  ``REJECTED``;
* the transfer's ``status`` is classified by ``payouts.providers.outcomes`` (``success`` →
  ``SUCCESSFUL``; ``failed``/``reversed``/… → ``FAILED``; ``pending``/``otp``/… → ``PENDING``);
  a NIP response code in ``gateway_response`` that flags suspected fraud (34, 35, 63) makes it
  ``HELD`` whatever the status says.
"""

from __future__ import annotations

import logging
from typing import Any

from core.provider_exchange import ProviderExchange
from integrations.paystack import PaystackAdapter, PaystackAnswer, kobo_from_naira
from payouts.providers.base import TransferOutcome, TransferRequest, TransferResult
from payouts.providers.live import (
    REFUSED_FOR_NOW,
    UNREACHABLE_MESSAGE,
    LivePayoutAdapter,
    send_unanswered,
    verify_unknown,
)
from payouts.providers.outcomes import is_nip_code, nip_code_outcome, provider_status_outcome

logger = logging.getLogger(__name__)

PROVIDER_NAME = "paystack"


def nip_code_of(data: dict[str, Any]) -> str:
    """The NIP response code a Paystack transfer object carries in ``gateway_response``, when
    it is one the outcome table knows; else ``""``."""
    value = data.get("gateway_response")
    code = str(value).strip() if isinstance(value, str | int) else ""
    return code if is_nip_code(code) else ""


def transfer_outcome_of(data: dict[str, Any]) -> TransferOutcome:
    """What a Paystack transfer object says of the money: its status, unless a NIP code in it
    flags suspected fraud."""
    code = nip_code_of(data)
    if code and nip_code_outcome(code, confirmed_by_requery=True) == TransferOutcome.HELD:
        return TransferOutcome.HELD
    return provider_status_outcome(PROVIDER_NAME, str(data.get("status", "")))


def session_id_of(data: dict[str, Any]) -> str:
    """The NIP session id of a Paystack transfer object (``{"session": {"provider": "nip",
    "id": "…"}}``), or ``""`` while Paystack has none."""
    session = data.get("session")
    if not isinstance(session, dict):
        return ""
    value = session.get("id")
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""


def transfer_result_of(
    answer: PaystackAnswer, *, raw: tuple[ProviderExchange, ...]
) -> TransferResult:
    """What a Paystack transfer object (the answer's ``data``) says of the transfer."""
    return TransferResult(
        outcome=transfer_outcome_of(answer.data),
        provider_reference=str(answer.data.get("transfer_code") or ""),
        session_id=session_id_of(answer.data),
        message=answer.message,
        nip_code=nip_code_of(answer.data),
        raw=raw,
    )


class PaystackProvider(LivePayoutAdapter[PaystackAnswer], PaystackAdapter):
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
                "amount": kobo_from_naira(request.amount),
                "recipient": recipient_code,
                "reference": request.reference,
                "reason": request.narration or "",
                "currency": request.currency,
            },
        )
        raw: tuple[ProviderExchange, ...] = (recipient.exchange, transfer.exchange)
        unanswered = send_unanswered(transfer, raw=raw)
        if unanswered is not None:
            return unanswered
        if transfer.ok:
            return transfer_result_of(transfer, raw=raw)
        if transfer.retry_later in REFUSED_FOR_NOW:
            logger.error(
                "paystack refused the transfer call with HTTP %s; will retry", transfer.http_status
            )
            return TransferResult(
                outcome=TransferOutcome.NOT_SENT, message=transfer.message, raw=raw
            )
        # Refused (4xx or status false) or unreadable. A duplicate reference means an earlier
        # attempt got through: whatever Paystack holds under our reference is the truth.
        return self._send_settled_by_read(transfer, reference=request.reference, raw=raw)

    def verify_transfer(self, *, reference: str) -> TransferResult:
        answer = self._call(
            "GET", f"/transfer/verify/{reference}", operation="paystack.verify_transfer"
        )
        raw = (answer.exchange,)
        if answer.ok:
            return transfer_result_of(answer, raw=raw)
        status_code = answer.http_status
        if status_code == 404 or (status_code == 400 and "not found" in answer.message.lower()):
            return TransferResult(
                outcome=TransferOutcome.NOT_FOUND, message=answer.message, raw=raw
            )
        return verify_unknown(answer, raw=raw)

    # --- Mapping ----------------------------------------------------------------------------

    @staticmethod
    def _recipient_failure(recipient: PaystackAnswer) -> TransferResult:
        """No transfer can exist yet: anything but Paystack's refusal is tried again later
        (including an answer without a recipient code)."""
        if recipient.retry_later is not None or recipient.ok:
            return TransferResult(
                outcome=TransferOutcome.NOT_SENT,
                message=recipient.message or UNREACHABLE_MESSAGE,
                raw=(recipient.exchange,),
            )
        return TransferResult(
            outcome=TransferOutcome.REJECTED,
            message=recipient.message or "Beneficiary refused by the payout provider",
            raw=(recipient.exchange,),
        )
