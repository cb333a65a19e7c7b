"""Two-person manual resolution of ambiguous payouts: one user proposes (with an internal reason
and evidence), a different user approves (the payout settles through the usual path, in one
transaction with the audit record) or rejects. The merchant only ever learns the outcome."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from audit.models import AuditRecord
from core.exceptions import ApplicationError, ConflictError
from payouts.models import (
    Payout,
    PayoutResolution,
    PayoutResolutionProposal,
    PayoutStatus,
    ResolutionDecision,
)
from payouts.services import (
    payout_dispatch,
    payout_requery,
    payout_resolution_approve,
    payout_resolution_propose,
    payout_resolution_reject,
    payout_resolve_manually,
)
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import act_records
from tests.payouts.helpers import assert_wallet_balanced, detail_url, reload
from wallets.models import LedgerEntry, LedgerEntryType
from webhooks.models import Event

pytestmark = pytest.mark.django_db

ALWAYS_AMBIGUOUS_ACCOUNT = "1000000003"
SUCCEEDS_ON_REQUERY_ACCOUNT = "1000000002"
INTERNAL_REASON = "Ops chat with Paystack: NIP shows reversal by GTB, ticket 5512"


@pytest.fixture
def operator():
    return StaffUserFactory(username="operator", roles=["finance_operator"])


@pytest.fixture
def approver():
    return StaffUserFactory(username="approver", roles=["finance_approver"])


@pytest.fixture
def ambiguous_payout(funded_wallet, create_payout) -> Payout:
    payout = create_payout(account_number=ALWAYS_AMBIGUOUS_ACCOUNT).payout
    payout_dispatch(payout_id=payout.pk)
    payout = reload(payout)
    assert payout.status == PayoutStatus.AMBIGUOUS
    return payout


def propose(payout: Payout, user, status: str = PayoutStatus.FAILED, **extra):
    return payout_resolution_propose(
        payout_id=payout.pk,
        proposed_status=status,
        reason=INTERNAL_REASON,
        proposed_by=user,
        **extra,
    )


def ledger_types(payout: Payout) -> list[str]:
    return list(
        LedgerEntry.objects.filter(payout_id=payout.pk)
        .order_by("id")
        .values_list("entry_type", flat=True)
    )


# --- Proposing --------------------------------------------------------------------------------


def test_a_proposal_moves_nothing_and_is_audited(ambiguous_payout, operator) -> None:
    proposal = propose(
        ambiguous_payout, operator, provider_reference="TRF_9x8y", nip_session_id="0000581234"
    )
    assert proposal.is_open
    assert (proposal.proposed_by, proposal.proposed_status) == (operator, "failed")
    assert (proposal.provider_reference, proposal.nip_session_id) == ("TRF_9x8y", "0000581234")
    assert reload(ambiguous_payout).status == PayoutStatus.AMBIGUOUS
    assert ledger_types(ambiguous_payout) == [LedgerEntryType.PAYOUT_RESERVE]
    record = act_records().get()
    assert (record.actor, record.action) == (operator, "payouts.payout.resolution_propose")
    assert record.object_id == str(ambiguous_payout.pk)
    assert record.after == {
        "proposal_id": proposal.pk,
        "proposed_status": "failed",
        "provider_reference": "TRF_9x8y",
        "nip_session_id": "0000581234",
    }
    assert record.reason == INTERNAL_REASON


def test_proposing_needs_the_permission(ambiguous_payout, approver) -> None:
    with pytest.raises(ApplicationError) as error:
        propose(ambiguous_payout, approver)
    assert error.value.status == 403
    assert not PayoutResolutionProposal.objects.exists()
    assert not act_records().exists()


def test_only_ambiguous_payouts_get_proposals(funded_wallet, create_payout, operator) -> None:
    payout = create_payout().payout
    with pytest.raises(ConflictError):
        propose(payout, operator)
    assert not PayoutResolutionProposal.objects.exists()


def test_one_open_proposal_per_payout(ambiguous_payout, operator) -> None:
    propose(ambiguous_payout, operator)
    other = StaffUserFactory(roles=["finance_operator"])
    with pytest.raises(ConflictError, match="already has an open resolution proposal"):
        propose(ambiguous_payout, other, status=PayoutStatus.SUCCESSFUL)
    assert PayoutResolutionProposal.objects.count() == 1


def test_the_database_keeps_one_open_proposal_per_payout(ambiguous_payout, operator) -> None:
    propose(ambiguous_payout, operator)
    with pytest.raises(IntegrityError), transaction.atomic():
        PayoutResolutionProposal.objects.create(
            payout=ambiguous_payout,
            proposed_status=PayoutStatus.SUCCESSFUL,
            reason="A second open proposal",
            proposed_by=operator,
        )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"reason": "short"}, "reason: a written reason"),
        ({"proposed_status": "reserved"}, "to_status: must be successful or failed"),
        ({"nip_session_id": "0000 5812"}, "nip_session_id: must contain only letters and digits"),
        ({"provider_reference": "x" * 101}, "provider_reference: must be at most 100"),
    ],
)
def test_a_proposal_needs_a_reason_a_final_status_and_sane_evidence(
    ambiguous_payout, operator, extra, message
) -> None:
    arguments = {
        "payout_id": ambiguous_payout.pk,
        "proposed_status": PayoutStatus.FAILED,
        "reason": INTERNAL_REASON,
        "proposed_by": operator,
        **extra,
    }
    with pytest.raises(ApplicationError, match=message):
        payout_resolution_propose(**arguments)
    assert not PayoutResolutionProposal.objects.exists()


# --- Approving --------------------------------------------------------------------------------


def test_the_proposer_cannot_approve_their_own_proposal(ambiguous_payout) -> None:
    both = StaffUserFactory(roles=["finance_operator", "finance_approver"])
    proposal = propose(ambiguous_payout, both)
    with pytest.raises(ApplicationError, match="different user") as error:
        payout_resolution_approve(proposal_id=proposal.pk, approver=both)
    assert error.value.status == 403
    with pytest.raises(ApplicationError, match="different user"):
        payout_resolution_reject(
            proposal_id=proposal.pk, approver=both, note="Not convinced, sorry"
        )
    assert reload(ambiguous_payout).status == PayoutStatus.AMBIGUOUS
    assert PayoutResolutionProposal.objects.get(pk=proposal.pk).is_open
    assert list(act_records().values_list("action", flat=True)) == [
        "payouts.payout.resolution_propose"
    ]


def test_the_database_refuses_a_decision_by_the_proposer(ambiguous_payout, operator) -> None:
    from django.utils import timezone

    proposal = propose(ambiguous_payout, operator)
    proposal.decision = ResolutionDecision.APPROVED
    proposal.decided_by = operator
    proposal.decided_at = timezone.now()
    with pytest.raises(IntegrityError), transaction.atomic():
        proposal.save()


def test_approving_needs_the_permission(ambiguous_payout, operator) -> None:
    proposal = propose(ambiguous_payout, operator)
    other_operator = StaffUserFactory(roles=["finance_operator"])
    with pytest.raises(ApplicationError) as error:
        payout_resolution_approve(proposal_id=proposal.pk, approver=other_operator)
    assert error.value.status == 403
    assert reload(ambiguous_payout).status == PayoutStatus.AMBIGUOUS


def test_approval_as_failed_settles_through_the_usual_path(
    funded_wallet, ambiguous_payout, operator, approver
) -> None:
    proposal = propose(ambiguous_payout, operator, nip_session_id="0000581234")
    decided = payout_resolution_approve(
        proposal_id=proposal.pk, approver=approver, note="Checked the NIP trail too"
    )
    payout = reload(ambiguous_payout)
    assert payout.status == PayoutStatus.FAILED
    assert payout.error_message == "Transfer failed"
    assert ledger_types(payout) == [LedgerEntryType.PAYOUT_RESERVE, LedgerEntryType.PAYOUT_REVERSAL]
    funded_wallet.refresh_from_db()
    assert funded_wallet.available_balance == Decimal("100000.00")
    assert_wallet_balanced(funded_wallet)
    assert (decided.decision, decided.decided_by) == (ResolutionDecision.APPROVED, approver)
    assert decided.decision_note == "Checked the NIP trail too"
    resolution = PayoutResolution.objects.get(payout=payout)
    assert (resolution.to_status, resolution.resolved_by) == ("failed", approver)
    assert resolution.reason == INTERNAL_REASON
    assert [e.event_type for e in Event.objects.filter(payout=payout)] == ["payout.failed"]
    record = AuditRecord.objects.get(action="payouts.payout.resolution_approve")
    assert record.actor == approver
    assert record.before == {"status": "ambiguous"}
    assert record.after == {
        "status": "failed",
        "proposal_id": proposal.pk,
        "proposed_by": {"id": operator.pk, "repr": "operator"},
    }


def test_approval_as_successful_captures(
    funded_wallet, ambiguous_payout, operator, approver
) -> None:
    proposal = propose(ambiguous_payout, operator, status=PayoutStatus.SUCCESSFUL)
    payout_resolution_approve(proposal_id=proposal.pk, approver=approver)
    payout = reload(ambiguous_payout)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.error_message is None
    assert ledger_types(payout) == [LedgerEntryType.PAYOUT_RESERVE, LedgerEntryType.PAYOUT_DEBIT]
    assert_wallet_balanced(funded_wallet)
    assert [e.event_type for e in Event.objects.filter(payout=payout)] == ["payout.successful"]


def test_approval_and_its_audit_record_commit_together(
    monkeypatch, funded_wallet, ambiguous_payout, operator, approver
) -> None:
    proposal = propose(ambiguous_payout, operator)

    def broken_audit(**kwargs):
        raise RuntimeError("audit store unavailable")

    monkeypatch.setattr("payouts.services.resolution.audit_record", broken_audit)
    with pytest.raises(RuntimeError):
        payout_resolution_approve(proposal_id=proposal.pk, approver=approver)
    assert reload(ambiguous_payout).status == PayoutStatus.AMBIGUOUS
    assert PayoutResolutionProposal.objects.get(pk=proposal.pk).is_open
    assert not PayoutResolution.objects.exists()
    assert ledger_types(ambiguous_payout) == [LedgerEntryType.PAYOUT_RESERVE]
    assert_wallet_balanced(funded_wallet)


def test_a_decided_proposal_cannot_be_decided_again(ambiguous_payout, operator, approver) -> None:
    proposal = propose(ambiguous_payout, operator)
    payout_resolution_approve(proposal_id=proposal.pk, approver=approver)
    second = StaffUserFactory(roles=["finance_approver"])
    with pytest.raises(ConflictError, match="already approved"):
        payout_resolution_approve(proposal_id=proposal.pk, approver=second)
    with pytest.raises(ConflictError):
        payout_resolution_reject(proposal_id=proposal.pk, approver=second, note="Too late, sorry")
    assert PayoutResolution.objects.count() == 1


def test_a_payout_settled_meanwhile_cannot_be_approved_but_can_be_rejected(
    funded_wallet, create_payout, operator, approver
) -> None:
    payout = create_payout(account_number=SUCCEEDS_ON_REQUERY_ACCOUNT).payout
    payout_dispatch(payout_id=payout.pk)
    proposal = propose(reload(payout), operator)
    assert payout_requery(payout=reload(payout)).status == PayoutStatus.SUCCESSFUL
    with pytest.raises(ConflictError):
        payout_resolution_approve(proposal_id=proposal.pk, approver=approver)
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert PayoutResolutionProposal.objects.get(pk=proposal.pk).is_open
    payout_resolution_reject(
        proposal_id=proposal.pk, approver=approver, note="Requery settled it as successful"
    )
    assert not PayoutResolutionProposal.objects.get(pk=proposal.pk).is_open
    assert_wallet_balanced(funded_wallet)


# --- Rejecting --------------------------------------------------------------------------------


def test_rejection_leaves_the_payout_ambiguous_and_allows_a_new_proposal(
    funded_wallet, ambiguous_payout, operator, approver
) -> None:
    proposal = propose(ambiguous_payout, operator)
    rejected = payout_resolution_reject(
        proposal_id=proposal.pk, approver=approver, note="Statement not in yet, wait for it"
    )
    assert (rejected.decision, rejected.decided_by) == (ResolutionDecision.REJECTED, approver)
    payout = reload(ambiguous_payout)
    assert payout.status == PayoutStatus.AMBIGUOUS
    assert ledger_types(payout) == [LedgerEntryType.PAYOUT_RESERVE]
    assert not Event.objects.filter(payout=payout).exists()
    record = AuditRecord.objects.get(action="payouts.payout.resolution_reject")
    assert record.actor == approver
    assert record.reason == "Statement not in yet, wait for it"
    assert record.after == {"proposal_id": proposal.pk, "decision": "rejected"}
    assert propose(payout, operator, status=PayoutStatus.SUCCESSFUL).is_open
    assert_wallet_balanced(funded_wallet)


def test_rejection_needs_a_note(ambiguous_payout, operator, approver) -> None:
    proposal = propose(ambiguous_payout, operator)
    with pytest.raises(ApplicationError, match="note: a written reason"):
        payout_resolution_reject(proposal_id=proposal.pk, approver=approver, note="no")
    assert PayoutResolutionProposal.objects.get(pk=proposal.pk).is_open


# --- What the merchant sees -------------------------------------------------------------------


def test_the_merchant_never_sees_the_internal_reason(
    ambiguous_payout, operator, approver, test_client
) -> None:
    proposal = propose(ambiguous_payout, operator, nip_session_id="0000581234")
    payout_resolution_approve(proposal_id=proposal.pk, approver=approver, note="Agreed, go")
    payout = reload(ambiguous_payout)
    event = Event.objects.get(payout=payout)
    payload = json.loads(event.body)
    assert payload["data"]["error_message"] == "Transfer failed"
    detail = test_client.get(detail_url(payout.pk)).json()["data"]
    assert detail["status"] == "failed"
    assert detail["error_message"] == "Transfer failed"
    for seen_by_merchant in (event.body, json.dumps(detail)):
        assert INTERNAL_REASON not in seen_by_merchant
        assert "Ops chat" not in seen_by_merchant
        assert "0000581234" not in seen_by_merchant
        assert "Agreed, go" not in seen_by_merchant


def test_single_person_resolution_in_code_is_audited_and_keeps_the_reason_internal(
    ambiguous_payout, operator
) -> None:
    payout_resolve_manually(
        payout_id=ambiguous_payout.pk,
        to_status=PayoutStatus.FAILED,
        reason=INTERNAL_REASON,
        resolved_by=operator,
    )
    payout = reload(ambiguous_payout)
    assert payout.error_message == "Transfer failed"
    assert INTERNAL_REASON not in Event.objects.get(payout=payout).body
    record = act_records().get()
    assert record.action == "payouts.payout.resolve_manually"
    assert (record.before, record.after) == ({"status": "ambiguous"}, {"status": "failed"})
    assert record.reason == INTERNAL_REASON
