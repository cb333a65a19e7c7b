"""Back office: filters, search, ledger entries on the change page, CSV export, requery action
and manual resolution of ambiguous payouts (with a reason, audited, permission-gated)."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.utils import timezone

from merchants.models import Mode
from merchants.services import merchant_create
from payouts.models import Payout, PayoutResolution, PayoutStatus
from payouts.services import payout_dispatch
from tests.payouts.factories import PayoutFactory
from tests.payouts.helpers import assert_wallet_balanced, reload
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/payouts/payout/"


def change_url(payout: Payout) -> str:
    return f"{CHANGELIST}{payout.pk}/change/"


def resolve_url(payout: Payout) -> str:
    return f"{CHANGELIST}{payout.pk}/resolve/"


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
    assert "1010.00" in page
    assert "sandbox.initiate_transfer" in page
    assert 'name="_save"' not in page
    assert "Resolve this payout" in page


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
    rows = list(csv.reader(io.StringIO(response.content.decode())))
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


def test_resolve_action_leads_to_the_form(admin_client, ambiguous) -> None:
    response = admin_client.post(
        CHANGELIST, {"action": "resolve_selected", "_selected_action": [ambiguous.pk]}
    )
    assert response.status_code == 302
    assert response["Location"] == resolve_url(ambiguous)
    form = admin_client.get(resolve_url(ambiguous))
    assert form.status_code == 200
    assert "Resolve payout" in form.content.decode()


def test_resolve_action_needs_exactly_one_ambiguous(admin_client, funded_wallet, create_payout):
    payout = create_payout().payout
    response = admin_client.post(
        CHANGELIST, {"action": "resolve_selected", "_selected_action": [payout.pk]}, follow=True
    )
    assert "Select exactly one ambiguous payout" in response.content.decode()


def test_resolve_without_reason_changes_nothing(admin_client, ambiguous) -> None:
    response = admin_client.post(resolve_url(ambiguous), {"to_status": "successful", "reason": ""})
    assert response.status_code == 200
    assert "This field is required" in response.content.decode()
    assert reload(ambiguous).status == PayoutStatus.AMBIGUOUS
    assert not PayoutResolution.objects.exists()


def test_resolve_to_successful(admin_client, superuser, funded_wallet, ambiguous) -> None:
    response = admin_client.post(
        resolve_url(ambiguous),
        {"to_status": "successful", "reason": "Paystack support confirmed credit, ticket 991"},
    )
    assert response.status_code == 302
    payout = reload(ambiguous)
    assert payout.status == PayoutStatus.SUCCESSFUL
    resolution = PayoutResolution.objects.get(payout=payout)
    assert resolution.resolved_by == superuser
    assert (resolution.from_status, resolution.to_status) == ("ambiguous", "successful")
    assert resolution.reason == "Paystack support confirmed credit, ticket 991"
    assert LedgerEntry.objects.filter(
        payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
    ).exists()
    assert_wallet_balanced(funded_wallet)
    page = admin_client.get(change_url(payout)).content.decode()
    assert "Paystack support confirmed credit" in page


def test_resolve_to_failed_releases(admin_client, funded_wallet, ambiguous) -> None:
    admin_client.post(
        resolve_url(ambiguous),
        {"to_status": "failed", "reason": "Beneficiary bank statement shows no credit"},
    )
    assert reload(ambiguous).status == PayoutStatus.FAILED
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == 0
    assert_wallet_balanced(funded_wallet)


def test_resolve_of_non_ambiguous_is_refused(admin_client, funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    response = admin_client.post(
        resolve_url(payout), {"to_status": "failed", "reason": "A long enough reason"}
    )
    assert response.status_code == 302
    assert reload(payout).status == PayoutStatus.RESERVED


def test_resolve_needs_the_permission(ambiguous) -> None:
    viewer = User.objects.create_user("clerk", password="pw-clerk-12345", is_staff=True)
    viewer.user_permissions.add(
        Permission.objects.get(codename="view_payout"),
        Permission.objects.get(codename="change_payout"),
    )
    client = Client()
    client.force_login(viewer)
    assert client.get(change_url(ambiguous)).status_code == 200
    response = client.post(
        resolve_url(ambiguous), {"to_status": "successful", "reason": "A long enough reason"}
    )
    assert response.status_code == 403
    assert reload(ambiguous).status == PayoutStatus.AMBIGUOUS


def test_resolution_audit_log_is_read_only(admin_client, superuser, ambiguous) -> None:
    admin_client.post(
        resolve_url(ambiguous), {"to_status": "successful", "reason": "Confirmed by phone call"}
    )
    resolution = PayoutResolution.objects.get()
    assert admin_client.get("/admin/payouts/payoutresolution/").status_code == 200
    assert admin_client.get("/admin/payouts/payoutresolution/add/").status_code == 403
    delete = f"/admin/payouts/payoutresolution/{resolution.pk}/delete/"
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert PayoutResolution.objects.count() == 1
