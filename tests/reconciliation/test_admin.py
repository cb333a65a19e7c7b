"""The reconciliation back office: import a statement, list and filter its lines, clear and
re-check exceptions, propose a resolution from a line — each refused without its permission."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from audit.models import AuditRecord
from reconciliation.models import MatchCategory, ReconciliationItem, ReconciliationRun
from reconciliation.services import statement_import
from tests.reconciliation.conftest import PAYSTACK_SAMPLE

pytestmark = pytest.mark.django_db

IMPORT_URL = "admin:reconciliation_import_statement"
ITEMS_URL = "admin:reconciliation_reconciliationitem_changelist"


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _upload(client: Client, content: bytes | None = None, **fields):
    data = {
        "statement_file": SimpleUploadedFile(
            PAYSTACK_SAMPLE.name, content or PAYSTACK_SAMPLE.read_bytes(), "text/csv"
        ),
        "statement_format": "paystack_transfers",
        "mode": "live",
        **fields,
    }
    return client.post(reverse(IMPORT_URL), data)


def _imported_run() -> ReconciliationRun:
    return statement_import(
        content=PAYSTACK_SAMPLE.read_bytes(),
        file_name=PAYSTACK_SAMPLE.name,
        statement_format="paystack_transfers",
        actor_label="test",
    ).run


def test_an_operator_uploads_a_statement_and_lands_on_its_counts(paystack_payouts, operator):
    client = client_for(operator)

    response = _upload(client)

    run = ReconciliationRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "admin:reconciliation_reconciliationrun_change", args=[run.pk]
    )
    assert run.imported_by == operator
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert "6 exception(s) still to work." in page.content.decode()


def test_uploading_the_same_file_again_opens_the_first_import(paystack_payouts, operator):
    client = client_for(operator)
    _upload(client)

    response = _upload(client)

    assert response.status_code == 302
    assert ReconciliationRun.objects.count() == 1
    page = client.get(response["Location"])
    assert "already imported as #" in page.content.decode()


def test_an_unreadable_file_is_shown_with_its_line_and_nothing_is_stored(operator):
    response = _upload(
        client_for(operator), content=b"Transfer Code,Amount,Status,Date\nTRF_1,1.5,success,x\n"
    )

    assert response.status_code == 200
    assert "line 2, column &#x27;Amount&#x27;" in response.content.decode()
    assert ReconciliationRun.objects.count() == 0


def test_a_value_date_that_overflows_in_lagos_time_is_a_form_error_not_a_500(operator):
    response = _upload(
        client_for(operator),
        content=b"Transfer Code,Amount,Status,Date\nTRF_1,100,success,9999-12-31T23:59:59-05:00\n",
    )

    assert response.status_code == 200
    assert "line 2, column &#x27;Date&#x27;" in response.content.decode()
    assert "out of range" in response.content.decode()
    assert ReconciliationRun.objects.count() == 0


def test_a_viewer_may_not_import(viewer):
    client = client_for(viewer)

    assert client.get(reverse(IMPORT_URL)).status_code == 403
    assert _upload(client).status_code == 403
    page = client.get(reverse("admin:reconciliation_reconciliationrun_changelist"))
    assert "Import a statement" not in page.content.decode()


def test_the_exception_list_filters_by_state_and_category(paystack_payouts, viewer):
    run = _imported_run()
    client = client_for(viewer)

    unresolved = client.get(reverse(ITEMS_URL), {"run__id__exact": run.pk, "state": "unresolved"})
    amounts = client.get(reverse(ITEMS_URL), {"category__exact": "amount_mismatch"})

    assert unresolved.status_code == 200
    assert len(unresolved.context["cl"].result_list) == 6
    assert [item.line_number for item in amounts.context["cl"].result_list] == [3]
    assert "₦2,500.50" in amounts.content.decode()


def test_clearing_from_the_list_asks_for_a_note_then_clears_and_audits(paystack_payouts, operator):
    run = _imported_run()
    not_ours = run.items.get(category=MatchCategory.NOT_OURS)
    client = client_for(operator)
    posted = {"action": "clear_selected", "_selected_action": [not_ours.pk]}

    confirmation = client.post(reverse(ITEMS_URL), posted)
    done = client.post(
        reverse(ITEMS_URL), {**posted, "confirm": "yes", "reason": "Card refund batch 11/20"}
    )

    assert confirmation.status_code == 200
    assert b"Clear with this note" in confirmation.content
    assert done.status_code == 302
    not_ours.refresh_from_db()
    assert not_ours.clear_note == "Card refund batch 11/20"
    assert AuditRecord.objects.filter(action="reconciliation.reconciliationitem.clear").exists()


def test_a_viewer_is_offered_no_action_and_posting_one_is_refused(paystack_payouts, viewer):
    run = _imported_run()
    item = run.items.get(category=MatchCategory.NOT_OURS)
    client = client_for(viewer)

    page = client.get(reverse(ITEMS_URL))
    refused = client.post(
        reverse(ITEMS_URL),
        {
            "action": "clear_selected",
            "_selected_action": [item.pk],
            "confirm": "yes",
            "reason": "Trying without the right",
        },
    )

    assert page.context["action_form"] is None or not page.context["cl"].actions
    assert refused.status_code == 403
    item.refresh_from_db()
    assert item.cleared_at is None


def test_the_line_page_offers_the_proposal_and_the_proposal_page_submits(
    paystack_payouts, operator
):
    run = _imported_run()
    line = run.items.get(line_number=4)  # statement success, ours ambiguous
    client = client_for(operator)

    page = client.get(reverse("admin:reconciliation_reconciliationitem_change", args=[line.pk]))
    form = client.get(reverse("admin:reconciliation_item_propose_resolution", args=[line.pk]))
    submitted = client.post(
        reverse("admin:reconciliation_item_propose_resolution", args=[line.pk]),
        {"reason": form.context["form"].initial["reason"], "checked": "on"},
    )

    assert "Propose a resolution from this line" in page.content.decode()
    assert "po_20261120_recon_ambiguous_03" in form.content.decode()
    assert submitted.status_code == 302
    line.refresh_from_db()
    assert line.resolution_proposal.proposed_status == "successful"
    assert line.resolution_proposal.reason.startswith("Statement paystack_transfers_2026-11-20.csv")


def test_a_line_that_proves_nothing_has_no_proposal_page(paystack_payouts, operator):
    run = _imported_run()
    line = run.items.get(line_number=5)  # statement reversed, ours successful

    response = client_for(operator).get(
        reverse("admin:reconciliation_item_propose_resolution", args=[line.pk])
    )

    assert response.status_code == 302
    assert not ReconciliationItem.objects.filter(resolution_proposal__isnull=False).exists()


def test_the_clear_page_clears_one_line(paystack_payouts, operator):
    run = _imported_run()
    line = run.items.get(category=MatchCategory.MISSING)
    client = client_for(operator)

    response = client.post(
        reverse("admin:reconciliation_item_clear", args=[line.pk]),
        {"reason": "On the 21st's statement: sent at 23:58"},
    )

    assert response.status_code == 302
    line.refresh_from_db()
    assert line.cleared_by == operator
