"""Live-mode refund adapter modelled on Paystack's Refunds API. The HTTP (URL, key, timeouts,
the raw exchange, what "try again later" means) lives in ``integrations.paystack``; this
adapter maps its answers onto ``RefundResult``.

* ``POST /refund`` with ``transaction`` (the collection's reference, which Paystack knows from
  ``/transaction/initialize``), ``amount`` in kobo, ``currency``, ``merchant_note`` (our
  ``refund_id``, then the reason) and ``customer_note`` (the reason) answers the refund object
  (``id``, ``status``).
* ``GET /refund/:id`` reads it again; ``GET /refund?transaction=…`` lists the collection's
  refunds, where ours is the one whose merchant note starts with our ``refund_id``.

Statuses: ``processed`` → processed; ``failed`` → failed; ``pending``, ``processing`` and
``needs-attention`` (Paystack's team must act; it ends processed or failed) → pending.

Classification of a send, so that a customer is never refunded twice: could not connect, no
key, 401/403/408/429 → ``NOT_SENT`` (send again later); read timeout, broken connection, 5xx
or an unreadable 2xx → ``UNKNOWN`` (the refund stays pending and is looked for by our
``refund_id`` before any new send); another 4xx (``"status": false``) → ``FAILED`` with
Paystack's message (nothing was created).
"""

from __future__ import annotations

import logging
from typing import Any

from integrations.paystack import PaystackAdapter, PaystackAnswer, kobo_from_naira
from refunds.providers.base import RefundOutcome, RefundRequest, RefundResult

logger = logging.getLogger(__name__)

PROCESSED_STATUSES = frozenset({"processed"})
FAILED_STATUSES = frozenset({"failed"})
PENDING_STATUSES = frozenset({"pending", "processing", "needs-attention"})
NOTE_MAX_CHARS = 255


def status_outcome(status: Any) -> RefundOutcome:
    status = str(status or "").lower()
    if status in PROCESSED_STATUSES:
        return RefundOutcome.PROCESSED
    if status in FAILED_STATUSES:
        return RefundOutcome.FAILED
    if status in PENDING_STATUSES:
        return RefundOutcome.PENDING
    return RefundOutcome.UNKNOWN


def merchant_note(request: RefundRequest) -> str:
    note = request.refund_id if not request.reason else f"{request.refund_id}: {request.reason}"
    return note[:NOTE_MAX_CHARS]


def _refund_result(data: dict[str, Any], answer: PaystackAnswer) -> RefundResult:
    outcome = status_outcome(data.get("status"))
    if outcome == RefundOutcome.UNKNOWN:
        logger.warning("paystack refund %s: unknown status %r", data.get("id"), data.get("status"))
    if str(data.get("status") or "").lower() == "needs-attention":
        logger.warning("paystack refund %s needs attention at Paystack", data.get("id"))
    return RefundResult(
        outcome=outcome,
        provider_reference=str(data.get("id") or ""),
        message=answer.message,
        raw=(answer.exchange,),
    )


class PaystackRefundProvider(PaystackAdapter):
    def send(self, request: RefundRequest) -> RefundResult:
        answer = self._call(
            "POST",
            "/refund",
            operation="paystack.refund_create",
            payload={
                "transaction": request.transaction_reference,
                "amount": kobo_from_naira(request.amount),
                "currency": request.currency,
                "merchant_note": merchant_note(request),
                "customer_note": (request.reason or f"Refund for {request.transaction_reference}")[
                    :NOTE_MAX_CHARS
                ],
            },
        )
        raw = (answer.exchange,)
        if answer.retry_later is not None:
            if answer.retry_later.nothing_created:
                return RefundResult(
                    outcome=RefundOutcome.NOT_SENT,
                    message=f"Refund provider unavailable ({answer.retry_later})",
                    raw=raw,
                )
            return RefundResult(
                outcome=RefundOutcome.UNKNOWN,
                message=f"Refund provider gave no answer ({answer.retry_later})",
                raw=raw,
            )
        if answer.ok and answer.data:
            return _refund_result(answer.data, answer)
        status = answer.http_status or 0
        if 400 <= status < 500:
            return RefundResult(
                outcome=RefundOutcome.FAILED,
                message=answer.message or f"Refund refused by the provider (HTTP {status})",
                raw=raw,
            )
        return RefundResult(
            outcome=RefundOutcome.UNKNOWN,
            message=answer.message or f"Refund provider error (HTTP {status})",
            raw=raw,
        )

    def fetch(self, request: RefundRequest, *, provider_reference: str) -> RefundResult:
        answer = self._call(
            "GET", f"/refund/{provider_reference}", operation="paystack.refund_fetch"
        )
        if answer.ok and answer.data:
            result = _refund_result(answer.data, answer)
            if result.provider_reference and result.provider_reference != provider_reference:
                return RefundResult(
                    outcome=RefundOutcome.UNKNOWN,
                    message="Refund provider answered for another refund",
                    raw=result.raw,
                )
            return result
        return RefundResult(
            outcome=RefundOutcome.UNKNOWN,
            message=answer.message or "Refund provider gave no usable answer",
            raw=(answer.exchange,),
        )

    def find(self, request: RefundRequest) -> RefundResult:
        transaction = request.gateway_reference or request.transaction_reference
        answer = self._call(
            "GET",
            "/refund",
            operation="paystack.refund_list",
            params={"transaction": transaction, "currency": request.currency},
        )
        listed = answer.body.get("data")
        if not answer.ok or not isinstance(listed, list):
            return RefundResult(
                outcome=RefundOutcome.UNKNOWN,
                message=answer.message or "Refund provider gave no usable answer",
                raw=(answer.exchange,),
            )
        for item in listed:
            if isinstance(item, dict) and str(item.get("merchant_note") or "").startswith(
                request.refund_id
            ):
                return _refund_result(item, answer)
        return RefundResult(
            outcome=RefundOutcome.NOT_FOUND, message="Refund not found", raw=(answer.exchange,)
        )
