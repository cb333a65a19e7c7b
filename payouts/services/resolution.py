"""Manual resolution in the back office: a finance operator proposes settling an ambiguous
payout, a different approver approves (it settles) or rejects it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from audit.permissions import staff_permission_require
from audit.services import audit_record
from audit.two_person import SAME_USER_MESSAGE as SAME_USER_MESSAGE
from audit.two_person import distinct_people_check
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from payouts.models import (
    Payout,
    PayoutBatchProposal,
    PayoutResolution,
    PayoutResolutionProposal,
    PayoutStatus,
    ResolutionDecision,
)
from payouts.services.settle import (
    DEFAULT_FAILURE_MESSAGE,
    PayoutFinalEffects,
    payout_fail,
    payout_succeed,
    payouts_settled_write,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.http import HttpRequest


logger = logging.getLogger(__name__)


RESOLUTION_REASON_MIN_LENGTH = 10
EVIDENCE_MAX_LENGTHS = {"provider_reference": 100, "nip_session_id": 64}
OPEN_PROPOSAL_EXISTS_MESSAGE = "This payout already has an open resolution proposal"
NOT_AMBIGUOUS_MESSAGE = "Only ambiguous payouts can be resolved manually"


def _resolution_reason_clean(reason: str, *, field: str = "reason") -> str:
    reason = (reason or "").strip()
    if len(reason) < RESOLUTION_REASON_MIN_LENGTH:
        raise ApplicationError(
            f"{field}: a written reason of at least {RESOLUTION_REASON_MIN_LENGTH} characters "
            "is required"
        )
    return reason


def _resolution_status_check(to_status: str) -> None:
    if to_status not in (PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED):
        raise ApplicationError("to_status: must be successful or failed")


def _payout_resolve(
    *, payout: Payout, to_status: str, reason: str, resolved_by: User
) -> PayoutResolution:
    """Settles a locked ``ambiguous`` payout as ``to_status`` through the same state machine,
    wallet services and event as the automatic path. The merchant is told the outcome only:
    a failed payout's ``error_message`` is the plain ``DEFAULT_FAILURE_MESSAGE``, never
    ``reason``, which stays in ``PayoutResolution`` and the audit trail."""
    if payout.status != PayoutStatus.AMBIGUOUS:
        raise ConflictError(NOT_AMBIGUOUS_MESSAGE)
    from_status = payout.status
    now = timezone.now()
    effects = PayoutFinalEffects()
    if to_status == PayoutStatus.SUCCESSFUL:
        payout_succeed(payout, now=now, effects=effects)
    else:
        payout_fail(payout, now=now, message=DEFAULT_FAILURE_MESSAGE, effects=effects)
    payouts_settled_write([payout], effects=effects, now=now)
    resolution = PayoutResolution.objects.create(
        payout=payout,
        from_status=from_status,
        to_status=to_status,
        reason=reason,
        resolved_by=resolved_by,
    )
    logger.info(
        "payout %s resolved manually %s → %s by user %s",
        payout.internal_reference,
        from_status,
        to_status,
        resolved_by.pk,
    )
    return resolution


@transaction.atomic
def payout_resolve_manually(
    *,
    payout_id: int,
    to_status: str,
    reason: str,
    resolved_by: User,
    request: HttpRequest | None = None,
) -> PayoutResolution:
    """Settles an ``ambiguous`` payout by one person's decision, recorded with the actor and
    the reason in ``PayoutResolution`` and the audit trail.

    Same state machine and wallet services as the automatic path: ``successful`` captures the
    reserved funds, ``failed`` releases them. The back office never calls this directly: it
    settles only through ``payout_resolution_approve``, a second person's approval of a
    proposal.
    """
    reason = _resolution_reason_clean(reason)
    _resolution_status_check(to_status)
    payout = Payout.objects.select_for_update().get(pk=payout_id)
    resolution = _payout_resolve(
        payout=payout, to_status=to_status, reason=reason, resolved_by=resolved_by
    )
    audit_record(
        actor=resolved_by,
        action="payouts.payout.resolve_manually",
        obj=payout,
        before={"status": resolution.from_status},
        after={"status": payout.status},
        reason=reason,
        request=request,
    )
    return resolution


def _evidence_clean(*, provider_reference: str, nip_session_id: str) -> dict[str, str]:
    evidence = {
        "provider_reference": (provider_reference or "").strip(),
        "nip_session_id": (nip_session_id or "").strip(),
    }
    for name, value in evidence.items():
        if len(value) > EVIDENCE_MAX_LENGTHS[name]:
            raise ApplicationError(
                f"{name}: must be at most {EVIDENCE_MAX_LENGTHS[name]} characters"
            )
    nip_session_id = evidence["nip_session_id"]
    if nip_session_id and not (nip_session_id.isascii() and nip_session_id.isalnum()):
        raise ApplicationError("nip_session_id: must contain only letters and digits")
    return evidence


@transaction.atomic
def payout_resolution_propose(
    *,
    payout_id: int,
    proposed_status: str,
    reason: str,
    proposed_by: User,
    provider_reference: str = "",
    nip_session_id: str = "",
    request: HttpRequest | None = None,
) -> PayoutResolutionProposal:
    """Proposes settling an ``ambiguous`` payout as ``successful`` or ``failed``, with an
    internal reason and the evidence (provider reference, NIP session id). Nothing moves until
    another user approves it. A payout has at most one open proposal (409 otherwise).

    The proposer needs ``payouts.propose_resolution``. The reason and the evidence are never
    shown to the merchant.
    """
    staff_permission_require(
        proposed_by,
        "payouts.propose_resolution",
        message="You may not propose payout resolutions",
    )
    reason = _resolution_reason_clean(reason)
    _resolution_status_check(proposed_status)
    evidence = _evidence_clean(provider_reference=provider_reference, nip_session_id=nip_session_id)
    payout = Payout.objects.select_for_update().filter(pk=payout_id).first()
    if payout is None:
        raise NotFoundError("Payout not found")
    if payout.status != PayoutStatus.AMBIGUOUS:
        raise ConflictError(NOT_AMBIGUOUS_MESSAGE)
    if PayoutResolutionProposal.objects.filter(payout=payout, decision="").exists():
        raise ConflictError(OPEN_PROPOSAL_EXISTS_MESSAGE)
    proposal = PayoutResolutionProposal.objects.create(
        payout=payout,
        proposed_status=proposed_status,
        reason=reason,
        proposed_by=proposed_by,
        **evidence,
    )
    audit_record(
        actor=proposed_by,
        action="payouts.payout.resolution_propose",
        obj=payout,
        before={"status": payout.status},
        after={"proposal_id": proposal.pk, "proposed_status": proposed_status, **evidence},
        reason=reason,
        request=request,
    )
    logger.info(
        "payout %s: resolution as %s proposed by user %s",
        payout.internal_reference,
        proposed_status,
        proposed_by.pk,
    )
    return proposal


def _open_proposal_lock(
    *, proposal_id: int, decider: User
) -> tuple[Payout, PayoutResolutionProposal]:
    """Locks the payout, then the proposal (the order ``payout_resolution_propose`` uses), and
    checks the proposal is open and ``decider`` and its proposer are two people
    (``audit.two_person.distinct_people_check``)."""
    staff_permission_require(
        decider,
        "payouts.approve_resolution",
        message="You may not approve or reject payout resolutions",
    )
    payout_id = (
        PayoutResolutionProposal.objects.filter(pk=proposal_id)
        .values_list("payout_id", flat=True)
        .first()
    )
    if payout_id is None:
        raise NotFoundError("Resolution proposal not found")
    payout = Payout.objects.select_for_update().get(pk=payout_id)
    proposal = PayoutResolutionProposal.objects.select_for_update().get(pk=proposal_id)
    if not proposal.is_open:
        raise ConflictError(f"This proposal was already {proposal.decision}")
    distinct_people_check(proposer=proposal.proposed_by, approver=decider)
    return payout, proposal


def proposal_decision_record(
    proposal: PayoutResolutionProposal | PayoutBatchProposal,
    *,
    decision: str,
    decider: User,
    note: str,
    also_save: tuple[str, ...] = (),
) -> None:
    """Records a two-person proposal's decision (``also_save``: other fields the caller set)."""
    proposal.decision = decision
    proposal.decided_by = decider
    proposal.decided_at = timezone.now()
    proposal.decision_note = note
    proposal.save(
        update_fields=["decision", "decided_by", "decided_at", "decision_note", *also_save]
    )


