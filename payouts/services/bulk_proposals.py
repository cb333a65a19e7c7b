"""Bulk payouts uploaded in the back office take two people: one proposes, another submits.

``payout_batch_propose`` stores the uploader's checked file as a ``PayoutBatchProposal`` (the
rows as uploaded, what the dry run showed of each, the totals, a fingerprint); nothing is
reserved. ``payout_batch_proposal_approve`` is a different person's approval: it submits the
stored rows through ``payouts.services.payout_batch_create``, the API's own bulk payout, which
checks every row again; ``payout_batch_proposal_reject`` closes the proposal with a note. Both
decisions need ``payouts.approve_resolution`` and pass ``audit.two_person``'s check, and every
step writes an audit record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction

from audit.permissions import staff_permission_require
from audit.services import audit_record
from audit.two_person import distinct_people_check
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from core.money import format_amount
from payouts.api.serializers import payout_batch_items_parse
from payouts.models import (
    ZERO,
    PayoutBatchItemResult,
    PayoutBatchProposal,
    ResolutionDecision,
)
from payouts.services import (
    RESOLUTION_REASON_MIN_LENGTH,
    PayoutBatchCreateResult,
    PayoutBatchItemOutcome,
    payout_batch_create,
    payout_batch_preview,
)
from payouts.services.resolution import proposal_decision_record

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.http import HttpRequest

    from merchants.models import Merchant

PROPOSE_PERMISSIONS = ("payouts.propose_resolution", "payouts.approve_resolution")
APPROVE_PERMISSION = "payouts.approve_resolution"
OPEN_BATCH_PROPOSAL_MESSAGE = "This file is already waiting for approval as proposal #{id}"
NOTHING_TO_SUBMIT_MESSAGE = "The file has no valid payout to submit"
ATOMIC_INVALID_MESSAGE = "All or nothing: every row must be valid to propose the file"
CHANGED_MESSAGE = "This proposal no longer matches its fingerprint: it cannot be submitted"
ACTION_PROPOSE = "payouts.payoutbatchproposal.propose"
ACTION_APPROVE = "payouts.payoutbatchproposal.approve"
ACTION_REJECT = "payouts.payoutbatchproposal.reject"


def batch_proposal_fingerprint(
    *, merchant_id: int, mode: str, atomic: bool, batch_reference: str, rows: Sequence[Any]
) -> str:
    """SHA-256 of what an approval submits, in a canonical JSON form."""
    encoded = json.dumps(
        {
            "merchant_id": merchant_id,
            "mode": mode,
            "atomic": atomic,
            "batch_reference": batch_reference,
            "rows": list(rows),
        },
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(encoded.encode()).hexdigest()


def _preview_result(outcome: PayoutBatchItemOutcome) -> str:
    return {
        PayoutBatchItemResult.ACCEPTED.value: "valid",
        PayoutBatchItemResult.DUPLICATE.value: "duplicate",
    }.get(outcome.result, "invalid")


def _preview_message(outcome: PayoutBatchItemOutcome) -> str:
    if outcome.error is not None:
        return outcome.error.message
    if outcome.payout is not None:
        return f"already paid by {outcome.payout.internal_reference} ({outcome.payout.status})"
    return ""


def batch_preview_rows(
    rows: Sequence[Mapping[str, Any]], outcomes: Sequence[PayoutBatchItemOutcome]
) -> list[dict[str, Any]]:
    """What the dry run showed of each row, JSON-ready (amounts as ``"2500.00"``, or ``""``)."""
    shown = []
    for row, outcome in zip(rows, outcomes, strict=True):
        fields = outcome.plan.fields if outcome.plan is not None else {}

        def money(name: str, fields: Mapping[str, Any] = fields) -> str:
            value = fields.get(name)
            return format_amount(value) if value is not None else ""

        shown.append(
            {
                "number": outcome.index + 1,
                "result": _preview_result(outcome),
                "account_number": str(row.get("account_number", "")),
                "bank_code": str(row.get("bank_code", "")),
                "bank_name": fields.get("bank_name", ""),
                "account_name": fields.get("account_name", ""),
                "amount": money("amount"),
                "fee": money("fee_amount"),
                "total": money("total_debit_amount"),
                "row_amount": str(row.get("amount", "")),
                "narration": str(row.get("narration", "")),
                "idempotency_key": str(row.get("idempotency_key", "")),
                "message": _preview_message(outcome),
            }
        )
    return shown


def _valid_total(preview: Sequence[Mapping[str, Any]], name: str) -> Decimal:
    return sum((Decimal(row[name]) for row in preview if row["result"] == "valid"), ZERO)


def payout_batch_propose(
    *,
    merchant: Merchant,
    mode: str,
    rows: Sequence[Mapping[str, Any]],
    atomic: bool,
    batch_reference: str,
    proposed_by: User,
    file_name: str = "",
    file_sha256: str = "",
    request: HttpRequest | None = None,
) -> PayoutBatchProposal:
    """Checks the rows as a dry run (``payout_batch_preview``: the checks a submit makes before
    the wallet lock, name enquiry included) and stores them, with what the dry run showed, for a
    different person to approve. Refused (400) when no row is valid, or an all-or-nothing file
    has an invalid row; 409 when the same file already waits for approval. The proposer needs
    ``payouts.propose_resolution`` or ``payouts.approve_resolution``."""
    staff_permission_require(
        proposed_by, *PROPOSE_PERMISSIONS, message="You may not propose bulk payouts"
    )
    rows = [dict(row) for row in rows]
    outcomes = payout_batch_preview(
        merchant=merchant, mode=mode, items=payout_batch_items_parse(rows)
    )
    preview = batch_preview_rows(rows, outcomes)
    valid = sum(row["result"] == "valid" for row in preview)
    if valid == 0:
        raise ApplicationError(NOTHING_TO_SUBMIT_MESSAGE)
    if atomic and any(row["result"] == "invalid" for row in preview):
        raise ApplicationError(ATOMIC_INVALID_MESSAGE)
    fingerprint = batch_proposal_fingerprint(
        merchant_id=merchant.pk,
        mode=mode,
        atomic=atomic,
        batch_reference=batch_reference,
        rows=rows,
    )
    with transaction.atomic():
        open_proposal = PayoutBatchProposal.objects.filter(
            fingerprint=fingerprint, decision=""
        ).first()
        if open_proposal is not None:
            raise ConflictError(OPEN_BATCH_PROPOSAL_MESSAGE.format(id=open_proposal.pk))
        try:
            with transaction.atomic():
                proposal = PayoutBatchProposal.objects.create(
                    merchant=merchant,
                    mode=mode,
                    atomic=atomic,
                    batch_reference=batch_reference,
                    file_name=file_name[:255],
                    file_sha256=file_sha256,
                    rows=rows,
                    preview=preview,
                    payout_count=valid,
                    total_amount=_valid_total(preview, "amount"),
                    total_fee_amount=_valid_total(preview, "fee"),
                    total_debit_amount=_valid_total(preview, "total"),
                    fingerprint=fingerprint,
                    proposed_by=proposed_by,
                )
        except IntegrityError:
            raise ConflictError(OPEN_BATCH_PROPOSAL_MESSAGE.format(id="?")) from None
        audit_record(
            actor=proposed_by,
            action=ACTION_PROPOSE,
            obj=proposal,
            after={
                "merchant_id": merchant.pk,
                "mode": mode,
                "atomic": atomic,
                "batch_reference": batch_reference,
                "payout_count": valid,
                "rows": len(rows),
                "total_debit_amount": proposal.total_debit_amount,
                "file_name": file_name,
                "file_sha256": file_sha256,
                "fingerprint": fingerprint,
            },
            request=request,
        )
    return proposal


def _open_batch_proposal_lock(*, proposal_id: int, decider: User) -> PayoutBatchProposal:
    """Locks the proposal and checks it is open and its proposer and ``decider`` are two
    people (``audit.two_person.distinct_people_check``)."""
    staff_permission_require(
        decider, APPROVE_PERMISSION, message="You may not approve or reject bulk payouts"
    )
    proposal = (
        PayoutBatchProposal.objects.select_for_update(of=("self",))
        .select_related("merchant", "proposed_by")
        .filter(pk=proposal_id)
        .first()
    )
    if proposal is None:
        raise NotFoundError("Bulk payout proposal not found")
    if not proposal.is_open:
        raise ConflictError(f"This bulk payout proposal was already {proposal.decision}")
    distinct_people_check(proposer=proposal.proposed_by, approver=decider)
    return proposal


@transaction.atomic
def payout_batch_proposal_approve(
    *,
    proposal_id: int,
    approver: User,
    note: str = "",
    request: HttpRequest | None = None,
) -> PayoutBatchCreateResult:
    """Submits an open proposal's rows through ``payout_batch_create`` (every row checked again
    and reserved now, as the API's bulk payout does), in one transaction with the decision and
    its audit record. The batch names the approver as its submitter; its audit record names the
    proposal and the proposer. A refused submit (an all-or-nothing file with a row now failing,
    an inactive wallet) leaves the proposal open."""
    proposal = _open_batch_proposal_lock(proposal_id=proposal_id, decider=approver)
    expected = batch_proposal_fingerprint(
        merchant_id=proposal.merchant_id,
        mode=proposal.mode,
        atomic=proposal.atomic,
        batch_reference=proposal.batch_reference,
        rows=proposal.rows,
    )
    if expected != proposal.fingerprint:
        raise ConflictError(CHANGED_MESSAGE)
    result = payout_batch_create(
        merchant=proposal.merchant,
        mode=proposal.mode,
        batch_reference=proposal.batch_reference,
        items=payout_batch_items_parse(proposal.rows),
        atomic=proposal.atomic,
        created_by=approver,
        request=request,
        audit_after={
            "proposal_id": proposal.pk,
            "proposed_by": proposal.proposed_by,
            "file_name": proposal.file_name,
            "file_sha256": proposal.file_sha256,
        },
    )
    batch = result.batch
    proposal.batch = batch
    proposal_decision_record(
        proposal,
        decision=ResolutionDecision.APPROVED,
        decider=approver,
        note=(note or "").strip(),
        also_save=("batch",),
    )
    audit_record(
        actor=approver,
        action=ACTION_APPROVE,
        obj=proposal,
        before={"decision": "open"},
        after={
            "decision": proposal.decision,
            "proposed_by": proposal.proposed_by,
            "batch_id": batch.pk,
            "duplicate": result.duplicate,
            "accepted": batch.accepted_count,
            "rejected": batch.rejected_count,
            "total_debit_amount": batch.total_debit_amount,
        },
        reason=proposal.decision_note,
        request=request,
    )
    return result


@transaction.atomic
def payout_batch_proposal_reject(
    *,
    proposal_id: int,
    approver: User,
    note: str,
    request: HttpRequest | None = None,
) -> PayoutBatchProposal:
    """Closes an open proposal with a written note; nothing is paid. Same rules for the
    decider as ``payout_batch_proposal_approve``."""
    note = (note or "").strip()
    if len(note) < RESOLUTION_REASON_MIN_LENGTH:
        raise ApplicationError(
            f"note: a written reason of at least {RESOLUTION_REASON_MIN_LENGTH} characters "
            "is required"
        )
    proposal = _open_batch_proposal_lock(proposal_id=proposal_id, decider=approver)
    proposal_decision_record(
        proposal, decision=ResolutionDecision.REJECTED, decider=approver, note=note
    )
    audit_record(
        actor=approver,
        action=ACTION_REJECT,
        obj=proposal,
        before={"decision": "open"},
        after={"decision": proposal.decision, "proposed_by": proposal.proposed_by},
        reason=note,
        request=request,
    )
    return proposal
