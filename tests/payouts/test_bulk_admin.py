"""Back office: a bulk payout uploaded as CSV for a chosen merchant and mode, checked row by
row as a dry run and proposed by one person, then approved (submitted through the API's own
service) or rejected by a different finance approver."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from audit.models import AuditRecord
from merchants.models import Mode
from payouts.models import Payout, PayoutBatch, PayoutBatchProposal
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import act_records, assert_admin_forbidden, client_for
from tests.payouts.helpers import fund_wallet
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from wallets.providers.sandbox import sandbox_account_name

pytestmark = pytest.mark.django_db

UPLOAD_URL = "/admin/payouts/payout/bulk-upload/"
CHANGELIST = "/admin/payouts/payout/"
HEADER = "account_number,bank_code,amount,narration,idempotency_key\n"


def csv_file(text: str, name: str = "march-salaries.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/csv")


GOOD_ROWS = (
    "0123456789,058,2500,March salary,csv-1\n"
    "0123456780,058,1000.50,,csv-2\n"
    "0123456781,058,12.345,Bad amount,csv-3\n"
)


def upload(client: Client, merchant_account, text: str, **fields: Any) -> Any:
    return client.post(
        UPLOAD_URL,
        {
            "merchant": merchant_account.merchant.pk,
            "mode": Mode.TEST,
            "payouts_file": csv_file(text),
            "_preview": "1",
            **fields,
        },
    )


def stored() -> tuple[int, int, int, int]:
    return (
        Payout.objects.count(),
        PayoutBatch.objects.count(),
        LedgerEntry.objects.filter(entry_type=LedgerEntryType.PAYOUT_RESERVE).count(),
        act_records().count(),
    )


def review_url(proposal: PayoutBatchProposal) -> str:
    return f"/admin/payouts/payoutbatchproposal/{proposal.pk}/review/"


def propose(client: Client, merchant_account, text: str = "", **fields: Any) -> Any:
    """Uploads, checks and proposes a file; answers the proposal's response."""
    preview = upload(client, merchant_account, text or HEADER + GOOD_ROWS, **fields)
    return client.post(UPLOAD_URL, {"_propose": "1", "token": preview.context["token"]})


@pytest.fixture
def operator_user():
    return StaffUserFactory(roles=["finance_operator"])


@pytest.fixture
def operator(operator_user) -> Client:
    return client_for(operator_user)


@pytest.fixture
def approver_user():
    return StaffUserFactory(roles=["finance_approver"])


@pytest.fixture
def approver(approver_user) -> Client:
    return client_for(approver_user)


# --- who may ----------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["finance_viewer", "ops", "security_admin"])
def test_roles_that_do_not_act_on_payouts_may_not_upload(role, merchant_account) -> None:
    client = client_for(StaffUserFactory(roles=[role]))
    assert_admin_forbidden(client.get(UPLOAD_URL))
    assert_admin_forbidden(upload(client, merchant_account, HEADER + GOOD_ROWS))
    assert_admin_forbidden(client.post(UPLOAD_URL, {"_propose": "1", "token": "x"}))


def test_the_upload_button_shows_only_to_who_may_use_it(operator, merchant_account) -> None:
    viewer = client_for(StaffUserFactory(roles=["finance_viewer"]))
    assert UPLOAD_URL not in viewer.get(CHANGELIST).content.decode()
    assert UPLOAD_URL in operator.get(CHANGELIST).content.decode()


