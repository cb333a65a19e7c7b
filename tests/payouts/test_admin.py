"""Back office: filters, search, ledger entries on the change page, CSV export, requery action,
and the two-person manual resolution of ambiguous payouts, for each finance role."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from audit.models import AuditRecord
from merchants.models import Mode
from merchants.services import merchant_create
from payouts.models import Payout, PayoutResolution, PayoutResolutionProposal, PayoutStatus
from payouts.providers.sandbox import ACCOUNT_SUCCEEDS_THEN_RETURNED
from payouts.services import payout_dispatch, payout_resolution_propose
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import act_records, actions_offered, assert_admin_forbidden, client_for
from tests.payouts.factories import PayoutFactory
from tests.payouts.helpers import assert_wallet_balanced, reload
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/payouts/payout/"


def change_url(payout: Payout) -> str:
    return f"{CHANGELIST}{payout.pk}/change/"


def propose_url(payout: Payout) -> str:
    return f"{CHANGELIST}{payout.pk}/propose-resolution/"


def review_url(proposal: PayoutResolutionProposal) -> str:
    return f"{CHANGELIST}resolution-proposals/{proposal.pk}/review/"


@pytest.fixture
def superuser() -> User:
    return User.objects.create_superuser("finance-lead", "lead@example.com", "pw-lead-12345")


@pytest.fixture
def admin_client(superuser: User) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


@pytest.fixture
def ambiguous(funded_wallet, create_payout) -> Payout:
    payout = create_payout(account_number="1000000003").payout
    payout_dispatch(payout_id=payout.pk)
    return reload(payout)


def listed_references(response) -> set[str]:
    page = response.content.decode()
    return {p.internal_reference for p in Payout.objects.all() if p.internal_reference in page}


@pytest.fixture
def spread(test_wallet, live_wallet) -> dict[str, Payout]:
    other = merchant_create(name="Zed Traders", email="zed@example.com").merchant
    return {
        "ambiguous": PayoutFactory(
            wallet=test_wallet, status=PayoutStatus.AMBIGUOUS, account_name="CHIOMA EZE"
        ),
        "live": PayoutFactory(wallet=live_wallet, status=PayoutStatus.SUCCESSFUL),
        "other_bank": PayoutFactory(
            wallet=test_wallet,
            bank_code="044",
            bank_name="Access Bank",
            account_number="4444444444",
        ),
        "other_merchant": PayoutFactory(wallet=wallet_get(merchant=other, mode=Mode.TEST)),
    }


def test_changelist_lists_payouts(admin_client, spread) -> None:
    response = admin_client.get(CHANGELIST)
    assert response.status_code == 200
    assert listed_references(response) == {p.internal_reference for p in spread.values()}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"status__exact": "ambiguous"}, {"ambiguous"}),
        ({"mode__exact": "live"}, {"live"}),
        ({"bank_code": "044"}, {"other_bank"}),
    ],
)
def test_filters(admin_client, spread, params: dict, expected: set[str]) -> None:
    response = admin_client.get(CHANGELIST, params)
    assert listed_references(response) == {spread[name].internal_reference for name in expected}


def test_merchant_filter(admin_client, spread) -> None:
    merchant_id = spread["other_merchant"].merchant_id
    response = admin_client.get(CHANGELIST, {"merchant__id__exact": merchant_id})
    assert listed_references(response) == {spread["other_merchant"].internal_reference}


def test_date_filter(admin_client, spread) -> None:
    Payout.objects.filter(pk=spread["live"].pk).update(
        created_at=timezone.now() - timedelta(days=40)
    )
    midnight = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    response = admin_client.get(
        CHANGELIST,
        {
            "created_at__gte": str(midnight),
            "created_at__lt": str(midnight + timedelta(days=1)),
        },
    )
    assert spread["live"].internal_reference not in response.content.decode()
    assert spread["ambiguous"].internal_reference in response.content.decode()


@pytest.mark.parametrize("field", ["internal_reference", "account_number", "account_name"])
def test_search(admin_client, spread, field: str) -> None:
    target = spread["other_bank"] if field == "account_number" else spread["ambiguous"]
    term = getattr(target, field)
    if field == "account_name":
        term = "chioma"
    response = admin_client.get(CHANGELIST, {"q": term})
    assert listed_references(response) == {target.internal_reference}


def test_change_page_shows_ledger_entries_read_only(admin_client, ambiguous) -> None:
    response = admin_client.get(change_url(ambiguous))
    page = response.content.decode()
    assert response.status_code == 200
    assert "payout_reserve" in page
    assert '<span class="money">₦1,010.00</span>' in page
    assert "sandbox.initiate_transfer" in page
    assert 'name="_save"' not in page
    assert "Propose a resolution…" in page


def test_payouts_cannot_be_added_or_deleted(admin_client, ambiguous) -> None:
    assert admin_client.get(f"{CHANGELIST}add/").status_code == 403
    assert admin_client.get(f"{CHANGELIST}{ambiguous.pk}/delete/").status_code == 403


def test_change_post_does_not_alter_money(admin_client, ambiguous) -> None:
    admin_client.post(change_url(ambiguous), {"amount": "1.00", "status": "successful"})
    payout = reload(ambiguous)
    assert payout.amount == ambiguous.amount
    assert payout.status == PayoutStatus.AMBIGUOUS
    assert payout.updated_at == ambiguous.updated_at  # not even re-saved


def test_export_csv(admin_client, spread) -> None:
    target = spread["ambiguous"]
    Payout.objects.filter(pk=target.pk).update(account_name="=HYPERLINK(evil)")
    response = admin_client.post(
        CHANGELIST, {"action": "export_csv", "_selected_action": [target.pk]}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0][:3] == ["id", "internal_reference", "merchant_id"]
    assert len(rows) == 2
    record = dict(zip(rows[0], rows[1], strict=True))
    assert record["internal_reference"] == target.internal_reference
    assert record["amount"] == "1000.00"
    assert record["status"] == "ambiguous"
    assert record["account_name"] == "'=HYPERLINK(evil)"


def test_requery_selected(admin_client, funded_wallet, create_payout) -> None:
    payout = create_payout(account_number="1000000002").payout
    payout_dispatch(payout_id=payout.pk)
    final = create_payout().payout
    payout_dispatch(payout_id=final.pk)
    response = admin_client.post(
        CHANGELIST,
        {"action": "requery_selected", "_selected_action": [payout.pk, final.pk]},
        follow=True,
    )
    assert "Requeried 1 payout(s): 1 successful; 1 already final, skipped." in (
        response.content.decode()
    )
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert_wallet_balanced(funded_wallet)


def test_check_selected_successful_payouts_for_a_return(
    admin_client, funded_wallet, create_payout
) -> None:
    """The documented action: a successful payout the bank has since returned gains
    ``returned_at`` and its principal back, audited; one still paid is left as it is."""
    returned = create_payout(account_number=ACCOUNT_SUCCEEDS_THEN_RETURNED).payout
    payout_dispatch(payout_id=returned.pk)
    kept = create_payout().payout
    payout_dispatch(payout_id=kept.pk)
    assert reload(returned).status == reload(kept).status == PayoutStatus.SUCCESSFUL

    response = admin_client.post(
        CHANGELIST,
        {"action": "check_returns_selected", "_selected_action": [returned.pk, kept.pk]},
        follow=True,
    )

    assert response.status_code == 200
    assert "Checked 2 successful payout(s) with the provider: 1 returned" in (
        response.content.decode()
    )
    assert reload(returned).returned_at is not None
    assert reload(kept).returned_at is None
    assert AuditRecord.objects.filter(
        action="payouts.payout.return_check", object_id=str(returned.pk)
    ).exists()
    assert_wallet_balanced(funded_wallet)


INTERNAL_REASON = "Paystack support confirmed the credit never landed, ticket 991"


@pytest.fixture
def operator() -> User:
    return StaffUserFactory(username="operator", roles=["finance_operator"])


@pytest.fixture
def approver() -> User:
    return StaffUserFactory(username="approver", roles=["finance_approver"])


def proposal_for(payout: Payout, user: User, status: str = "failed") -> PayoutResolutionProposal:
    return payout_resolution_propose(
        payout_id=payout.pk, proposed_status=status, reason=INTERNAL_REASON, proposed_by=user
    )


def propose_form(status: str = "failed", **overrides: str) -> dict[str, str]:
    return {
        "proposed_status": status,
        "reason": INTERNAL_REASON,
        "provider_reference": "TRF_9x8y",
        "nip_session_id": "000058123456",
        "checked": "on",
        **overrides,
    }


def buttons(response) -> list[str]:
    return [label for label, _url in response.context["backoffice_buttons"]]


# --- What each role sees ------------------------------------------------------------------------


def test_a_view_only_user_sees_no_action_or_button_and_changes_nothing(ambiguous) -> None:
    viewer = StaffUserFactory(permissions=["payouts.view_payout"])
    client = client_for(viewer)
    listing = client.get(CHANGELIST)
    assert listing.status_code == 200
    assert actions_offered(listing) == set()
    page = client.get(change_url(ambiguous))
    assert page.status_code == 200
    assert buttons(page) == []
    assert "Propose a resolution" not in page.content.decode()
    assert 'name="_save"' not in page.content.decode()
    for action in ("requery_selected", "export_csv", "propose_resolution_selected"):
        response = client.post(CHANGELIST, {"action": action, "_selected_action": [ambiguous.pk]})
        assert_admin_forbidden(response)
    assert_admin_forbidden(client.get(propose_url(ambiguous)))
    assert_admin_forbidden(client.post(propose_url(ambiguous), propose_form()))
    payout = reload(ambiguous)
    assert (payout.status, payout.requery_count) == (PayoutStatus.AMBIGUOUS, 0)
    assert not PayoutResolutionProposal.objects.exists()
    assert not act_records().exists()


def test_finance_viewer_may_export_only(ambiguous) -> None:
    client = client_for(StaffUserFactory(roles=["finance_viewer"]))
    assert actions_offered(client.get(CHANGELIST)) == {"export_csv"}
    assert buttons(client.get(change_url(ambiguous))) == []
    assert_admin_forbidden(
        client.post(CHANGELIST, {"action": "requery_selected", "_selected_action": [ambiguous.pk]})
    )
    assert reload(ambiguous).requery_count == 0


def test_finance_operator_may_requery_and_propose_but_not_approve(ambiguous, operator) -> None:
    client = client_for(operator)
    assert actions_offered(client.get(CHANGELIST)) == {
        "requery_selected",
        "check_returns_selected",
        "export_csv",
        "propose_resolution_selected",
    }
    assert buttons(client.get(change_url(ambiguous))) == ["Propose a resolution…"]
    proposal = proposal_for(ambiguous, operator)
    assert buttons(client.get(change_url(ambiguous))) == []
    assert_admin_forbidden(client.get(review_url(proposal)))
    assert_admin_forbidden(client.post(review_url(proposal), {"_approve": "1"}))
    assert reload(ambiguous).status == PayoutStatus.AMBIGUOUS


def test_finance_approver_may_review_but_not_propose(ambiguous, operator, approver) -> None:
    client = client_for(approver)
    assert actions_offered(client.get(CHANGELIST)) == {"export_csv"}
    assert buttons(client.get(change_url(ambiguous))) == []
    assert_admin_forbidden(client.get(propose_url(ambiguous)))
    assert_admin_forbidden(client.post(propose_url(ambiguous), propose_form()))
    assert not PayoutResolutionProposal.objects.exists()
    proposal_for(ambiguous, operator)
    assert buttons(client.get(change_url(ambiguous))) == ["Review the proposed resolution…"]


def test_requery_action_is_audited(funded_wallet, create_payout, operator) -> None:
    payout = create_payout(account_number="1000000002").payout
    payout_dispatch(payout_id=payout.pk)
    response = client_for(operator).post(
        CHANGELIST, {"action": "requery_selected", "_selected_action": [payout.pk]}
    )
    assert response.status_code == 302
    record = act_records().get()
    assert (record.actor, record.action) == (operator, "payouts.payout.requery")
    assert (record.before, record.after) == ({"status": "ambiguous"}, {"status": "successful"})


# --- Proposing --------------------------------------------------------------------------------


def test_propose_action_leads_to_the_proposal_page(ambiguous, operator) -> None:
    client = client_for(operator)
    response = client.post(
        CHANGELIST, {"action": "propose_resolution_selected", "_selected_action": [ambiguous.pk]}
    )
    assert response.status_code == 302
    assert response["Location"] == propose_url(ambiguous)
    page = client.get(propose_url(ambiguous))
    assert page.status_code == 200
    content = page.content.decode()
    assert "admin/payouts/payout/propose_resolution.html" in [t.name for t in page.templates]
    assert 'id="site-name"' in content
    assert "sandbox.initiate_transfer" in content  # the provider's answers
    assert "payout_reserve" in content  # the ledger entries
    assert "I have confirmed this outcome" in content


def test_propose_action_needs_exactly_one_ambiguous(funded_wallet, create_payout, operator):
    payout = create_payout().payout
    response = client_for(operator).post(
        CHANGELIST,
        {"action": "propose_resolution_selected", "_selected_action": [payout.pk]},
        follow=True,
    )
    assert "Select exactly one ambiguous payout" in response.content.decode()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"reason": ""}, "This field is required"),
        ({"checked": ""}, "This field is required"),
        ({"reason": "too short"}, "at least 10 characters"),
    ],
)
def test_a_proposal_without_reason_or_confirmation_changes_nothing(
    ambiguous, operator, overrides, message
) -> None:
    response = client_for(operator).post(propose_url(ambiguous), propose_form(**overrides))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert reload(ambiguous).status == PayoutStatus.AMBIGUOUS
    assert not PayoutResolutionProposal.objects.exists()
    assert not act_records().exists()


def test_proposing_records_the_proposal_and_moves_nothing(ambiguous, operator) -> None:
    response = client_for(operator).post(propose_url(ambiguous), propose_form())
    assert response.status_code == 302
    assert response["Location"] == change_url(ambiguous)
    proposal = PayoutResolutionProposal.objects.get()
    assert (proposal.proposed_by, proposal.proposed_status) == (operator, "failed")
    assert (proposal.provider_reference, proposal.nip_session_id) == ("TRF_9x8y", "000058123456")
    assert reload(ambiguous).status == PayoutStatus.AMBIGUOUS
    assert act_records().get().action == "payouts.payout.resolution_propose"


def test_proposing_a_non_ambiguous_payout_is_refused(funded_wallet, create_payout, operator):
    payout = create_payout().payout
    response = client_for(operator).post(propose_url(payout), propose_form())
    assert response.status_code == 302
    assert reload(payout).status == PayoutStatus.RESERVED
    assert not PayoutResolutionProposal.objects.exists()


# --- Reviewing --------------------------------------------------------------------------------


def test_the_review_page_shows_the_proposal_and_both_decisions(ambiguous, operator, approver):
    proposal = proposal_for(ambiguous, operator)
    page = client_for(approver).get(review_url(proposal))
    assert page.status_code == 200
    content = page.content.decode()
    assert "admin/payouts/payout/review_resolution.html" in [t.name for t in page.templates]
    assert INTERNAL_REASON in content
    assert "sandbox.initiate_transfer" in content
    assert 'name="_approve"' in content
    assert 'name="_reject"' in content


def test_the_same_user_cannot_approve_their_own_proposal(ambiguous, superuser) -> None:
    proposal = proposal_for(ambiguous, superuser)
    client = client_for(superuser)
    page = client.get(review_url(proposal))
    assert page.status_code == 200
    assert 'name="_approve"' not in page.content.decode()
    assert "a different finance approver must decide" in page.content.decode()
    assert buttons(client.get(change_url(ambiguous))) == []
    response = client.post(review_url(proposal), {"_approve": "1", "note": "Looks right to me"})
    assert_admin_forbidden(response)
    assert "different user than the proposer" in response.content.decode()
    assert reload(ambiguous).status == PayoutStatus.AMBIGUOUS
    assert PayoutResolutionProposal.objects.get().is_open
    assert not AuditRecord.objects.filter(action="payouts.payout.resolution_approve").exists()


def test_approval_settles_the_payout_and_is_audited(
    funded_wallet, ambiguous, operator, approver
) -> None:
    proposal = proposal_for(ambiguous, operator, status="successful")
    response = client_for(approver).post(
        review_url(proposal), {"_approve": "1", "note": "Matches the statement"}
    )
    assert response.status_code == 302
    payout = reload(ambiguous)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert LedgerEntry.objects.filter(
        payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
    ).exists()
    assert_wallet_balanced(funded_wallet)
    resolution = PayoutResolution.objects.get(payout=payout)
    assert (resolution.resolved_by, resolution.reason) == (approver, INTERNAL_REASON)
    record = AuditRecord.objects.get(action="payouts.payout.resolution_approve")
    assert (record.actor, record.reason) == (approver, "Matches the statement")
    page = client_for(approver).get(change_url(payout)).content.decode()
    assert INTERNAL_REASON in page  # staff see the internal reason on the payout


def test_rejection_leaves_the_payout_ambiguous(funded_wallet, ambiguous, operator, approver):
    proposal = proposal_for(ambiguous, operator)
    client = client_for(approver)
    needs_note = client.post(review_url(proposal), {"_reject": "1", "note": ""})
    assert needs_note.status_code == 200
    assert "Say why the proposal is rejected" in needs_note.content.decode()
    assert PayoutResolutionProposal.objects.get().is_open
    response = client.post(review_url(proposal), {"_reject": "1", "note": "No statement line yet"})
    assert response.status_code == 302
    assert reload(ambiguous).status == PayoutStatus.AMBIGUOUS
    assert PayoutResolutionProposal.objects.get().decision == "rejected"
    assert_wallet_balanced(funded_wallet)
    assert AuditRecord.objects.filter(action="payouts.payout.resolution_reject").count() == 1
    assert buttons(client_for(operator).get(change_url(ambiguous))) == ["Propose a resolution…"]


def test_a_post_without_a_decision_decides_nothing(ambiguous, operator, approver) -> None:
    proposal = proposal_for(ambiguous, operator)
    response = client_for(approver).post(review_url(proposal), {"note": "hmm"})
    assert response.status_code == 200
    assert "Choose to approve or to reject" in response.content.decode()
    assert PayoutResolutionProposal.objects.get().is_open


def test_the_csv_shows_the_outcome_never_the_internal_reason(
    funded_wallet, ambiguous, operator, approver
) -> None:
    proposal = proposal_for(ambiguous, operator)
    client_for(approver).post(review_url(proposal), {"_approve": "1"})
    response = client_for(StaffUserFactory(roles=["finance_viewer"])).post(
        CHANGELIST, {"action": "export_csv", "_selected_action": [ambiguous.pk]}
    )
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    record = dict(zip(rows[0], rows[1], strict=True))
    assert (record["status"], record["error_message"]) == ("failed", "Transfer failed")
    assert INTERNAL_REASON not in response.content.decode()
    assert AuditRecord.objects.filter(action="payouts.payout.export").count() == 1


def test_proposals_list_offers_review_to_approvers_only(ambiguous, operator, approver) -> None:
    proposal_for(ambiguous, operator)
    url = "/admin/payouts/payoutresolutionproposal/"
    as_approver = client_for(approver).get(url, {"state": "open"}).content.decode()
    assert "Review…" in as_approver
    as_operator = client_for(operator).get(url)
    assert as_operator.status_code == 200
    assert "Review…" not in as_operator.content.decode()
    viewer = client_for(StaffUserFactory(roles=["finance_viewer"])).get(url).content.decode()
    assert "Review…" not in viewer


def test_resolution_records_are_read_only(admin_client, operator, approver, ambiguous) -> None:
    proposal = proposal_for(ambiguous, operator)
    client_for(approver).post(review_url(proposal), {"_approve": "1"})
    resolution = PayoutResolution.objects.get()
    assert admin_client.get("/admin/payouts/payoutresolution/").status_code == 200
    assert admin_client.get("/admin/payouts/payoutresolution/add/").status_code == 403
    delete = f"/admin/payouts/payoutresolution/{resolution.pk}/delete/"
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert PayoutResolution.objects.count() == 1
    proposals = "/admin/payouts/payoutresolutionproposal/"
    assert admin_client.get(f"{proposals}add/").status_code == 403
    change = admin_client.post(f"{proposals}{proposal.pk}/change/", {"decision": "rejected"})
    assert change.status_code == 403
    assert PayoutResolutionProposal.objects.get().decision == "approved"