@transaction.atomic
def payout_resolution_approve(
    *,
    proposal_id: int,
    approver: User,
    note: str = "",
    request: HttpRequest | None = None,
) -> PayoutResolutionProposal:
    """Approves an open proposal and settles its payout as proposed, in one transaction with
    the ``PayoutResolution`` and the audit record.

    The approver needs ``payouts.approve_resolution`` and must be a different person than the
    proposer (``audit.two_person``: not the same user, neither's password or TOTP devices set
    by the other, the approver's not reset by anyone within the hold period; 403 otherwise).
    A payout that is no longer ``ambiguous`` (a requery settled it meanwhile) cannot be settled
    again: 409, and the proposal is left for rejection.
    """
    payout, proposal = _open_proposal_lock(proposal_id=proposal_id, decider=approver)
    note = (note or "").strip()
    if proposal.proposed_status == PayoutStatus.SUCCESSFUL and not payout.nip_session_id:
        # The statement's or bank's session id is the evidence of the credit: keep it.
        payout.nip_session_id = proposal.nip_session_id
    resolution = _payout_resolve(
        payout=payout,
        to_status=proposal.proposed_status,
        reason=proposal.reason,
        resolved_by=approver,
    )
    proposal_decision_record(
        proposal, decision=ResolutionDecision.APPROVED, decider=approver, note=note
    )
    audit_record(
        actor=approver,
        action="payouts.payout.resolution_approve",
        obj=payout,
        before={"status": resolution.from_status},
        after={
            "status": payout.status,
            "proposal_id": proposal.pk,
            "proposed_by": proposal.proposed_by,
        },
        reason=note,
        request=request,
    )
    return proposal


@transaction.atomic
def payout_resolution_reject(
    *,
    proposal_id: int,
    approver: User,
    note: str,
    request: HttpRequest | None = None,
) -> PayoutResolutionProposal:
    """Rejects an open proposal with a written note; the payout stays as it is (``ambiguous``
    unless a requery settled it) and may get a new proposal. Same rules for the approver as
    ``payout_resolution_approve``."""
    note = _resolution_reason_clean(note, field="note")
    payout, proposal = _open_proposal_lock(proposal_id=proposal_id, decider=approver)
    proposal_decision_record(
        proposal, decision=ResolutionDecision.REJECTED, decider=approver, note=note
    )
    audit_record(
        actor=approver,
        action="payouts.payout.resolution_reject",
        obj=payout,
        before={"proposal_id": proposal.pk, "decision": "open"},
        after={"proposal_id": proposal.pk, "decision": proposal.decision},
        reason=note,
        request=request,
    )
    return proposal
