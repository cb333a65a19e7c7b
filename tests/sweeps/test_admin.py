"""The read-only sweeps back office: settlement accounts masked, schedules, sweeps linking to
their payouts."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model

from merchants.models import Mode
from merchants.services import MerchantCreated
from sweeps.services import sweep_run_now
from tests.audit.helpers import assert_admin_forbidden, client_for
from tests.payouts.helpers import fund_wallet
from tests.sweeps.factories import SettlementAccountFactory, SweepScheduleFactory
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db

ADMIN = "/admin/sweeps"
NOW = datetime(2026, 11, 23, 11, 0, tzinfo=ZoneInfo("Africa/Lagos"))


@pytest.fixture
def superuser_client():
    return client_for(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))


@pytest.fixture
def swept(merchant_account: MerchantCreated):
    wallet = fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "2000")
    account = SettlementAccountFactory(
        merchant=merchant_account.merchant,
        account_number="0123456789",
        effective_at=NOW - timedelta(days=1),
    )
    SweepScheduleFactory(wallet=wallet)
    return account, sweep_run_now(merchant=merchant_account.merchant, mode=Mode.TEST, now=NOW)


def test_the_account_list_and_page_show_the_number_masked(superuser_client, swept) -> None:
    account, _made = swept
    listing = superuser_client.get(f"{ADMIN}/settlementaccount/").content.decode()
    page = superuser_client.get(f"{ADMIN}/settlementaccount/{account.pk}/change/")

    assert "******6789" in listing and "0123456789" not in listing
    assert page.status_code == 200
    assert "******6789" in page.content.decode()
    assert "0123456789" not in page.content.decode()


def test_the_sweep_list_links_to_its_payout(superuser_client, swept) -> None:
    _account, made = swept
    listing = superuser_client.get(f"{ADMIN}/sweep/").content.decode()

    assert f"/admin/payouts/payout/{made.sweep.payout_id}/change/" in listing
    assert made.sweep.payout.internal_reference in listing
    assert "0123456789" not in listing


def test_the_schedule_list_is_shown(superuser_client, swept) -> None:
    listing = superuser_client.get(f"{ADMIN}/sweepschedule/")

    assert listing.status_code == 200
    assert "daily" in listing.content.decode().lower()


def test_nothing_is_added_changed_or_deleted(superuser_client, swept) -> None:
    account, made = swept
    assert_admin_forbidden(superuser_client.get(f"{ADMIN}/settlementaccount/add/"))
    assert_admin_forbidden(superuser_client.get(f"{ADMIN}/sweep/{made.sweep.pk}/delete/"))
    assert_admin_forbidden(
        superuser_client.post(
            f"{ADMIN}/settlementaccount/{account.pk}/change/", {"account_name": "THIEF"}
        )
    )
