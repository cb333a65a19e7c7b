"""The test-mode refund provider. No money moves; the refund's amount picks the outcome.

| amount ends in | send                 | every requery        |
|----------------|----------------------|----------------------|
| .13            | failed (refused)     | failed               |
| .14            | pending              | failed               |
| .15            | pending              | processed            |
| anything else  | processed            | processed            |

The answers depend on the request only, so the sandbox keeps no state: the same refund gets the
same answers in the web process, the worker and the sweeper. Its refund ids are
``sbx_<refund_id>``; ``find`` never finds one (a sandbox send always answers).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from core.money import format_amount
from core.provider_exchange import ProviderExchange
from refunds.providers.base import RefundOutcome, RefundRequest, RefundResult

KOBO_FAILS = "13"
KOBO_PENDING_THEN_FAILS = "14"
KOBO_PENDING_THEN_PROCESSED = "15"

MAGIC_KOBO: dict[str, str] = {
    KOBO_FAILS: "refused at once: failed",
    KOBO_PENDING_THEN_FAILS: "pending; the first requery answers failed",
    KOBO_PENDING_THEN_PROCESSED: "pending; the first requery answers processed",
}

REFUSED_MESSAGE = "Refund refused by the customer's bank (sandbox)"
FAILED_LATER_MESSAGE = "Refund failed at the customer's bank (sandbox)"


def _kobo(amount: Decimal) -> str:
    return format_amount(amount)[-2:]


def sandbox_reference(refund_id: str) -> str:
    return f"sbx_{refund_id}"


class SandboxRefundProvider:
    name = "sandbox"

    def send(self, request: RefundRequest) -> RefundResult:
        kobo = _kobo(request.amount)
        if kobo == KOBO_FAILS:
            body = {"status": False, "message": REFUSED_MESSAGE}
            return RefundResult(
                outcome=RefundOutcome.FAILED,
                message=REFUSED_MESSAGE,
                raw=(
                    ProviderExchange(operation="sandbox.refund_create", http_status=400, body=body),
                ),
            )
        status = (
            "pending"
            if kobo in (KOBO_PENDING_THEN_FAILS, KOBO_PENDING_THEN_PROCESSED)
            else "processed"
        )
        return self._answer(request, status=status, operation="sandbox.refund_create")

    def fetch(self, request: RefundRequest, *, provider_reference: str) -> RefundResult:
        kobo = _kobo(request.amount)
        status = "failed" if kobo in (KOBO_FAILS, KOBO_PENDING_THEN_FAILS) else "processed"
        return self._answer(request, status=status, operation="sandbox.refund_fetch")

    def find(self, request: RefundRequest) -> RefundResult:
        body = {"status": True, "message": "Refunds retrieved", "data": []}
        return RefundResult(
            outcome=RefundOutcome.NOT_FOUND,
            message="Refund not found",
            raw=(ProviderExchange(operation="sandbox.refund_list", http_status=200, body=body),),
        )

    @staticmethod
    def _answer(request: RefundRequest, *, status: str, operation: str) -> RefundResult:
        outcome = {
            "processed": RefundOutcome.PROCESSED,
            "failed": RefundOutcome.FAILED,
        }.get(status, RefundOutcome.PENDING)
        message = {
            "processed": "Refund processed",
            "failed": FAILED_LATER_MESSAGE,
        }.get(status, "Refund has been queued for processing")
        body: dict[str, Any] = {
            "status": True,
            "message": message,
            "data": {
                "id": sandbox_reference(request.refund_id),
                "transaction": request.transaction_reference,
                "amount": format_amount(request.amount),
                "currency": request.currency,
                "status": status,
                "merchant_note": request.refund_id,
            },
        }
        return RefundResult(
            outcome=outcome,
            provider_reference=sandbox_reference(request.refund_id),
            message=message,
            raw=(ProviderExchange(operation=operation, http_status=200, body=body),),
        )