def test_an_operator_proposes_a_checked_file_and_nothing_is_paid(
    operator, operator_user, merchant_account, funded_wallet
) -> None:
    before = stored()

    response = propose(operator, merchant_account)

    proposal = PayoutBatchProposal.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/admin/payouts/payoutbatchproposal/{proposal.pk}/change/"
    assert (proposal.merchant, proposal.mode, proposal.proposed_by) == (
        merchant_account.merchant,
        Mode.TEST,
        operator_user,
    )
    assert proposal.is_open and proposal.batch is None
    assert proposal.payout_count == 2
    assert proposal.total_debit_amount == Decimal("3520.50")
    assert [row["idempotency_key"] for row in proposal.rows] == ["csv-1", "csv-2", "csv-3"]
    assert [row["result"] for row in proposal.preview] == ["valid", "valid", "invalid"]
    assert len(proposal.fingerprint) == 64
    assert stored()[:3] == before[:3]  # no payout, batch or reservation
    record = act_records().get()
    assert (record.actor, record.action) == (operator_user, "payouts.payoutbatchproposal.propose")
    assert record.after["payout_count"] == 2
    assert record.after["file_name"] == "march-salaries.csv"
    detail = operator.get(response["Location"])
    assert detail.status_code == 200
    assert "csv-1" in detail.content.decode()
    assert "₦3,520.50 in all" in detail.content.decode()  # the message, money as everywhere
    assert 'name="_save"' not in detail.content.decode()
    listing = client_for(StaffUserFactory(roles=["finance_approver"])).get(
        "/admin/payouts/payoutbatchproposal/?state=open"
    )
    assert f"/admin/payouts/payoutbatchproposal/{proposal.pk}/review/" in listing.content.decode()


def test_the_same_file_is_one_open_proposal(operator, merchant_account, funded_wallet) -> None:
    propose(operator, merchant_account)
    again = propose(operator, merchant_account)
    assert "already waiting for approval" in operator.get(again["Location"]).content.decode()
    assert PayoutBatchProposal.objects.count() == 1


def test_a_foreign_or_altered_preview_cannot_be_proposed(
    operator, approver, merchant_account, funded_wallet
) -> None:
    token = upload(approver, merchant_account, HEADER + GOOD_ROWS).context["token"]
    for sent in (token, token[:-2] + "xx", "garbage"):
        response = operator.post(UPLOAD_URL, {"_propose": "1", "token": sent}, follow=True)
        assert "expired or is not yours" in response.content.decode()
    assert not PayoutBatchProposal.objects.exists()


# --- the dry run ------------------------------------------------------------------------------


def test_the_preview_checks_each_row_and_stores_nothing(
    operator, merchant_account, funded_wallet, create_payout
) -> None:
    create_payout(idempotency_key="paid-before", amount=Decimal("700.00"), narration="Earlier")
    text = HEADER + GOOD_ROWS + "0123456789,058,700,Earlier,paid-before\n0123456782,999,5,,csv-5\n"
    before = stored()

    response = upload(operator, merchant_account, text)

    assert response.status_code == 200
    assert "admin/payouts/payout/bulk_upload_preview.html" in [t.name for t in response.templates]
    rows = response.context["rows"]
    assert [row["result"] for row in rows] == ["valid", "valid", "invalid", "duplicate", "invalid"]
    assert rows[0]["account_name"] == sandbox_account_name("0123456789")
    assert rows[2]["message"] == (
        "amount: must be a positive decimal string with at most two decimal places"
    )
    assert rows[4]["message"] == "Beneficiary bank could not be resolved"
    assert rows[3]["message"].startswith("already paid by po_")
    assert response.context["counts"] == {"valid": 2, "duplicate": 1, "invalid": 2}
    assert response.context["can_propose"] is True
    page = response.content.decode()
    assert "₦3,520.50" in page  # 2500 + 10 + 1000.50 + 10
    assert stored() == before
    assert not PayoutBatchProposal.objects.exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("account_number,amount,idempotency_key\n1,2,3\n", "missing: bank_code"),
        (HEADER.replace("narration", "note") + "0123456789,058,1,x,k\n", "unknown: note"),
        (HEADER, "The file holds no payouts."),
        (HEADER + "0123456789,058,1,x,k,extra\n", "more values than the header"),
        (HEADER + "".join(f"0123456789,058,1,,k{n}\n" for n in range(501)), "at most 500"),
        (HEADER + "0123456789,058,1,,k\n0123456789,058,2,,k\n", "row 2.idempotency_key: "),
    ],
    ids=["missing-column", "unknown-column", "empty", "extra-value", "too-many", "key-twice"],
)
def test_a_file_that_cannot_be_a_batch_is_refused(
    operator, merchant_account, funded_wallet, text, message
) -> None:
    response = upload(operator, merchant_account, text)
    assert response.status_code == 200
    assert "admin/payouts/payout/bulk_upload.html" in [t.name for t in response.templates]
    assert message in str(response.context["form"].errors)
    assert stored()[:3] == (0, 0, 0)


