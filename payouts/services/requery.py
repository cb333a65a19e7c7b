"""Requery: asking the provider about a dispatched or ambiguous payout by reference, without
sending it again, and settling it from the answer. The question goes to the provider of the
payout's attempt that may still succeed, under that attempt's reference; the answer is kept on
the attempt too."""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from core.db import rows_update
from core.exceptions import ConflictError
from payouts.models import (
    FINAL_STATUSES,
    Payout,
    PayoutAttempt,
    PayoutStatus,
)
from payouts.providers.base import (
    TransferResult,
)
from payouts.providers.registry import provider_get
from payouts.services.attempts import (
    payout_attempt_current,
)
from payouts.services.create import payout_dispatch_enqueue
from payouts.services.dispatch import claim_is_stale
from payouts.services.settle import (
    payout_answer_settle_write,
    provider_answer_record,
)

logger = logging.getLogger(__name__)


NOT_ELIGIBLE_MESSAGE = "Payout is not eligible for status requery"


@transaction.atomic
def payout_requery_apply(
    *, payout_id: int, result: TransferResult, attempt_id: int | None = None
) -> Payout:
    """Applies a requery's answer to the payout, locked: settled as far as the answer tells
    (``provider_answer_settle``) and written the one way every settling path writes
    (``payouts_settled_write``), the asked attempt (``attempt_id``) following it; a payout
    settled meanwhile only keeps the answer for audit."""
    payout = Payout.objects.select_for_update().get(pk=payout_id)
    provider_answer_record(payout, result)
    now = timezone.now()
    if payout.status not in (PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS):
        payout.updated_at = now
        rows_update([payout], ("provider_responses", "updated_at"))
        return payout  # settled meanwhile by another requery or the worker
    payout.requery_count += 1
    attempt = (
        PayoutAttempt.objects.filter(pk=attempt_id, payout=payout).first()
        if attempt_id is not None
        else None
    )
    payout_answer_settle_write(payout, result, attempt=attempt, now=now)
    logger.info("payout %s requeried: %s", payout.internal_reference, payout.status)
    return payout


def payout_requery(*, payout: Payout) -> Payout:
    """Asks the provider for the payout's status by reference, without resubmitting it.

    * final payouts: 409 (``ConflictError``);
    * ``reserved``, or ``processing`` whose claim went stale: nothing was sent yet (or the worker
      died), so no provider call: the dispatch is queued again and the payout returned as is;
      ``processing`` with a live claim is being sent right now and is returned as is;
    * ``dispatched``/``ambiguous``: the provider's answer settles it (``successful``/``failed``)
      or leaves it ``ambiguous`` with the next automatic requery pushed back exponentially.
    """
    if payout.status in FINAL_STATUSES:
        raise ConflictError(NOT_ELIGIBLE_MESSAGE)
    if payout.status in (PayoutStatus.RESERVED, PayoutStatus.PROCESSING):
        if payout.status == PayoutStatus.RESERVED or claim_is_stale(payout, now=timezone.now()):
            payout_id = payout.pk
            transaction.on_commit(lambda: payout_dispatch_enqueue(payout_id=payout_id))
        return payout
    attempt = payout_attempt_current(payout)
    if attempt is None:  # sent before attempts were kept: the payout's own provider and reference
        provider_name, reference = payout.provider_name, payout.internal_reference
    else:
        provider_name, reference = attempt.provider_name, attempt.reference
    result = provider_get(provider_name).verify_transfer(reference=reference)
    return payout_requery_apply(
        payout_id=payout.pk, result=result, attempt_id=None if attempt is None else attempt.pk
    )
