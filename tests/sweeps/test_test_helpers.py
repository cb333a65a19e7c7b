"""POST /api/v1/test-helpers/sweep/settlement-account/activate: a pending test settlement
account takes effect now (audited), a sweep then pays it; live keys are refused and live
accounts always wait out their cooling-off period."""

from __future__ import annotations

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from audit.models import AuditRecord
from merchants.models import Mode
from payouts.models import Payout
from sweeps.models import SettlementAccount
from tests.payouts.helpers import fund_wallet
from wallets.models import Wallet

pytestmark = pytest.mark.django_db

SWEEP_URL = "/api/v1/transactions/in/merchant-wallet/sweep"
RUN_URL = "/api/v1/transactions/in/merchant-wallet/sweep/run"
ACTIVATE_URL = "/api/v1/test-helpers/sweep/settlement-account/activate"
SETTINGS = {
    "schedule": "manual",
    "amount_to_keep": "5000.00",
    "settlement_account": {"bank_code": "058", "account_number": "0123456789"},
}


def test_a_pending_test_account_takes_effect_and_a_sweep_pays_it(
    merchant_account, test_client: APIClient
) -> None:
    assert test_client.put(SWEEP_URL, SETTINGS, format="json").status_code == 200
    assert test_client.post(RUN_URL).status_code == 400  # still cooling off

    response = test_client.post(ACTIVATE_URL)

    assert response.status_code == 200, response.json()
    assert response.json()["data"]["settlement_account"]["status"] == "active"
    assert AuditRecord.objects.filter(action="sweeps.settlement_account_cooling_off_end").exists()
    wallet = Wallet.objects.get(merchant=merchant_account.merchant, mode=Mode.TEST)
    fund_wallet(wallet, Decimal("20000.00"))
    swept = test_client.post(RUN_URL)
    assert swept.status_code == 202, swept.json()
    payout = Payout.objects.get(wallet=wallet)
    assert payout.account_number == "0123456789"


def test_without_a_pending_account_nothing_changes(test_client: APIClient) -> None:
    response = test_client.post(ACTIVATE_URL)

    assert response.status_code == 400
    assert response.json()["message"] == "No test settlement account is in its cooling-off period"


def test_a_live_key_is_refused_and_the_live_account_keeps_waiting(
    live_client: APIClient, live_name_enquiry_sandbox: None
) -> None:
    assert live_client.put(SWEEP_URL, SETTINGS, format="json").status_code == 200
    account = SettlementAccount.objects.get(mode=Mode.LIVE)

    response = live_client.post(ACTIVATE_URL)

    assert response.status_code == 403
    assert response.json()["status"] is False
    assert SettlementAccount.objects.get(pk=account.pk).effective_at == account.effective_at