def test_a_file_that_is_not_utf8_is_refused(operator, merchant_account) -> None:
    response = operator.post(
        UPLOAD_URL,
        {
            "merchant": merchant_account.merchant.pk,
            "mode": Mode.TEST,
            "payouts_file": SimpleUploadedFile("x.csv", b"\xff\xfe\x00a,b\n"),
            "_preview": "1",
        },
    )
    assert "The file is not UTF-8 text." in str(response.context["form"].errors)


def test_all_or_nothing_offers_no_proposal_for_a_file_with_an_invalid_row(
    operator, merchant_account, funded_wallet
) -> None:
    response = upload(operator, merchant_account, HEADER + GOOD_ROWS, atomic="on")
    assert response.context["can_propose"] is False
    assert "every row must be valid" in response.content.decode()


# --- the second person ------------------------------------------------------------------------


def test_the_review_page_names_what_the_approval_pays(
    operator, approver, merchant_account, funded_wallet
) -> None:
    propose(operator, merchant_account)
    proposal = PayoutBatchProposal.objects.get()

    page = approver.get(review_url(proposal))

    assert page.status_code == 200
    text = page.content.decode()
    assert merchant_account.merchant.name in text
    assert "<strong>test</strong> wallet" in text
    assert "2 valid row(s) of 3" in text
    assert "₦3,520.50" in text
    for account, amount in (("0123456789", "₦2,500.00"), ("0123456780", "₦1,000.50")):
        assert account in text
        assert amount in text
    assert "Guaranty Trust Bank (058)" in text
    assert 'name="_approve"' in text


def test_a_different_approver_approves_and_the_batch_is_submitted(
    operator, operator_user, approver, approver_user, merchant_account, funded_wallet: Wallet
) -> None:
    propose(operator, merchant_account)
    proposal = PayoutBatchProposal.objects.get()

    response = approver.post(review_url(proposal), {"_approve": "1", "note": ""})

    batch = PayoutBatch.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{CHANGELIST}?batch__id__exact={batch.pk}"
    assert (batch.accepted_count, batch.rejected_count, batch.status) == (
        2,
        1,
        "partially_accepted",
    )
    assert (batch.created_by, batch.mode, batch.wallet_id) == (
        approver_user,
        Mode.TEST,
        funded_wallet.pk,
    )
    assert batch.batch_reference.startswith("csv-")
    assert batch.total_debit_amount == Decimal("3520.50")
    assert sorted(Payout.objects.filter(batch=batch).values_list("idempotency_key", flat=True)) == [
        "csv-1",
        "csv-2",
    ]
    proposal.refresh_from_db()
    assert (proposal.decision, proposal.decided_by, proposal.batch) == (
        "approved",
        approver_user,
        batch,
    )
    upload_record = AuditRecord.objects.get(action="payouts.payout.bulk_upload")
    assert upload_record.actor == approver_user
    assert upload_record.object_id == str(batch.pk)
    assert upload_record.after["proposed_by"] == {
        "id": operator_user.pk,
        "repr": operator_user.username,
    }
    assert upload_record.after["file_name"] == "march-salaries.csv"
    approval = AuditRecord.objects.get(action="payouts.payoutbatchproposal.approve")
    assert (approval.actor, approval.object_id) == (approver_user, str(proposal.pk))
    listed = approver.get(response["Location"])
    assert {p.pk for p in listed.context["cl"].result_list} == set(
        Payout.objects.filter(batch=batch).values_list("pk", flat=True)
    )


