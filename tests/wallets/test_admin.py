from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from audit.models import AuditRecord
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import act_records, actions_offered, assert_admin_forbidden, client_for
from wallets.models import FeeSchedule, FundingTransfer, LedgerEntry, WalletStatus

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
    assert not act_records().exists()


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
    assert not act_records().exists()


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
    records = list(act_records().order_by("id"))
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


# --- The lists at 1400 px (the browser check is tests/payouts/test_admin_browser.py) -----------


def test_the_wallet_list_shows_available_and_reserved_in_naira(
    admin_client_logged_in, test_wallet, fund
) -> None:
    fund(test_wallet, "1234567.89")
    page = admin_client_logged_in.get(WALLETS).content.decode()
    assert '<span class="money">₦1,234,567.89</span>' in page  # available
    assert '<span class="money">₦0.00</span>' in page  # reserved
    assert '<span class="status-badge status-active">Active</span>' in page
    assert f'{test_wallet.static_account_number} <span class="quiet">·' in page


def test_the_ledger_list_shows_balances_after_in_naira_and_lagos_times(
    admin_client_logged_in, test_wallet, fund
) -> None:
    entry = fund(test_wallet, "2500000.00", reference="PRV-LIST").ledger_entry
    response = admin_client_logged_in.get("/admin/wallets/ledgerentry/")
    headers = [header["text"] for header in response.context["result_headers"]]
    assert headers == [
        "created",
        "wallet",
        "entry type",
        "amount",
        "fee",
        "available Δ",
        "available after",
        "reserved after",
        "reference",
    ]
    page = response.content.decode()
    assert page.count('<span class="money">₦2,500,000.00</span>') == 3  # amount, Δ, after
    local = timezone.localtime(entry.created_at)
    assert f"{local:%Y-%m-%d}<br>{local:%H:%M} +0100" in page
    assert 'Ade Stores</span> <span class="mode-badge">test</span>' in page


def test_the_ledger_and_funding_lists_filter_by_lagos_day(
    admin_client_logged_in, test_wallet, fund, monkeypatch
) -> None:
    # Ledger entries are immutable: the funding is made "at" 00:30 in Lagos on 23 November
    # 2026, which is 23:30 UTC on the 22nd.
    with monkeypatch.context() as patch:
        patch.setattr(timezone, "now", lambda: datetime(2026, 11, 22, 23, 30, tzinfo=UTC))
        funded = fund(test_wallet, "100.00", reference="PRV-MIDNIGHT")
    assert funded.ledger_entry.created_at == datetime(2026, 11, 22, 23, 30, tzinfo=UTC)
    assert FundingTransfer.objects.get(provider_reference="PRV-MIDNIGHT").created_at == (
        funded.ledger_entry.created_at
    )
    for url in ("/admin/wallets/ledgerentry/", "/admin/wallets/fundingtransfer/"):
        day = {"created_at__local_from": "2026-11-23", "created_at__local_to": "2026-11-23"}
        assert "PRV-MIDNIGHT" in admin_client_logged_in.get(url, day).content.decode()
        day_before = {"created_at__local_to": "2026-11-22"}
        assert "PRV-MIDNIGHT" not in admin_client_logged_in.get(url, day_before).content.decode()


def test_the_funding_list_shows_amounts_in_naira(admin_client_logged_in, test_wallet, fund):
    fund(test_wallet, "98765.40", reference="PRV-NAIRA")
    page = admin_client_logged_in.get("/admin/wallets/fundingtransfer/").content.decode()
    assert '<span class="money">₦98,765.40</span>' in page
    assert "PRV-NAIRA" in page


def test_the_fee_schedule_list_spells_out_the_tiers_in_naira(admin_client_logged_in) -> None:
    admin_client_logged_in.post(
        "/admin/wallets/feeschedule/add/",
        _schedule_form([("0.01", "5000.00", "10.00"), ("5000.01", "", "26.88")]),
    )
    page = admin_client_logged_in.get("/admin/wallets/feeschedule/").content.decode()
    assert "₦0.01 – ₦5,000.00: ₦10.00<br>₦5,000.01 and above: ₦26.88" in page


def test_the_security_admin_may_neither_read_nor_export_a_statement(test_wallet) -> None:
    """The security-admin role manages merchants, keys and wallet status, nothing financial:
    a wallet's settlement statement (page and CSV) is refused and nothing is audited."""
    security_admin = client_for(StaffUserFactory(roles=["security_admin"]))
    url = f"{WALLETS}{test_wallet.pk}/statement/"
    audited = AuditRecord.objects.count()

    assert_admin_forbidden(security_admin.get(url))
    assert_admin_forbidden(
        security_admin.post(url, {"from_date": "2026-01-01", "to_date": "2026-01-02"})
    )
    change_page = security_admin.get(f"{WALLETS}{test_wallet.pk}/change/")
    assert change_page.status_code == 200
    assert url.encode() not in change_page.content
    assert AuditRecord.objects.count() == audited


@pytest.mark.parametrize("role", ["finance_viewer", "finance_operator", "finance_approver"])
def test_finance_staff_read_and_export_a_statement(test_wallet, role) -> None:
    finance = client_for(StaffUserFactory(roles=[role]))
    url = f"{WALLETS}{test_wallet.pk}/statement/"

    assert finance.get(url).status_code == 200
    export = finance.post(url, {"from_date": "2026-01-01", "to_date": "2026-01-02"})
    assert export.status_code == 200
    assert export["Content-Type"].startswith("text/csv")
    assert AuditRecord.objects.filter(action="wallets.wallet.statement_export").exists()
