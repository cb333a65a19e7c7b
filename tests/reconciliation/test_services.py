"""Importing a statement: every category on the recorded samples, idempotent re-import, the NIP
session ids kept, and working the exceptions (clear, re-check, propose, approve) with audit."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit.models import AuditRecord
from core.exceptions import ApplicationError, ConflictError
from merchants.models import Mode
from payouts.models import Payout, PayoutStatus
from payouts.services import payout_resolution_approve, payout_resolution_reject
from reconciliation.models import MatchCategory, ReconciliationItem, ReconciliationRun
from reconciliation.selectors import (
    ExceptionState,
    exceptions_unresolved_count,
    item_list,
    run_is_complete,
)
from reconciliation.services import (
    line_classify,
    reconciliation_item_propose_resolution,
    reconciliation_items_clear,
    reconciliation_items_recheck,
    statement_import,
)
from tests.audit.factories import StaffUserFactory
from tests.payouts.factories import PayoutAttemptFactory, PayoutFactory
from tests.reconciliation.conftest import NIP_SAMPLE, ON_THE_DAY, PAYSTACK_SAMPLE
from wallets.models import LedgerEntry, LedgerEntryType

pytestmark = pytest.mark.django_db


def _import_paystack(**overrides):
    arguments = {
        "content": PAYSTACK_SAMPLE.read_bytes(),
        "file_name": PAYSTACK_SAMPLE.name,
        "statement_format": "paystack_transfers",
        "actor_label": "test",
    }
    arguments.update(overrides)
    return statement_import(**arguments)


def _by_line(run: ReconciliationRun) -> dict[int | None, ReconciliationItem]:
    return {item.line_number: item for item in run.items.filter(line_number__isnull=False)}


def _state(item: ReconciliationItem) -> str:
    return item_list().get(pk=item.pk).state


def test_each_paystack_line_is_matched_and_classified(paystack_payouts) -> None:
    run = _import_paystack().run
    lines = _by_line(run)

    assert (run.period_start, run.period_end) == (date(2026, 11, 20), date(2026, 11, 20))
    assert run.line_count == 9
    assert {number: item.category for number, item in lines.items()} == {
        2: MatchCategory.MATCHED,
        3: MatchCategory.AMOUNT_MISMATCH,
        4: MatchCategory.STATUS_MISMATCH,
        5: MatchCategory.STATUS_MISMATCH,
        6: MatchCategory.NOT_OURS,
        7: MatchCategory.DUPLICATE,
        8: MatchCategory.MATCHED,
        9: MatchCategory.MATCHED,
        10: MatchCategory.MATCHED,
    }
    assert lines[2].payout == paystack_payouts["matched"]
    assert lines[2].matched_by == "internal_reference"
    assert lines[8].payout == paystack_payouts["by_transfer_code"]
    assert lines[8].matched_by == "provider_reference"
    assert lines[3].detail == "statement ₦2,500.50, ours ₦2,500.00"
    assert lines[4].detail == "statement successful, ours ambiguous"
    assert lines[5].detail == "statement failed, ours successful"
    assert lines[6].payout is None
    assert lines[7].detail == "line 2 already matched this payout"
    assert lines[2].raw["Transfer Code"] == "TRF_k2v8m1q9xq3d"


def test_ours_but_not_on_the_statement_covers_its_days_and_its_provider_only(
    paystack_payouts,
) -> None:
    run = _import_paystack().run

    missing = run.items.filter(category=MatchCategory.MISSING)
    assert [item.payout for item in missing] == [paystack_payouts["missing"]]
    assert missing.get().raw == {}
    assert run.category_counts == {
        "matched": 4,
        "amount_mismatch": 1,
        "status_mismatch": 2,
        "not_ours": 1,
        "missing": 1,
        "duplicate": 1,
    }


def test_nip_lines_match_by_reference_and_by_session_id(nip_payouts) -> None:
    run = statement_import(
        content=NIP_SAMPLE.read_bytes(),
        file_name=NIP_SAMPLE.name,
        statement_format="nip_settlement",
        actor_label="test",
    ).run
    lines = _by_line(run)

    assert lines[2].category == MatchCategory.MATCHED
    assert lines[3].category == MatchCategory.STATUS_MISMATCH
    assert lines[4].category == MatchCategory.MATCHED
    assert lines[4].matched_by == "nip_session_id"
    assert lines[4].payout == nip_payouts["by_session"]
    assert lines[5].category == MatchCategory.NOT_OURS


def test_a_matched_line_gives_its_payout_the_session_id_it_lacked(nip_payouts) -> None:
    statement_import(
        content=NIP_SAMPLE.read_bytes(),
        file_name=NIP_SAMPLE.name,
        statement_format="nip_settlement",
        actor_label="test",
    )

    nip_payouts["ok"].refresh_from_db()
    nip_payouts["failed"].refresh_from_db()
    assert nip_payouts["ok"].nip_session_id == "999058261120091502481516234201"
    assert nip_payouts["failed"].nip_session_id == ""  # a mismatched line proves nothing yet


def test_the_same_file_again_is_the_same_run_and_stores_nothing(paystack_payouts) -> None:
    first = _import_paystack()
    items = ReconciliationItem.objects.count()
    audits = AuditRecord.objects.count()

    again = _import_paystack(file_name="renamed.csv")

    assert first.duplicate is False
    assert again.duplicate is True
    assert again.run.pk == first.run.pk
    assert ReconciliationRun.objects.count() == 1
    assert ReconciliationItem.objects.count() == items
    assert AuditRecord.objects.count() == audits


def test_a_file_that_cannot_be_read_stores_nothing(paystack_payouts) -> None:
    broken = PAYSTACK_SAMPLE.read_bytes() + b"po_x,TRF_x,12.5,NGN,success,X,1,B,2026-11-20\n"

    with pytest.raises(ApplicationError) as raised:
        _import_paystack(content=broken)

    assert "line 11, column 'Amount'" in raised.value.message
    assert ReconciliationRun.objects.count() == 0
    assert ReconciliationItem.objects.count() == 0


def test_the_import_is_audited_with_its_counts(paystack_payouts) -> None:
    run = _import_paystack().run

    record = AuditRecord.objects.get(action="reconciliation.reconciliationrun.import")
    assert record.object_id == str(run.pk)
    assert record.actor_label == "test"
    assert record.after["lines"] == 9
    assert record.after["missing"] == 1


def test_a_test_mode_statement_never_matches_live_payouts(paystack_payouts) -> None:
    run = _import_paystack(mode=Mode.TEST).run

    assert set(run.items.values_list("category", flat=True)) == {MatchCategory.NOT_OURS}
    assert not run.items.filter(payout__isnull=False).exists()


def test_matching_uses_a_bounded_number_of_queries(live_wallet) -> None:
    header = "Reference,Transfer Code,Amount,Status,Date\n"
    rows = "".join(f"po_q_{n},TRF_q_{n},100,success,2026-11-20\n" for n in range(2500))

    with CaptureQueriesContext(connection) as queries:
        statement_import(
            content=(header + rows).encode(),
            file_name="many.csv",
            statement_format="paystack_transfers",
            mode="live",
            actor_label="test",
        )

    inserts = [q for q in queries if 'INSERT INTO "reconciliation_reconciliationitem"' in q["sql"]]
    assert len(queries) - len(inserts) < 40
    assert len(inserts) <= 3  # batched inserts


@pytest.mark.parametrize(
    ("statement_status", "payout_status", "category"),
    [
        ("successful", "successful", "matched"),
        ("failed", "failed", "matched"),
        ("pending", "dispatched", "matched"),
        ("pending", "ambiguous", "matched"),
        ("successful", "failed", "status_mismatch"),
        ("successful", "ambiguous", "status_mismatch"),
        ("successful", "dispatched", "status_mismatch"),
        ("failed", "successful", "status_mismatch"),
        ("failed", "ambiguous", "status_mismatch"),
        ("pending", "successful", "status_mismatch"),
        ("pending", "failed", "status_mismatch"),
    ],
)
def test_status_comparison(statement_status: str, payout_status: str, category: str) -> None:
    outcome = line_classify(
        statement_status=statement_status,
        statement_amount=Decimal("10.00"),
        payout_status=payout_status,
        payout_amount=Decimal("10.00"),
    )

    assert outcome.category == category


def test_an_amount_difference_wins_over_agreeing_statuses() -> None:
    outcome = line_classify(
        statement_status="successful",
        statement_amount=Decimal("10.01"),
        payout_status="successful",
        payout_amount=Decimal("10.00"),
    )

    assert outcome.category == MatchCategory.AMOUNT_MISMATCH


# --- Working the exceptions ----------------------------------------------------------------------


def test_clearing_needs_a_note_and_the_permission_and_is_audited(
    paystack_payouts, operator
) -> None:
    run = _import_paystack().run
    not_ours = run.items.get(category=MatchCategory.NOT_OURS)
    viewer = StaffUserFactory(roles=["finance_viewer"])

    with pytest.raises(ApplicationError) as refused:
        reconciliation_items_clear(
            item_ids=[not_ours.pk], note="Card refund batch", cleared_by=viewer
        )
    with pytest.raises(ApplicationError) as short:
        reconciliation_items_clear(item_ids=[not_ours.pk], note="ok", cleared_by=operator)
    cleared = reconciliation_items_clear(
        item_ids=[not_ours.pk], note="Refund paid from the card product", cleared_by=operator
    )

    assert refused.value.status == 403
    assert short.value.message.startswith("note:")
    assert cleared == 1
    assert _state(not_ours) == ExceptionState.CLEARED
    record = AuditRecord.objects.get(action="reconciliation.reconciliationitem.clear")
    assert record.reason == "Refund paid from the card product"
    assert record.object_id == str(not_ours.pk)


def test_matched_lines_and_cleared_exceptions_are_not_cleared_again(
    paystack_payouts, operator
) -> None:
    run = _import_paystack().run
    ids = list(run.items.values_list("pk", flat=True))

    first = reconciliation_items_clear(item_ids=ids, note="Month-end sign-off", cleared_by=operator)
    second = reconciliation_items_clear(
        item_ids=ids, note="Month-end sign-off", cleared_by=operator
    )

    assert first == 6  # the exceptions, not the 4 matched lines
    assert second == 0
    assert run_is_complete(run=run)


def test_recheck_clears_an_exception_our_record_now_agrees_with(paystack_payouts, operator) -> None:
    run = _import_paystack().run
    line = run.items.get(line_number=4)  # statement successful, ours ambiguous
    other = run.items.get(line_number=5)  # statement reversed, ours successful
    Payout.objects.filter(pk=paystack_payouts["ambiguous"].pk).update(
        status=PayoutStatus.SUCCESSFUL
    )

    cleared = reconciliation_items_recheck(item_ids=[line.pk, other.pk], checked_by=operator)

    assert cleared == 1
    assert _state(line) == ExceptionState.CLEARED
    assert _state(other) == ExceptionState.OPEN
    line.refresh_from_db()
    assert line.clear_note.startswith("Re-checked: our payout is now successful")


def test_a_line_proving_an_ambiguous_payout_becomes_a_proposal_and_then_settles_it(
    ambiguous_payout, operator, approver
) -> None:
    content = (
        "Session ID,Reference,Amount,Status,Value Date\n"
        f"999058261123101500000000000042,{ambiguous_payout.internal_reference},2500.00,00,"
        f"{ambiguous_payout.dispatched_at:%Y-%m-%d}\n"
    ).encode()
    run = statement_import(
        content=content,
        file_name="gtb-nip-outward.csv",
        statement_format="nip_settlement",
        mode=Mode.TEST,
        actor_label="test",
    ).run
    line = run.items.get(line_number=2)
    assert line.category == MatchCategory.STATUS_MISMATCH

    reconciliation_item_propose_resolution(
        item_id=line.pk,
        reason="NIP outward report shows 00 for this transfer",
        proposed_by=operator,
    )
    assert _state(line) == ExceptionState.PROPOSED
    assert exceptions_unresolved_count() == {"open": 0, "proposed": 1}
    line.refresh_from_db()
    proposal = line.resolution_proposal
    assert proposal.proposed_status == PayoutStatus.SUCCESSFUL
    assert proposal.nip_session_id == "999058261123101500000000000042"

    payout_resolution_approve(proposal_id=proposal.pk, approver=approver, note="Agreed")

    ambiguous_payout.refresh_from_db()
    assert ambiguous_payout.status == PayoutStatus.SUCCESSFUL
    assert ambiguous_payout.nip_session_id == "999058261123101500000000000042"
    assert LedgerEntry.objects.filter(
        payout_id=ambiguous_payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
    ).exists()
    assert _state(line) == ExceptionState.RESOLVED
    assert run_is_complete(run=run)
    assert AuditRecord.objects.filter(
        action="reconciliation.reconciliationitem.propose_resolution", object_id=str(line.pk)
    ).exists()


def test_a_rejected_proposal_leaves_the_exception_open_for_another_try(
    ambiguous_payout, operator, approver
) -> None:
    content = (
        "Session ID,Reference,Amount,Status,Value Date\n"
        f"1234,{ambiguous_payout.internal_reference},2500.00,51,"
        f"{ambiguous_payout.dispatched_at:%Y-%m-%d}\n"
    ).encode()
    run = statement_import(
        content=content, file_name="f.csv", statement_format="nip_settlement", mode=Mode.TEST
    ).run
    line = run.items.get(line_number=2)
    reconciliation_item_propose_resolution(
        item_id=line.pk, reason="Bank report says 51: not credited", proposed_by=operator
    )
    line.refresh_from_db()
    assert line.resolution_proposal.proposed_status == PayoutStatus.FAILED

    payout_resolution_reject(
        proposal_id=line.resolution_proposal_id, approver=approver, note="Wrong statement day"
    )

    assert _state(line) == ExceptionState.OPEN
    reconciliation_item_propose_resolution(
        item_id=line.pk, reason="Second look: the 51 is for this transfer", proposed_by=operator
    )
    assert _state(line) == ExceptionState.PROPOSED


@pytest.mark.parametrize("line_number", [2, 3, 5, 6])
def test_only_a_line_that_proves_an_ambiguous_payout_can_become_a_proposal(
    paystack_payouts, operator, line_number: int
) -> None:
    run = _import_paystack().run
    line = run.items.get(line_number=line_number)

    with pytest.raises(ConflictError):
        reconciliation_item_propose_resolution(
            item_id=line.pk, reason="Trying anyway, should be refused", proposed_by=operator
        )


def test_proposing_needs_the_propose_permission(paystack_payouts, viewer) -> None:
    run = _import_paystack().run
    line = run.items.get(line_number=4)

    with pytest.raises(ApplicationError) as refused:
        reconciliation_item_propose_resolution(
            item_id=line.pk, reason="Statement says success here", proposed_by=viewer
        )

    assert refused.value.status == 403
    assert _state(line) == ExceptionState.OPEN


@pytest.mark.parametrize("statement_status", ["successful", "failed"])
def test_a_payout_returned_after_success_agrees_with_either_day_of_the_statement(
    statement_status: str,
) -> None:
    outcome = line_classify(
        statement_status=statement_status,
        statement_amount=Decimal("10.00"),
        payout_status="successful",
        payout_amount=Decimal("10.00"),
        payout_returned=True,
    )

    assert outcome.category == MatchCategory.MATCHED


def test_a_reversed_line_for_a_returned_payout_is_matched(paystack_payouts) -> None:
    Payout.objects.filter(pk=paystack_payouts["reversed"].pk).update(
        returned_at=paystack_payouts["reversed"].dispatched_at
    )

    run = _import_paystack().run

    assert run.items.get(line_number=5).category == MatchCategory.MATCHED


def test_a_line_under_a_later_attempts_reference_matches_its_payout(live_wallet) -> None:
    """After a failover the provider knows the payout by its attempt's own reference
    (``<internal_reference>-2``): the line matches the payout, not ``not_ours``."""
    payout = PayoutFactory(
        wallet=live_wallet,
        internal_reference="po_20261120_recon_failover_11",
        amount=Decimal("6100.00"),
        status=PayoutStatus.SUCCESSFUL,
        provider_name="paystack",
        dispatched_at=ON_THE_DAY,
    )
    PayoutAttemptFactory(payout=payout, number=1, provider_name="sandbox", outcome="not_sent")
    PayoutAttemptFactory(payout=payout, number=2, provider_name="paystack", outcome="successful")
    statement = (
        "Reference,Transfer Code,Amount,Currency,Status,Recipient,Account Number,Bank,Date\n"
        "po_20261120_recon_failover_11-2,TRF_f4i1o2v3e4r5,610000,NGN,success,ADA OBI,"
        "0123456789,Access Bank,2026-11-20T11:00:00.000Z\n"
        "po_20261120_recon_failover_11-3,TRF_f4i1o2v3e4r6,610000,NGN,success,ADA OBI,"
        "0123456789,Access Bank,2026-11-20T11:00:00.000Z\n"
    )

    lines = _by_line(_import_paystack(content=statement.encode(), file_name="failover.csv").run)

    assert lines[2].payout == payout
    assert lines[2].matched_by == "attempt_reference"
    assert lines[2].category == MatchCategory.MATCHED
    assert lines[3].payout is None  # no attempt 3 was ever made
    assert lines[3].category == MatchCategory.NOT_OURS
