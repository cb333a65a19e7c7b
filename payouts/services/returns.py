"""Returns after success: a payout the beneficiary's bank sent back after it was paid, learned
from the provider or a statement, credited back once."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.exceptions import ConflictError, NotFoundError
from core.money import format_amount, format_amount_display
from payouts.events import payout_returned_event_emit
from payouts.models import (
    Payout,
    PayoutStatus,
)
from payouts.providers.base import (
    TransferOutcome,
    TransferResult,
)
from payouts.providers.registry import provider_get
from payouts.services.attempts import payout_attempt_current
from payouts.services.settle import provider_answer_record
from payouts.signals import payout_returned
from wallets.services import (
    wallet_return,
)

logger = logging.getLogger(__name__)


ALREADY_RETURNED_MESSAGE = "Payout was already returned"
NOT_RETURNABLE_MESSAGE = "Only a successful payout can be returned"
DEFAULT_RETURN_REASON = "Returned by the beneficiary bank"


@dataclass(frozen=True)
class PayoutReturnResult:
    payout: Payout
    applied: bool  # False: it had been returned before; nothing changed


def return_refunds_fee() -> bool:
    """``PAYOUT_RETURN_REFUNDS_FEE``: whether a return gives the merchant the fee back too."""
    return bool(getattr(settings, "PAYOUT_RETURN_REFUNDS_FEE", False))


@transaction.atomic
def payout_return(
    *, payout_id: int, reason: str = "", result: TransferResult | None = None
) -> PayoutReturnResult:
    """A successful payout the beneficiary's bank sent back (Paystack ``reversed`` after
    ``success``): it stays ``successful`` and gains ``returned_at`` and ``return_reason``; its
    principal (and its fee, with ``PAYOUT_RETURN_REFUNDS_FEE``) goes back to the available
    balance in one ``payout_return`` ledger entry; ``payout.returned`` is recorded and
    ``payouts.signals.payout_returned`` sent. Once per
    payout: under the payout's row lock, a second return changes nothing (``applied=False``).
    Anything but a successful payout is a 409."""
    payout = Payout.objects.select_for_update().filter(pk=payout_id).first()
    if payout is None:
        raise NotFoundError("Payout not found")
    if result is not None:
        provider_answer_record(payout, result)
    if payout.returned_at is not None:
        if result is not None:
            payout.save(update_fields=["provider_responses", "updated_at"])
        return PayoutReturnResult(payout=payout, applied=False)
    if payout.status != PayoutStatus.SUCCESSFUL:
        raise ConflictError(NOT_RETURNABLE_MESSAGE)
    fee_refunded = payout.fee_amount if return_refunds_fee() else Decimal("0.00")
    wallet_return(
        wallet_id=payout.wallet_id,
        amount=payout.amount,
        fee_amount=fee_refunded,
        reference=payout.internal_reference,
        payout_id=payout.pk,
    )
    payout.returned_at = timezone.now()
    payout.return_reason = (reason.strip() or DEFAULT_RETURN_REASON)[:255]
    payout.save(update_fields=["returned_at", "return_reason", "provider_responses", "updated_at"])
    payout_returned_event_emit(payout=payout)
    payout_returned.send(sender=Payout, payout=payout)
    logger.info("payout %s returned: %s credited back", payout.internal_reference, payout.amount)
    return PayoutReturnResult(payout=payout, applied=True)


def payout_return_check(*, payout: Payout) -> PayoutReturnResult | None:
    """Asks the provider about a successful payout: a failed answer (Paystack's ``reversed``)
    for a transfer we hold as successful means its bank sent it back, and the return is applied.
    ``None`` when the payout is not successful, already returned, or still paid."""
    if payout.status != PayoutStatus.SUCCESSFUL or payout.returned_at is not None:
        return None
    attempt = payout_attempt_current(payout)  # the one that succeeded
    provider_name = attempt.provider_name if attempt else payout.provider_name
    reference = attempt.reference if attempt else payout.internal_reference
    result = provider_get(provider_name).verify_transfer(reference=reference)
    if result.outcome != TransferOutcome.FAILED:
        return None
    return payout_return(payout_id=payout.pk, reason=result.message, result=result)


@dataclass(frozen=True)
class ReturnsCheckReport:
    """What ``payouts_check_returns`` checked and found: the wording of the ops summary and of
    the ``--json`` object."""

    days: int
    checked: int
    returned: tuple[PayoutReturnResult, ...]
    errors: int

    def lines(self) -> list[str]:
        found = [
            f"payout {result.payout.internal_reference} (#{result.payout.pk}): returned "
            f"{format_amount_display(result.payout.amount, result.payout.currency)} "
            f"({result.payout.return_reason})"
            for result in self.returned
        ]
        return [*found, self.summary()]

    def summary(self) -> str:
        return (
            f"Checked {self.checked} successful payout(s) of the last {self.days} day(s): "
            f"{len(self.returned)} returned; {self.errors} error(s)."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "days": self.days,
            "checked": self.checked,
            "returned": [
                {
                    "payout_id": result.payout.pk,
                    "payout": result.payout.internal_reference,
                    "amount": format_amount(result.payout.amount),
                    "currency": result.payout.currency,
                    "reason": result.payout.return_reason,
                }
                for result in self.returned
            ],
            "errors": self.errors,
        }


def payouts_check_returns(
    *, since: timedelta, limit: int, progress: Callable[[int, int], None] | None = None
) -> ReturnsCheckReport:
    """Checks the successful, not yet returned payouts completed within ``since`` (oldest first,
    at most ``limit``) for a return; a payout the provider cannot be asked about is logged and
    counted as an error, and the others are still checked."""
    payouts = list(
        Payout.objects.filter(
            status=PayoutStatus.SUCCESSFUL,
            returned_at__isnull=True,
            completed_at__gte=timezone.now() - since,
        ).order_by("completed_at", "id")[:limit]
    )
    found: list[PayoutReturnResult] = []
    errors = 0
    for index, payout in enumerate(payouts, start=1):
        try:
            returned = payout_return_check(payout=payout)
        except Exception:
            logger.exception("return check of payout %s failed", payout.internal_reference)
            errors += 1
        else:
            if returned is not None and returned.applied:
                found.append(returned)
        if progress is not None:
            progress(index, len(payouts))
    return ReturnsCheckReport(
        days=since.days, checked=len(payouts), returned=tuple(found), errors=errors
    )
