from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from audit.models import AuditRecord
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import actions_offered, assert_admin_forbidden, client_for
from wallets.models import FeeSchedule, LedgerEntry, WalletStatus

pytestmark = pytest.mark.django_db

WALLETS = "/admin/wallets/wallet/"
REASON = "Merchant cleared by compliance, ticket 77"


@pytest.fixture
def admin_client_logged_in() -> Client:
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


def test_ledger_admin_lists_and_filters_but_cannot_add_change_or_delete(
    admin_client_logged_in, test_wallet, fund
) -> None:
    entry = fund(test_wallet, "100.00", reference="PRV-ADMIN").ledger_entry
    listing = admin_client_logged_in.get(
        "/admin/wallets/ledgerentry/",
        {"entry_type__exact": "funding", "wallet__mode__exact": "test", "q": "PRV-ADMIN"},
    )
    assert listing.status_code == 200
    assert b"PRV-ADMIN" in listing.content
    assert admin_client_logged_in.get("/admin/wallets/ledgerentry/add/").status_code == 403
    delete_url = f"/admin/wallets/ledgerentry/{entry.pk}/delete/"
    assert admin_client_logged_in.post(delete_url, {"post": "yes"}).status_code == 403
    detail = admin_client_logged_in.post(
        f"/admin/wallets/ledgerentry/{entry.pk}/change/", {"amount": "1.00"}
    )
    assert detail.status_code == 403
    assert LedgerEntry.objects.get(pk=entry.pk).amount == Decimal("100.00")


def test_the_wallet_change_page_changes_nothing(admin_client_logged_in, test_wallet) -> None:
    response = admin_client_logged_in.post(
        f"/admin/wallets/wallet/{test_wallet.pk}/change/",
        {"status": WalletStatus.INACTIVE, "available_balance": "999999.00"},
    )
    assert_admin_forbidden(response)
    test_wallet.refresh_from_db()
    assert test_wallet.status == WalletStatus.ACTIVE
    assert test_wallet.available_balance == Decimal("0.00")
    page = admin_client_logged_in.get(f"/admin/wallets/wallet/{test_wallet.pk}/change/")
    assert 'name="_save"' not in page.content.decode()


def test_wallet_admin_action_reactivates_wallets(admin_client_logged_in, test_wallet) -> None:
    test_wallet.status = WalletStatus.INACTIVE
    test_wallet.save()
    data = {"action": "activate_wallets", "_selected_action": [test_wallet.pk]}
    confirmation = admin_client_logged_in.post("/admin/wallets/wallet/", data)
    assert confirmation.status_code == 200
    test_wallet.refresh_from_db()
    assert test_wallet.status == WalletStatus.INACTIVE
    response = admin_client_logged_in.post(
        "/admin/wallets/wallet/", {**data, "confirm": "yes", "reason": REASON}
    )
    assert response.status_code == 302
    test_wallet.refresh_from_db()
    assert test_wallet.status == WalletStatus.ACTIVE


@pytest.mark.parametrize("role", ["finance_viewer", "finance_approver"])
def test_finance_staff_see_wallets_but_cannot_change_their_status(test_wallet, role) -> None:
    client = client_for(StaffUserFactory(roles=[role]))
    listing = client.get(WALLETS)
    assert listing.status_code == 200
    assert actions_offered(listing) == set()
    assert "Deactivate" not in listing.content.decode()
    for extra in ({}, {"confirm": "yes", "reason": REASON}):
        response = client.post(
            WALLETS,
            {"action": "deactivate_wallets", "_selected_action": [test_wallet.pk], **extra},
        )
        assert_admin_forbidden(response)
    test_wallet.refresh_from_db()
    assert test_wallet.status == WalletStatus.ACTIVE
    assert not AuditRecord.objects.exists()


def test_reactivation_needs_a_typed_reason(test_wallet) -> None:
    test_wallet.status = WalletStatus.INACTIVE
    test_wallet.save()
    client = client_for(StaffUserFactory(roles=["security_admin"]))
    data = {"action": "activate_wallets", "_selected_action": [test_wallet.pk], "confirm": "yes"}
    page = client.post(WALLETS, {**data, "reason": ""})
    assert page.status_code == 200
    assert "admin/backoffice/confirm_action.html" in [t.name for t in page.templates]
    assert "This field is required" in page.content.decode()
    test_wallet.refresh_from_db()
    assert test_wallet.status == WalletStatus.INACTIVE
    assert not AuditRecord.objects.exists()


