"""Back office: a bulk payout uploaded as CSV for a chosen merchant and mode, checked row by
row as a dry run, then submitted by a finance approver through the API's own service."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from audit.models import AuditRecord
from merchants.models import Mode
from payouts.models import Payout, PayoutBatch
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import assert_admin_forbidden, client_for
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
        AuditRecord.objects.count(),
    )


@pytest.fixture
def operator() -> Client:
    return client_for(StaffUserFactory(roles=["finance_operator"]))


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
    assert_admin_forbidden(client.post(UPLOAD_URL, {"_submit": "1", "token": "x"}))


def test_the_upload_button_shows_only_to_who_may_use_it(operator, merchant_account) -> None:
    viewer = client_for(StaffUserFactory(roles=["finance_viewer"]))
    assert UPLOAD_URL not in viewer.get(CHANGELIST).content.decode()
    assert UPLOAD_URL in operator.get(CHANGELIST).content.decode()


def test_an_operator_may_check_a_file_but_not_submit_it(
    operator, approver_user, merchant_account, funded_wallet
) -> None:
    response = upload(operator, merchant_account, HEADER + GOOD_ROWS)
    assert response.status_code == 200
    assert response.context["can_submit"] is False
    assert "Only a finance approver may submit" in response.content.decode()
    before = stored()
    token = (
        client_for(approver_user)
        .post(
            UPLOAD_URL,
            {
                "merchant": merchant_account.merchant.pk,
                "mode": Mode.TEST,
                "payouts_file": csv_file(HEADER + GOOD_ROWS),
                "_preview": "1",
            },
        )
        .context["token"]
    )
    assert_admin_forbidden(operator.post(UPLOAD_URL, {"_submit": "1", "token": token}))
    assert stored() == before


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
    page = response.content.decode()
    assert "₦3,520.50" in page  # 2500 + 10 + 1000.50 + 10
    assert stored() == before


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


# --- submitting -------------------------------------------------------------------------------


def test_an_approver_submits_the_checked_file(
    approver, approver_user, merchant_account, funded_wallet: Wallet
) -> None:
    preview = upload(approver, merchant_account, HEADER + GOOD_ROWS)
    assert preview.context["can_submit"] is True

    response = approver.post(UPLOAD_URL, {"_submit": "1", "token": preview.context["token"]})

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
    record = AuditRecord.objects.get(action="payouts.payout.bulk_upload")
    assert record.actor == approver_user
    assert record.object_type == "payouts.payoutbatch"
    assert record.object_id == str(batch.pk)
    assert record.after["accepted"] == 2
    assert record.after["file_name"] == "march-salaries.csv"
    assert len(record.after["file_sha256"]) == 64
    listed = approver.get(response["Location"])
    assert listed.status_code == 200
    assert {p.pk for p in listed.context["cl"].result_list} == set(
        Payout.objects.filter(batch=batch).values_list("pk", flat=True)
    )


def test_submitting_the_same_file_again_pays_nothing_again(
    approver, merchant_account, funded_wallet
) -> None:
    token = upload(approver, merchant_account, HEADER + GOOD_ROWS).context["token"]
    approver.post(UPLOAD_URL, {"_submit": "1", "token": token})
    again = upload(approver, merchant_account, HEADER + GOOD_ROWS).context["token"]
    before = stored()

    response = approver.post(UPLOAD_URL, {"_submit": "1", "token": again}, follow=True)

    assert "already submitted" in response.content.decode()
    assert stored() == before


def test_a_live_upload_pays_from_the_live_wallet(
    approver, merchant_account, live_mode: Wallet, funded_wallet
) -> None:
    token = upload(approver, merchant_account, HEADER + GOOD_ROWS, mode=Mode.LIVE).context["token"]
    approver.post(UPLOAD_URL, {"_submit": "1", "token": token})
    assert PayoutBatch.objects.get().wallet_id == live_mode.pk
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")


def test_all_or_nothing_offers_no_submit_for_a_file_with_an_invalid_row(
    approver, merchant_account, funded_wallet
) -> None:
    response = upload(approver, merchant_account, HEADER + GOOD_ROWS, atomic="on")
    assert response.context["can_submit"] is False
    assert "every row must be valid" in response.content.decode()


def test_an_altered_or_foreign_preview_is_refused(
    approver, merchant_account, funded_wallet
) -> None:
    other_approver = client_for(StaffUserFactory(roles=["finance_approver"]))
    token = upload(other_approver, merchant_account, HEADER + GOOD_ROWS).context["token"]
    before = stored()
    for sent in (token, token[:-2] + "xx", "garbage"):
        response = approver.post(UPLOAD_URL, {"_submit": "1", "token": sent}, follow=True)
        assert "expired or is not yours" in response.content.decode()
    assert stored() == before


def test_a_submit_reports_the_rows_it_rejects(approver, merchant_account, test_wallet) -> None:
    fund_wallet(test_wallet, "3000.00")
    token = upload(approver, merchant_account, HEADER + GOOD_ROWS).context["token"]
    response = approver.post(UPLOAD_URL, {"_submit": "1", "token": token}, follow=True)
    page = response.content.decode()
    assert "1 payout(s) accepted" in page and "2 rejected" in page
