from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from wallets.models import FeeSchedule, LedgerEntry, WalletStatus

pytestmark = pytest.mark.django_db


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


def test_wallet_admin_changes_status_but_not_balances(admin_client_logged_in, test_wallet) -> None:
    response = admin_client_logged_in.post(
        f"/admin/wallets/wallet/{test_wallet.pk}/change/",
        {"status": WalletStatus.INACTIVE, "available_balance": "999999.00"},
    )
    assert response.status_code == 302
    test_wallet.refresh_from_db()
    assert test_wallet.status == WalletStatus.INACTIVE
    assert test_wallet.available_balance == Decimal("0.00")


def test_wallet_admin_action_reactivates_wallets(admin_client_logged_in, test_wallet) -> None:
    test_wallet.status = WalletStatus.INACTIVE
    test_wallet.save()
    response = admin_client_logged_in.post(
        "/admin/wallets/wallet/",
        {"action": "activate_wallets", "_selected_action": [test_wallet.pk]},
    )
    assert response.status_code == 302
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
