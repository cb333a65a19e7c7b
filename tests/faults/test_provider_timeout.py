"""The provider times out after the transfer may have been sent.

The fake Paystack records the transfer, then answers only after our read timeout: we cannot
know whether money moved. The payout must become ``ambiguous`` with its funds still reserved
(never ``failed``, never sent again); a later requery settles it from the provider's record,
and the provider has seen exactly one transfer.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from payouts.models import Payout, PayoutStatus
from payouts.services import payout_dispatch
from tests.faults.conftest import (
    LIVE_MODE,
    PAYOUTS_PATH,
    FakePaystack,
    funded_wallet,
    payout_body,
)
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_totals

TIMEOUT_SECONDS = 1.0


@pytest.fixture
def timing_out_provider(settings: Any, live_paystack_settings: FakePaystack) -> FakePaystack:
    settings.PAYOUT_PROVIDER_TIMEOUT_SECONDS = TIMEOUT_SECONDS
    settings.PAYSTACK_TIMEOUT_SECONDS = TIMEOUT_SECONDS
    live_paystack_settings.stall_first_transfer = TIMEOUT_SECONDS + 1.5
    return live_paystack_settings


@pytest.mark.django_db
def test_timeout_after_sending_leaves_the_payout_ambiguous_until_a_requery_settles_it(
    merchant_account, live_client, timing_out_provider: FakePaystack
) -> None:
    wallet = funded_wallet(merchant_account, LIVE_MODE, "50000.00")
    response = live_client.post(PAYOUTS_PATH, payout_body("timeout-1"), format="json")
    assert response.status_code == 202, response.content
    payout = Payout.objects.get(pk=response.json()["data"]["payout"]["id"])
    total = payout.total_debit_amount
    assert payout.provider_name == "paystack"

    dispatched = payout_dispatch(payout_id=payout.pk)

    assert dispatched is not None
    assert dispatched.status == PayoutStatus.AMBIGUOUS
    assert dispatched.next_requery_at is not None
    assert timing_out_provider.posts_to_transfer(payout.internal_reference) == 1
    wallet.refresh_from_db()
    assert wallet.reserved_balance == total
    assert wallet.available_balance == Decimal("50000.00") - total
    assert not LedgerEntry.objects.filter(
        payout_id=payout.pk,
        entry_type__in=[LedgerEntryType.PAYOUT_DEBIT, LedgerEntryType.PAYOUT_REVERSAL],
    ).exists()
    shown = live_client.get(f"{PAYOUTS_PATH}/{payout.pk}").json()["data"]
    assert shown["status"] == "ambiguous"

    # A second dispatch (a duplicate task) must not send the transfer again.
    assert payout_dispatch(payout_id=payout.pk) is None
    assert timing_out_provider.posts_to_transfer(payout.internal_reference) == 1

    requeried = live_client.post(f"{PAYOUTS_PATH}/{payout.pk}/requery")

    assert requeried.status_code == 200, requeried.content
    assert requeried.json()["data"]["status"] == "successful"
    assert timing_out_provider.verifies(payout.internal_reference) >= 1
    assert timing_out_provider.posts_to_transfer() == 1
    debits = LedgerEntry.objects.filter(
        payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
    )
    assert debits.count() == 1
    wallet.refresh_from_db()
    assert wallet.reserved_balance == Decimal("0.00")
    assert wallet.available_balance == Decimal("50000.00") - total
    totals = wallet_totals(wallet=wallet)
    assert totals.balanced
    assert live_client.post(f"{PAYOUTS_PATH}/{payout.pk}/requery").status_code == 409
