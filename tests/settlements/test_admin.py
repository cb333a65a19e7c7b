"""The settlements back office: read-only settlements with their transactions and shares, shares
with the approver's re-send action, the platform ledger and the platform balances page."""

from __future__ import annotations

import importlib
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils.html import escape

from merchants.models import Mode
from payouts.models import PayoutStatus
from settlements.models import PlatformAccount, Settlement, SettlementShare
from settlements.platform_ledger import collection_paid_post, platform_post
from settlements.services.platform import platform_wallet_get
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import act_records, actions_offered, assert_admin_forbidden, client_for
from tests.payouts.factories import PayoutFactory
from tests.settlements.factories_api import (
    SettlementFactory,
    SettlementShareFactory,
    settled_collection,
)
from tests.wallets.factories import WalletFactory
from wallets.services import wallet_fund

pytestmark = pytest.mark.django_db

SETTLEMENTS = "/admin/settlements/settlement/"
SHARES = "/admin/settlements/settlementshare/"
LEDGER = "/admin/settlements/platformledgerentry/"
BALANCES = f"{LEDGER}balances/"
FINANCE_ROLES = ["finance_viewer", "finance_operator", "finance_approver"]


def _has_resend_service() -> bool:
    try:
        services = importlib.import_module("settlements.services")
    except ModuleNotFoundError:
        return False
    return hasattr(services, "settlement_share_payout_resend")


@pytest.fixture
def settlement() -> Settlement:
    settlement = SettlementFactory(
        mode=Mode.LIVE, transaction_count=1, subaccount_shares=Decimal("1000.00")
    )
    settled_collection(settlement=settlement)
    wallet = WalletFactory(merchant=settlement.merchant, mode=Mode.LIVE)
    payout = PayoutFactory(wallet=wallet, status=PayoutStatus.FAILED)
    SettlementShareFactory(settlement=settlement, amount=Decimal("1000.00"), payout=payout)
    return settlement


def _viewer(role: str = "finance_viewer") -> User:
    return StaffUserFactory(roles=[role])


# --- pages finance staff read -------------------------------------------------------------------


@pytest.mark.parametrize("role", FINANCE_ROLES)
def test_finance_roles_read_every_page(role: str, settlement: Settlement) -> None:
    client = client_for(_viewer(role))
    share = settlement.shares.get()
    entry = platform_post(
        mode=Mode.LIVE,
        group="paid:TXN_ADMIN",
        postings={
            PlatformAccount.COLLECTED: Decimal("10.00"),
            PlatformAccount.FEES: Decimal("10.00"),
        },
    )[0]
    for url in (
        SETTLEMENTS,
        f"{SETTLEMENTS}{settlement.pk}/change/",
        SHARES,
        f"{SHARES}{share.pk}/change/",
        LEDGER,
        f"{LEDGER}{entry.pk}/change/",
        BALANCES,
    ):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("role", ["ops", "security_admin"])
def test_other_roles_get_the_admin_403_page(role: str, settlement: Settlement) -> None:
    client = client_for(_viewer(role))
    for url in (SETTLEMENTS, f"{SETTLEMENTS}{settlement.pk}/change/", SHARES, LEDGER, BALANCES):
        assert_admin_forbidden(client.get(url))


def test_the_settlement_page_links_its_transactions_shares_and_payouts(
    settlement: Settlement,
) -> None:
    client = client_for(_viewer())
    page = client.get(f"{SETTLEMENTS}{settlement.pk}/change/").content.decode()
    transactions_url = (
        f"/admin/collections_app/collectiontransaction/?settlement__id__exact={settlement.pk}"
    )
    assert f'href="{transactions_url}"' in page
    share = settlement.shares.select_related("payout", "subaccount").get()
    assert share.payout is not None
    assert f"/admin/payouts/payout/{share.payout.pk}/change/" in page
    assert share.payout.internal_reference in page
    assert share.subaccount.account_code in page
    assert "₦1,000.00" in page
    assert 'name="_save"' not in page  # read-only: no save button
    listed = client.get(transactions_url)
    assert listed.status_code == 200
    assert [row.settlement_id for row in listed.context["cl"].result_list] == [settlement.pk]


def test_nothing_is_added_changed_or_deleted_through_the_admin(settlement: Settlement) -> None:
    client = client_for(StaffUserFactory(is_superuser=True))
    assert_admin_forbidden(client.get(f"{SETTLEMENTS}add/"))
    changed = client.post(
        f"{SETTLEMENTS}{settlement.pk}/change/", {"net": "1.00", "settlement_id": "x"}
    )
    assert_admin_forbidden(changed)
    assert_admin_forbidden(client.post(f"{SETTLEMENTS}{settlement.pk}/delete/", {"post": "yes"}))
    stored = Settlement.objects.get(pk=settlement.pk)
    assert (stored.settlement_id, stored.net) == (settlement.settlement_id, settlement.net)


# --- the platform balances ------------------------------------------------------------------------


