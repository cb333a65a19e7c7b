"""The bulk payout proposal services: a dry-run-checked file stored for a second person, who
submits exactly the stored rows (``payout_batch_create``) or rejects them."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from core.exceptions import ApplicationError, ConflictError
from merchants.models import Mode
from payouts.models import Payout, PayoutBatch, PayoutBatchProposal
from payouts.services.bulk_proposals import (
    payout_batch_proposal_approve,
    payout_batch_proposal_reject,
    payout_batch_propose,
)
from tests.audit.factories import StaffUserFactory

pytestmark = pytest.mark.django_db

ROWS = [
    {"account_number": "0123456789", "bank_code": "058", "amount": "2500", "idempotency_key": "a"},
    {"account_number": "0123456780", "bank_code": "058", "amount": "100", "idempotency_key": "b"},
]


@pytest.fixture
def operator():
    return StaffUserFactory(roles=["finance_operator"])


@pytest.fixture
def approver():
    return StaffUserFactory(roles=["finance_approver"])


def propose(merchant_account, user, rows=ROWS, **extra):  # type: ignore[no-untyped-def]
    arguments = {
        "merchant": merchant_account.merchant,
        "mode": Mode.TEST,
        "rows": rows,
        "atomic": False,
        "batch_reference": "march",
        "proposed_by": user,
        **extra,
    }
    return payout_batch_propose(**arguments)


def test_a_proposal_stores_the_rows_and_the_dry_run_and_reserves_nothing(
    merchant_account, funded_wallet, operator
) -> None:
    proposal = propose(merchant_account, operator)
    assert proposal.rows == ROWS
    assert [row["bank_name"] for row in proposal.preview] == ["Guaranty Trust Bank"] * 2
    assert (proposal.payout_count, proposal.total_debit_amount) == (2, Decimal("2620.00"))
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")
    assert not Payout.objects.exists()


def test_proposing_needs_a_finance_role(merchant_account, funded_wallet) -> None:
    with pytest.raises(ApplicationError, match="may not propose") as refused:
        propose(merchant_account, StaffUserFactory(roles=["finance_viewer"]))
    assert refused.value.status == 403


def test_an_all_or_nothing_file_with_an_invalid_row_is_not_proposed(
    merchant_account, funded_wallet, operator
) -> None:
    rows = [*ROWS, {**ROWS[0], "amount": "1.234", "idempotency_key": "c"}]
    with pytest.raises(ApplicationError, match="All or nothing"):
        propose(merchant_account, operator, rows=rows, atomic=True)
    assert not PayoutBatchProposal.objects.exists()


def test_the_database_keeps_one_open_proposal_per_fingerprint(
    merchant_account, funded_wallet, operator
) -> None:
    proposal = propose(merchant_account, operator)
    with pytest.raises(ConflictError, match=f"proposal #{proposal.pk}"):
        propose(merchant_account, operator)
    copy = {
        field.name: getattr(proposal, field.name)
        for field in PayoutBatchProposal._meta.concrete_fields
        if not field.primary_key
    }
    with pytest.raises(IntegrityError), transaction.atomic():
        PayoutBatchProposal.objects.create(**copy)


def test_an_approval_submits_the_stored_rows_once(
    merchant_account, funded_wallet, operator, approver
) -> None:
    proposal = propose(merchant_account, operator)
    result = payout_batch_proposal_approve(proposal_id=proposal.pk, approver=approver)
    assert (result.batch.accepted_count, result.batch.batch_reference) == (2, "march")
    proposal.refresh_from_db()
    assert (proposal.decision, proposal.batch) == ("approved", result.batch)
    with pytest.raises(ConflictError, match="already approved"):
        payout_batch_proposal_approve(proposal_id=proposal.pk, approver=approver)
    assert PayoutBatch.objects.count() == 1


def test_the_proposer_may_not_decide(merchant_account, funded_wallet, approver) -> None:
    proposal = propose(merchant_account, approver)
    for decide in (payout_batch_proposal_approve, payout_batch_proposal_reject):
        with pytest.raises(ApplicationError, match="different user") as refused:
            decide(proposal_id=proposal.pk, approver=approver, note="Looks wrong to me")
        assert refused.value.status == 403
    assert PayoutBatchProposal.objects.get().is_open
    assert not PayoutBatch.objects.exists()


def test_rows_changed_after_the_proposal_are_not_submitted(
    merchant_account, funded_wallet, operator, approver
) -> None:
    proposal = propose(merchant_account, operator)
    altered = [{**ROWS[0], "account_number": "0999999999"}, ROWS[1]]
    PayoutBatchProposal.objects.filter(pk=proposal.pk).update(rows=altered)
    with pytest.raises(ConflictError, match="fingerprint"):
        payout_batch_proposal_approve(proposal_id=proposal.pk, approver=approver)
    assert not PayoutBatch.objects.exists()


def test_a_rejection_needs_a_written_note(
    merchant_account, funded_wallet, operator, approver
) -> None:
    proposal = propose(merchant_account, operator)
    with pytest.raises(ApplicationError, match="note: a written reason"):
        payout_batch_proposal_reject(proposal_id=proposal.pk, approver=approver, note="no")
    payout_batch_proposal_reject(
        proposal_id=proposal.pk, approver=approver, note="Duplicate of the cheque run"
    )
    assert PayoutBatchProposal.objects.get().decision == "rejected"
