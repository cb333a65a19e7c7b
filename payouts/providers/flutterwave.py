"""Live-mode payout adapter on Flutterwave's Transfers API (v3). The HTTP (URL, key, timeouts,
the raw exchange, what "try again later" means) lives in ``integrations.flutterwave``; this
adapter maps its answers onto ``TransferResult``.

* ``POST /transfers`` sends the transfer in one call, with ``reference`` = our
  ``internal_reference`` (Flutterwave refuses a second transfer with the same reference: the
  idempotency guarantee) and the amount in naira as an exact JSON number.
* ``GET /transfers?reference=<ref>`` reads it back without resubmitting (a list; the entry
  whose ``reference`` is ours, if any).

Classification, so that money is never lost or paid twice:

* could not connect, no key configured → ``NOT_SENT``; read timeout, broken connection or 5xx
  → ``UNKNOWN`` (the request may have been received: the payout becomes ambiguous, never
  failed); 401/403/408/429 → ``NOT_SENT`` (refused without being considered);
* a duplicate-reference refusal → verify by reference, never resend: what Flutterwave holds
  is the truth, and if the read finds nothing the payout stays ``UNKNOWN``;
* a 2xx that is not a usable answer → verify: found wins, nothing found is ``UNKNOWN``;
* any other 4xx → verify: found wins, nothing found is ``REJECTED``;
* the transfer's ``status`` is classified by ``payouts.providers.outcomes`` (``SUCCESSFUL`` →
  ``SUCCESSFUL``; ``FAILED`` → ``FAILED``; ``NEW``/``PENDING`` → ``PENDING``; anything else →
  ``UNKNOWN``).

Flutterwave's documented transfer object carries neither a NIP session id nor a NIP response
code, so ``session_id`` and ``nip_code`` stay empty; its ``id`` is the provider reference and
``complete_message`` the message.
"""

from __future__ import annotations

import logging
from typing import Any

from core.provider_exchange import ProviderExchange
from integrations.flutterwave import FlutterwaveAdapter, FlutterwaveAnswer
from payouts.providers.base import TransferOutcome, TransferRequest, TransferResult
from payouts.providers.live import (
    REFUSED_FOR_NOW,
    LivePayoutAdapter,
    http_error_message,
    send_unanswered,
    verify_unknown,
)
from payouts.providers.outcomes import provider_status_outcome

logger = logging.getLogger(__name__)

PROVIDER_NAME = "flutterwave"
DUPLICATE_MARKERS = ("already exist", "duplicate")
DEBIT_CURRENCY = "NGN"


def duplicate_reference(answer: FlutterwaveAnswer) -> bool:
    """True when Flutterwave refused the transfer because our reference is already used
    ("Transfer with reference … already exists", ``DUPLICATE_REFERENCE``)."""
    texts = [answer.message]
    data = answer.body.get("data")
    if isinstance(data, dict):
        texts += [str(data.get("code") or ""), str(data.get("message") or "")]
    text = " ".join(texts).lower().replace("_", " ")
    return any(marker in text for marker in DUPLICATE_MARKERS)


def transfer_result_of(
    transfer: dict[str, Any], *, message: str, raw: tuple[ProviderExchange, ...]
) -> TransferResult:
    """What one Flutterwave transfer object says of the transfer."""
    transfer_id = transfer.get("id")
    return TransferResult(
        outcome=provider_status_outcome(PROVIDER_NAME, str(transfer.get("status") or "")),
        provider_reference=""
        if transfer_id is None or isinstance(transfer_id, bool)
        else str(transfer_id),
        message=str(transfer.get("complete_message") or message)[:255],
        raw=raw,
    )


class FlutterwaveProvider(LivePayoutAdapter[FlutterwaveAnswer], FlutterwaveAdapter):
    name = PROVIDER_NAME

    # --- Protocol ---------------------------------------------------------------------------

    def initiate_transfer(self, request: TransferRequest) -> TransferResult:
        transfer = self._call(
            "POST",
            "/transfers",
            operation="flutterwave.initiate_transfer",
            payload={
                "account_bank": request.bank_code,
                "account_number": request.account_number,
                "amount": request.amount,
                "currency": request.currency,
                "narration": request.narration or "",
                "reference": request.reference,
                "debit_currency": DEBIT_CURRENCY,
            },
        )
        raw: tuple[ProviderExchange, ...] = (transfer.exchange,)
        unanswered = send_unanswered(transfer, raw=raw)
        if unanswered is not None:
            return unanswered
        if transfer.retry_later in REFUSED_FOR_NOW:
            logger.error(
                "flutterwave refused the transfer call with HTTP %s; will retry",
                transfer.http_status,
            )
            return TransferResult(
                outcome=TransferOutcome.NOT_SENT, message=http_error_message(transfer), raw=raw
            )
        if transfer.ok and transfer.data:
            return transfer_result_of(transfer.data, message=transfer.message, raw=raw)
        # Not a usable acceptance. Whatever Flutterwave holds under our reference is the truth;
        # a refusal that names the reference as used, or a 2xx, may hide a transfer the read
        # does not show yet, so only a plain refusal with nothing found is final.
        return self._send_settled_by_read(
            transfer,
            reference=request.reference,
            raw=raw,
            maybe_created=duplicate_reference(transfer) or (transfer.http_status or 0) < 300,
        )

    def verify_transfer(self, *, reference: str) -> TransferResult:
        answer = self._call(
            "GET",
            "/transfers",
            operation="flutterwave.verify_transfer",
            params={"reference": reference},
        )
        raw = (answer.exchange,)
        if answer.ok:
            ours = [item for item in answer.data_items if item.get("reference") == reference]
            if not ours:
                return TransferResult(
                    outcome=TransferOutcome.NOT_FOUND,
                    message=answer.message or "No transfer with this reference",
                    raw=raw,
                )
            return transfer_result_of(ours[0], message=answer.message, raw=raw)
        if answer.http_status == 404:
            return TransferResult(
                outcome=TransferOutcome.NOT_FOUND, message=answer.message, raw=raw
            )
        return verify_unknown(answer, raw=raw)
