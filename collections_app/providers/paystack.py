"""Live-mode collection adapter modelled on Paystack's Transactions API. The HTTP (URL, key,
timeouts, the raw exchange, what "try again later" means, the webhook signature) lives in
``integrations.paystack``; this adapter maps its answers onto the collection dataclasses.

* ``POST /transaction/initialize`` with our reference, the customer's email and the total in
  kobo answers ``{authorization_url, access_code, reference}``: the customer pays on
  ``authorization_url`` and comes back to ``callback_url`` (our return route).
* ``GET /transaction/verify/:reference`` reads the outcome: ``success`` → paid;
  ``failed``/``reversed`` → failed; anything else (``ongoing``, ``pending``, ``abandoned``,
  ``processing``, ``queued``, or not found) → still pending.
* Paystack signs its webhooks (``integrations.paystack.paystack_signature_valid``). A webhook
  is only a hint: the outcome always comes from ``verify``.
"""

from __future__ import annotations

from collections_app.providers.base import (
    CheckoutRequest,
    CheckoutSession,
    ProviderRefusedError,
    ProviderUnavailableError,
    VerifiedStatus,
    VerifiedTransaction,
)
from integrations.paystack import (
    PaystackAdapter,
    PaystackAnswer,
    RetryLater,
    kobo_from_naira,
    naira_from_kobo,
)

CHANNELS = {"card": ["card"], "bank": ["bank"], "bank-transfer": ["bank_transfer"]}
PAID_STATUSES = frozenset({"success"})
FAILED_STATUSES = frozenset({"failed", "reversed"})


class PaystackCollectionProvider(PaystackAdapter):
    def initialize(self, request: CheckoutRequest) -> CheckoutSession:
        answer = self._call(
            "POST",
            "/transaction/initialize",
            operation="paystack.transaction_initialize",
            payload={
                "email": request.email,
                "amount": kobo_from_naira(request.amount),
                "currency": request.currency,
                "reference": request.reference,
                "callback_url": request.return_url,
                "channels": CHANNELS.get(request.channel, ["card"]),
                "metadata": request.metadata,
            },
        )
        url = str(answer.data.get("authorization_url") or "")
        if answer.ok and url:
            return CheckoutSession(
                authorization_url=url,
                access_code=str(answer.data.get("access_code") or ""),
                reference=str(answer.data.get("reference") or request.reference),
                raw=(answer.exchange,),
            )
        status = answer.http_status or 0
        raw = (answer.exchange,)
        if answer.retry_later is not None or 200 <= status < 300:
            raise ProviderUnavailableError(
                answer.message or "payment provider unavailable", raw=raw
            )
        raise ProviderRefusedError(
            answer.message or f"payment provider refused (HTTP {status})", raw=raw
        )

    def verify(self, *, reference: str) -> VerifiedTransaction:
        answer = self._call(
            "GET", f"/transaction/verify/{reference}", operation="paystack.transaction_verify"
        )
        body = answer.body
        message = answer.message
        if answer.http_status in (400, 404) and body.get("status") is False:
            # Paystack has no transaction under this reference: nothing was paid.
            return VerifiedTransaction(
                status=VerifiedStatus.PENDING,
                reference=reference,
                message=message,
                raw=(answer.exchange,),
            )
        data = answer.data
        if not answer.ok or not data:
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
            amount_paid=naira_from_kobo(data.get("amount")),
            currency=str(data.get("currency") or ""),
            gateway_reference=str(data.get("id") or ""),
            channel=str(data.get("channel") or ""),
            card=card,
            message=str(data.get("gateway_response") or message)[:255],
            raw=(answer.exchange,),
        )

    def _unanswered(self, answer: PaystackAnswer, *, operation: str) -> None:
        """Raises ``ProviderUnavailableError``: nothing came back."""
        raw = (answer.exchange,)
        if answer.retry_later == RetryLater.NOT_CONFIGURED:
            raise ProviderUnavailableError(
                answer.exchange.error or "payment provider not configured", raw=raw
            )
        super()._unanswered(answer, operation=operation)
        raise ProviderUnavailableError("payment provider unreachable", raw=raw) from answer.error
