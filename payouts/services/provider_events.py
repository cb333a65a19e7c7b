"""A provider's transfer event (a webhook saying a transfer succeeded, failed or was reversed)
applied to the payout it names: once per provider event, in any order, any number of times.

The event goes through the same paths as a dispatch answer and a requery
(``payout_answer_settle_write`` under the payout's row lock) and a
reversal after success through ``payout_return``, so money moves at most once:

| payout is | success | failed / reversed |
|---|---|---|
| ``dispatched`` / ``ambiguous`` | captured | released (never while flagged for fraud) |
| ``successful`` | stale | returned (once) |
| ``failed`` | **conflict**: money moved after we released it; finance resolves it | stale |
| ``reserved`` / ``processing`` | stale: the requery after dispatch settles it | stale |

An event for a reference we do not hold, or for a payout of another mode or provider, is
``unknown_reference``: acknowledged, logged at WARNING, kept. An event whose amount or currency
differs from the payout's is a ``conflict`` and moves nothing. Every event is kept in
``ProviderTransferEventRecord`` (unique per provider and event id) in the transaction that
applies it, so a redelivery is a ``duplicate`` and a crash mid-apply leaves nothing behind for
the provider's retry to trip on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.provider_exchange import ProviderExchange
from merchants.models import Mode
from payouts.models import (
    NO_MONEY_MOVED_OUTCOMES,
    Payout,
    PayoutAttempt,
    PayoutStatus,
    ProviderTransferEventRecord,
    ProviderTransferEventResult,
)
from payouts.providers.base import TransferOutcome, TransferResult
from payouts.services.returns import payout_return
from payouts.services.settle import payout_answer_settle_write, provider_answer_record

logger = logging.getLogger(__name__)

ProviderEventResult = ProviderTransferEventResult


class ProviderTransferEventKind(StrEnum):
    SUCCESS = "success"
    FAILED = "failed"
    REVERSED = "reversed"


SETTLING_STATUSES = (PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS)


@dataclass(frozen=True)
class ProviderTransferEvent:
    """A provider's word on one transfer, as its webhook carries it.

    ``event_id`` is the provider's identity of the event (the same on every redelivery);
    ``reference`` is the reference we sent with the transfer; ``amount`` (in major units) and
    ``currency``, when given, must agree with the payout's; ``mode`` is the mode the event
    comes from (a live provider's webhook never touches a test payout)."""

    provider: str
    event_id: str
    reference: str
    kind: ProviderTransferEventKind
    session_id: str = ""
    message: str = ""
    provider_reference: str = ""
    nip_code: str = ""
    amount: Decimal | None = None
    currency: str = ""
    mode: str = Mode.LIVE
    raw: dict[str, Any] = field(default_factory=dict)

    def transfer_result(self) -> TransferResult:
        """The event as a provider answer, for the settle and return paths."""
        outcome = (
            TransferOutcome.SUCCESSFUL
            if self.kind == ProviderTransferEventKind.SUCCESS
            else TransferOutcome.FAILED
        )
        return TransferResult(
            outcome=outcome,
            provider_reference=self.provider_reference,
            session_id=self.session_id,
            message=self.message,
            nip_code=self.nip_code,
            raw=(
                ProviderExchange(
                    operation=f"{self.provider}.webhook.transfer.{self.kind}",
                    http_status=None,
                    body=self.raw,
                ),
            ),
        )


def payout_for_provider_reference(
    provider: str, reference: str, *, lock: bool = False
) -> Payout | None:
    """The payout a provider's transfer reference names: the one place a provider's reference
    is mapped to a payout. The reference we send is an attempt's (``PayoutAttempt.reference``,
    unique: the first attempt's is the payout's ``internal_reference``), so the payout is the
    one whose attempt went to ``provider`` under it; a payout that has no attempt at all (sent
    before attempts were kept) is found by its own provider and reference. ``lock``: under its
    row lock, in the caller's transaction."""
    if not reference:
        return None
    by_attempt = Q(attempts__provider_name=provider, attempts__reference=reference)
    before_attempts = Q(provider_name=provider, internal_reference=reference, attempts__isnull=True)
    payouts = Payout.objects.filter(by_attempt | before_attempts).distinct()
    if lock:
        payouts = Payout.objects.filter(pk__in=payouts.values("pk")).select_for_update(of=("self",))
    return payouts.first()


def payout_attempt_for_provider_reference(
    payout: Payout, provider: str, reference: str
) -> PayoutAttempt | None:
    """The payout's attempt an event names (``None`` for a payout sent before attempts)."""
    return PayoutAttempt.objects.filter(
        payout=payout, provider_name=provider, reference=reference
    ).first()


def _conflict_with_request(payout: Payout, event: ProviderTransferEvent) -> str:
    """Why the event cannot be about this payout's money, or ``""``."""
    if event.amount is not None and event.amount != payout.amount:
        return f"amount {event.amount} differs from the payout's {payout.amount}"
    if event.currency and event.currency.upper() != payout.currency:
        return f"currency {event.currency} differs from the payout's {payout.currency}"
    return ""


def _settle(
    payout: Payout, event: ProviderTransferEvent, attempt: PayoutAttempt | None
) -> ProviderEventResult:
    result = event.transfer_result()
    provider_answer_record(payout, result)
    payout_answer_settle_write(payout, result, attempt=attempt, now=timezone.now())
    logger.info(
        "payout %s: %s transfer event %s applied: %s",
        payout.internal_reference,
        event.provider,
        event.kind,
        payout.status,
    )
    return ProviderEventResult.APPLIED


def _apply_to(
    payout: Payout, event: ProviderTransferEvent, attempt: PayoutAttempt | None
) -> tuple[ProviderEventResult, str]:
    """What the event does to the locked payout, and a note for the record. An event about an
    attempt that certainly moved no money (``not_sent``, ``rejected``: the payout may have gone
    to another provider since) never settles the payout: its failure is stale, its success a
    conflict for finance."""
    conflict = _conflict_with_request(payout, event)
    if conflict:
        return ProviderEventResult.CONFLICT, conflict
    success = event.kind == ProviderTransferEventKind.SUCCESS
    if attempt is not None and attempt.outcome in NO_MONEY_MOVED_OUTCOMES:
        if success:
            return (
                ProviderEventResult.CONFLICT,
                f"success reported for attempt {attempt.number}, which we held {attempt.outcome}",
            )
        return ProviderEventResult.STALE, f"attempt {attempt.number} was {attempt.outcome}"
    if payout.status in SETTLING_STATUSES:
        return _settle(payout, event, attempt), ""
    if payout.status == PayoutStatus.SUCCESSFUL and not success:
        returned = payout_return(
            payout_id=payout.pk, reason=event.message, result=event.transfer_result()
        )
        if returned.applied:
            return ProviderEventResult.APPLIED, "returned after success"
        return ProviderEventResult.STALE, "already returned"
    if payout.status == PayoutStatus.FAILED and success:
        return ProviderEventResult.CONFLICT, "success reported for a payout already failed"
    return ProviderEventResult.STALE, f"payout is {payout.status}"


@transaction.atomic
def provider_transfer_event_apply(event: ProviderTransferEvent) -> ProviderEventResult:
    """Applies a provider's transfer event to the payout it names, once (see the module's
    table), and keeps it; a second delivery of the same event is a ``duplicate`` and changes
    nothing."""
    record = ProviderTransferEventRecord(
        provider=event.provider,
        event_id=event.event_id[:120],
        kind=event.kind,
        reference=event.reference[:100],
        session_id=event.session_id[:64],
        message=event.message[:255],
        payload=event.raw,
        result=ProviderEventResult.STALE,
    )
    try:
        with transaction.atomic():
            record.save()
    except IntegrityError:
        return ProviderEventResult.DUPLICATE
    payout = payout_for_provider_reference(event.provider, event.reference, lock=True)
    if payout is None or payout.mode != event.mode:
        logger.warning(
            "%s transfer event %s for unknown reference %r%s: kept, nothing applied",
            event.provider,
            event.kind,
            event.reference[:60],
            " (a payout of another mode)" if payout is not None else "",
        )
        record.result = ProviderEventResult.UNKNOWN_REFERENCE
        record.save(update_fields=["result"])
        return ProviderEventResult.UNKNOWN_REFERENCE
    attempt = payout_attempt_for_provider_reference(payout, event.provider, event.reference)
    result, note = _apply_to(payout, event, attempt)
    if result == ProviderEventResult.CONFLICT:
        logger.error(
            "payout %s: %s transfer event %s contradicts our records (%s): finance must look",
            payout.internal_reference,
            event.provider,
            event.kind,
            note,
        )
    record.payout = payout
    record.result = result
    if note:
        record.message = f"{event.message} [{note}]".strip()[:255]
    record.save(update_fields=["payout", "result", "message"])
    return result