def test_the_uploader_cannot_approve_their_own_file(
    approver, approver_user, merchant_account, funded_wallet
) -> None:
    propose(approver, merchant_account)
    proposal = PayoutBatchProposal.objects.get()
    before = stored()

    page = approver.get(review_url(proposal))
    assert "You proposed this bulk payout" in page.content.decode()
    assert 'name="_approve"' not in page.content.decode()
    assert_admin_forbidden(approver.post(review_url(proposal), {"_approve": "1"}))

    assert stored() == before
    assert PayoutBatchProposal.objects.get().is_open


def test_an_operator_cannot_approve(operator, approver, merchant_account, funded_wallet) -> None:
    propose(approver, merchant_account)
    proposal = PayoutBatchProposal.objects.get()
    before = stored()
    assert_admin_forbidden(operator.get(review_url(proposal)))
    assert_admin_forbidden(operator.post(review_url(proposal), {"_approve": "1"}))
    assert stored() == before


def test_a_rejection_needs_a_note_and_pays_nothing(
    operator, approver, approver_user, merchant_account, funded_wallet
) -> None:
    propose(operator, merchant_account)
    proposal = PayoutBatchProposal.objects.get()
    before = stored()

    short = approver.post(review_url(proposal), {"_reject": "1", "note": "no"})
    assert short.status_code == 200
    assert "Say why" in short.content.decode()
    response = approver.post(
        review_url(proposal), {"_reject": "1", "note": "Salaries were paid by cheque"}
    )

    assert response.status_code == 302
    proposal.refresh_from_db()
    assert (proposal.decision, proposal.decided_by) == ("rejected", approver_user)
    assert stored()[:3] == before[:3]
    record = AuditRecord.objects.get(action="payouts.payoutbatchproposal.reject")
    assert record.reason == "Salaries were paid by cheque"


def test_a_decided_proposal_cannot_be_approved_again(
    operator, approver, merchant_account, funded_wallet
) -> None:
    propose(operator, merchant_account)
    proposal = PayoutBatchProposal.objects.get()
    approver.post(review_url(proposal), {"_approve": "1"})
    other = client_for(StaffUserFactory(roles=["finance_approver"]))
    before = stored()
    response = other.post(review_url(proposal), {"_approve": "1"}, follow=True)
    assert "already approved" in response.content.decode()
    assert stored() == before


def test_a_file_already_paid_cannot_be_proposed_again(
    operator, approver, merchant_account, funded_wallet
) -> None:
    propose(operator, merchant_account)
    approver.post(review_url(PayoutBatchProposal.objects.get()), {"_approve": "1"})
    before = stored()

    response = propose(operator, merchant_account)

    assert "no valid payout to submit" in operator.get(response["Location"]).content.decode()
    assert PayoutBatchProposal.objects.count() == 1
    assert stored() == before


def test_a_live_proposal_pays_from_the_live_wallet(
    operator, approver, merchant_account, live_mode: Wallet, funded_wallet
) -> None:
    propose(operator, merchant_account, mode=Mode.LIVE)
    approver.post(review_url(PayoutBatchProposal.objects.get()), {"_approve": "1"})
    assert PayoutBatch.objects.get().wallet_id == live_mode.pk
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")


def test_an_approval_reports_the_rows_it_rejects(
    operator, approver, merchant_account, test_wallet
) -> None:
    fund_wallet(test_wallet, "3000.00")
    propose(operator, merchant_account)
    response = approver.post(
        review_url(PayoutBatchProposal.objects.get()), {"_approve": "1"}, follow=True
    )
    page = response.content.decode()
    assert "1 payout(s) accepted" in page and "2 rejected" in page