def test_the_balances_page_shows_each_bucket_per_mode_and_the_equation() -> None:
    merchant = WalletFactory(mode=Mode.LIVE).merchant
    collection_paid_post(
        mode=Mode.LIVE,
        merchant_id=merchant.pk,
        collection_id=1,
        reference="TXN_BALANCES",
        amount_paid=Decimal("7205.00"),
        fee=Decimal("205.00"),
        shares=Decimal("1000.00"),
    )
    response = client_for(_viewer()).get(BALANCES)
    assert response.status_code == 200
    page = response.content.decode()
    live = page.split('data-testid="platform-balances-live"')[1].split("</section>")[0]
    assert "₦7,205.00" in live  # collected
    assert "₦205.00" in live  # fees
    assert "₦6,000.00" in live  # owed to merchants
    assert "collected = fees + merchant credits + subaccount payouts + refunds + still owed" in page
    assert 'data-testid="platform-equation-holds"' in live
    test = page.split('data-testid="platform-balances-test"')[1].split("</section>")[0]
    assert 'data-testid="platform-equation-holds"' in test
    assert "₦7,205.00" not in test


def test_the_balances_page_says_when_the_equation_does_not_hold(monkeypatch) -> None:
    from settlements import admin as settlements_admin
    from settlements.platform_ledger import PlatformBalances

    broken = PlatformBalances(by_account={PlatformAccount.COLLECTED: Decimal("10.00")})
    monkeypatch.setattr(settlements_admin, "platform_balances", lambda mode: broken)
    page = client_for(_viewer()).get(BALANCES).content.decode()
    assert 'data-testid="platform-equation-broken"' in page
    assert "₦10.00" in page


def test_the_ledger_list_filters_by_mode_and_account() -> None:
    platform_post(
        mode=Mode.LIVE,
        group="paid:TXN_LIVE",
        postings={
            PlatformAccount.COLLECTED: Decimal("10.00"),
            PlatformAccount.FEES: Decimal("10.00"),
        },
    )
    platform_post(
        mode=Mode.TEST,
        group="paid:TXN_TEST",
        postings={
            PlatformAccount.COLLECTED: Decimal("5.00"),
            PlatformAccount.FEES: Decimal("5.00"),
        },
    )
    client = client_for(_viewer())
    response = client.get(LEDGER, {"mode__exact": "test", "account__exact": "fees"})
    assert response.status_code == 200
    assert [entry.group for entry in response.context["cl"].result_list] == ["paid:TXN_TEST"]


# --- re-sending a share's payout ------------------------------------------------------------------


def test_only_an_approver_is_offered_the_resend_action(settlement: Settlement) -> None:
    assert "resend_payout_selected" not in actions_offered(
        client_for(_viewer("finance_operator")).get(SHARES)
    )
    assert "resend_payout_selected" in actions_offered(
        client_for(_viewer("finance_approver")).get(SHARES)
    )


def test_a_viewer_posting_the_resend_action_anyway_gets_403_and_nothing_happens(
    settlement: Settlement,
) -> None:
    share = settlement.shares.get()
    response = client_for(_viewer()).post(
        SHARES,
        {
            "action": "resend_payout_selected",
            "_selected_action": [share.pk],
            "confirm": "yes",
            "reason": "The subaccount fixed its account",
        },
    )
    assert_admin_forbidden(response)
    assert not act_records().exists()
    assert SettlementShare.objects.get(pk=share.pk).payout_id == share.payout_id


def test_the_resend_action_asks_for_a_reason_first(settlement: Settlement) -> None:
    if not _has_resend_service():
        pytest.skip("settlements.services.settlement_share_payout_resend is not on this branch")
    share = settlement.shares.get()
    response = client_for(_viewer("finance_approver")).post(
        SHARES, {"action": "resend_payout_selected", "_selected_action": [share.pk]}
    )
    assert response.status_code == 200
    assert "Re-send settlement share payouts" in response.content.decode()
    assert not act_records().exists()


@pytest.mark.skipif(
    not _has_resend_service(),
    reason="settlements.services.settlement_share_payout_resend is not on this branch",
)
def test_an_approver_resends_a_failed_shares_payout_audited(
    settlement: Settlement, settings: Any
) -> None:
    # The live share is paid from the platform's live wallet, which holds the share as a
    # settlement leaves it; the live name enquiry is answered by the sandbox (a setting).
    settings.NAME_ENQUIRY_PROVIDERS = {
        **settings.NAME_ENQUIRY_PROVIDERS,
        "live": "wallets.providers.sandbox.SandboxNameEnquiryProvider",
    }
    platform_wallet = platform_wallet_get(mode=Mode.LIVE)
    wallet_fund(wallet_id=platform_wallet.pk, amount=Decimal("1000.00"), reference="SHARES-1")
    share = settlement.shares.get()
    failed = share.payout
    user = _viewer("finance_approver")
    response = client_for(user).post(
        SHARES,
        {
            "action": "resend_payout_selected",
            "_selected_action": [share.pk],
            "confirm": "yes",
            "reason": "The subaccount fixed its bank account",
        },
    )
    assert response.status_code == 302
    share.refresh_from_db()
    assert share.payout_id is not None and share.payout_id != failed.pk
    record = act_records().get(action="settlements.settlementshare.payout_resend")
    assert record.actor == user
    assert record.after["reason"] == "The subaccount fixed its bank account"


def test_without_the_engine_the_resend_action_says_it_is_unavailable(
    settlement: Settlement, monkeypatch
) -> None:
    from settlements import admin as settlements_admin

    monkeypatch.setattr(settlements_admin, "_share_payout_resend", lambda: None)
    share = settlement.shares.get()
    response = client_for(_viewer("finance_approver")).post(
        SHARES,
        {
            "action": "resend_payout_selected",
            "_selected_action": [share.pk],
            "confirm": "yes",
            "reason": "The subaccount fixed its account",
        },
        follow=True,
    )
    assert escape(settlements_admin.RESEND_UNAVAILABLE) in response.content.decode()
    assert not act_records().exists()