def test_security_admin_deactivates_and_reactivates_with_audit(test_wallet) -> None:
    admin = StaffUserFactory(roles=["security_admin"])
    client = client_for(admin)
    assert actions_offered(client.get(WALLETS)) == {"activate_wallets", "deactivate_wallets"}
    for action, reason in (
        ("deactivate_wallets", "Fraud team asked to freeze payouts"),
        ("activate_wallets", "Fraud review closed, ticket 4411"),
    ):
        response = client.post(
            WALLETS,
            {
                "action": action,
                "_selected_action": [test_wallet.pk],
                "confirm": "yes",
                "reason": reason,
            },
        )
        assert response.status_code == 302
    records = list(AuditRecord.objects.order_by("id"))
    assert [(r.before, r.after, r.reason) for r in records] == [
        ({"status": "active"}, {"status": "inactive"}, "Fraud team asked to freeze payouts"),
        ({"status": "inactive"}, {"status": "active"}, "Fraud review closed, ticket 4411"),
    ]
    assert {(r.actor, r.action, r.object_id) for r in records} == {
        (admin, "wallets.wallet.status_set", str(test_wallet.pk))
    }
    test_wallet.refresh_from_db()
    assert test_wallet.status == WalletStatus.ACTIVE


def _schedule_form(tiers: list[tuple[str, str, str]]) -> dict[str, str]:
    data = {
        "name": "2031 pricing",
        "currency": "NGN",
        "effective_from_0": "2031-01-01",
        "effective_from_1": "00:00:00",
        "tiers-TOTAL_FORMS": str(len(tiers)),
        "tiers-INITIAL_FORMS": "0",
        "tiers-MIN_NUM_FORMS": "0",
        "tiers-MAX_NUM_FORMS": "1000",
    }
    for index, (low, high, fee) in enumerate(tiers):
        data[f"tiers-{index}-min_amount"] = low
        data[f"tiers-{index}-max_amount"] = high
        data[f"tiers-{index}-fee_amount"] = fee
    return data


def test_fee_schedule_admin_creates_a_contiguous_schedule(admin_client_logged_in) -> None:
    response = admin_client_logged_in.post(
        "/admin/wallets/feeschedule/add/",
        _schedule_form([("0.01", "1000.00", "5.00"), ("1000.01", "", "15.00")]),
    )
    assert response.status_code == 302
    schedule = FeeSchedule.objects.get(name="2031 pricing")
    assert schedule.tiers.count() == 2
    assert AuditRecord.objects.filter(
        action="wallets.feeschedule.add", object_id=str(schedule.pk)
    ).exists()
    assert AuditRecord.objects.filter(action="wallets.feetier.add").count() == 2


@pytest.mark.parametrize(
    "tiers",
    [
        [("0.01", "1000.00", "5.00"), ("1500.00", "", "15.00")],  # gap
        [("0.01", "1000.00", "5.00"), ("900.00", "", "15.00")],  # overlap
        [("0.01", "", "5.00"), ("1000.01", "", "15.00")],  # open tier not last
        [("10.00", "", "5.00")],  # does not start at 0.01
        [],
    ],
)
def test_fee_schedule_admin_rejects_inconsistent_tiers(admin_client_logged_in, tiers) -> None:
    response = admin_client_logged_in.post("/admin/wallets/feeschedule/add/", _schedule_form(tiers))
    assert response.status_code == 200
    assert not FeeSchedule.objects.filter(name="2031 pricing").exists()


def test_bank_admin_pages_render(admin_client_logged_in) -> None:
    assert admin_client_logged_in.get("/admin/wallets/bank/").status_code == 200
    assert admin_client_logged_in.get("/admin/wallets/feeschedule/").status_code == 200
    assert admin_client_logged_in.get("/admin/wallets/wallet/").status_code == 200
    assert admin_client_logged_in.get("/admin/wallets/fundingtransfer/").status_code == 200
