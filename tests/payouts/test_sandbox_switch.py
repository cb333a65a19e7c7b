"""The test-mode sandbox provider switch (``POST /api/v1/test-helpers/payout-providers/{name}``)
and the ``attempts`` extension field: a merchant that switches ``sandbox`` down sees its payout
succeed on ``sandbox-b`` with two attempts; no other merchant sees the switch; live keys get 404."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from merchants.models import Mode
from merchants.services import MerchantCreated, merchant_create
from payouts.models import PayoutAttempt, PayoutStatus, SandboxProviderSwitch
from payouts.providers import sandbox as sandbox_module
from payouts.providers.base import TransferOutcome
from payouts.providers.sandbox import SandboxProvider
from payouts.services import payout_create, payout_dispatch, payout_requery
from tests.payouts.helpers import (
    GOOD_ACCOUNT,
    GTB_CODE,
    assert_wallet_balanced,
    detail_url,
    fund_wallet,
    reload,
)
from wallets.models import Wallet
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db

SWITCH_URL = "/api/v1/test-helpers/payout-providers"


@pytest.fixture
def failover(settings: Any) -> None:
    settings.PAYOUT_FAILOVER_PROVIDERS_BY_MODE = {"test": ["sandbox-b"], "live": []}


def _switch(client: APIClient, name: str, state: Any) -> Any:
    return client.post(f"{SWITCH_URL}/{name}", {"state": state}, format="json")


def test_switching_sandbox_down_answers_every_providers_state(test_client: APIClient) -> None:
    response = _switch(test_client, "sandbox", "down")

    assert response.status_code == 200
    assert response.json()["data"] == {
        "provider": "sandbox",
        "state": "down",
        "providers": {"sandbox": "down", "sandbox-b": "up"},
    }


def test_a_live_key_gets_404_and_switches_nothing(live_client: APIClient) -> None:
    response = _switch(live_client, "sandbox", "down")

    assert response.status_code == 404
    assert not SandboxProviderSwitch.objects.exists()


@pytest.mark.parametrize("name", ["paystack", "nobody"])
def test_a_provider_that_is_not_a_sandbox_is_404(test_client: APIClient, name: str) -> None:
    response = _switch(test_client, name, "down")
    assert response.status_code == 404
    assert response.json()["message"] == "Sandbox payout provider not found"


@pytest.mark.parametrize("state", ["sideways", 1, None])
def test_an_unknown_state_is_a_400_naming_it(test_client: APIClient, state: Any) -> None:
    response = _switch(test_client, "sandbox", state)
    assert response.status_code == 400
    assert response.json()["message"].startswith("state")
    assert not SandboxProviderSwitch.objects.exists()


def test_with_sandbox_down_a_payout_succeeds_on_sandbox_b_and_shows_both_attempts(
    test_client: APIClient, funded_wallet: Wallet, payload: Callable[..., Any], failover: None
) -> None:
    _switch(test_client, "sandbox", "down")
    created = test_client.post(
        "/api/v1/transactions/in/merchant-wallet/payouts", payload(), format="json"
    )
    payout_id = created.json()["data"]["payout"]["id"]
    assert "attempts" not in created.json()["data"]["payout"]

    payout_dispatch(payout_id=payout_id)

    data = test_client.get(detail_url(payout_id)).json()["data"]
    assert data["status"] == "successful"
    assert [(a["number"], a["provider"], a["status"]) for a in data["attempts"]] == [
        (1, "sandbox", "not_sent"),
        (2, "sandbox-b", "successful"),
    ]
    assert all(a["created_at"] and a["completed_at"] for a in data["attempts"])
    assert_wallet_balanced(funded_wallet)


def test_one_merchants_switch_never_touches_another_merchants_payouts(
    test_client: APIClient, failover: None
) -> None:
    _switch(test_client, "sandbox", "down")
    other = merchant_create(name="Other Stores", email="other@example.com").merchant
    fund_wallet(wallet_get(merchant=other, mode=Mode.TEST), "5000.00")
    payout = payout_create(
        merchant=other,
        mode=Mode.TEST,
        account_number=GOOD_ACCOUNT,
        bank_code=GTB_CODE,
        amount=Decimal("100.00"),
        idempotency_key="other-1",
    ).payout

    payout_dispatch(payout_id=payout.pk)

    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert list(PayoutAttempt.objects.filter(payout=payout).values_list("provider_name")) == [
        ("sandbox",)
    ]


def test_a_down_sandbox_cannot_be_asked_so_requery_stays_ambiguous(
    test_client: APIClient, funded_wallet: Wallet, create_payout: Callable[..., Any]
) -> None:
    payout = create_payout(account_number="1000000002").payout  # ambiguous, then successful
    payout_dispatch(payout_id=payout.pk)
    _switch(test_client, "sandbox", "down")

    assert payout_requery(payout=reload(payout)).status == PayoutStatus.AMBIGUOUS

    _switch(test_client, "sandbox", "up")
    assert payout_requery(payout=reload(payout)).status == PayoutStatus.SUCCESSFUL


def test_slow_answers_late_but_as_usual(
    merchant_account: MerchantCreated,
    funded_wallet: Wallet,
    create_payout: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    test_client: APIClient,
) -> None:
    settings.PAYOUT_SANDBOX_SLOW_SECONDS = 4.0
    slept: list[float] = []
    monkeypatch.setattr(sandbox_module.time, "sleep", slept.append)
    _switch(test_client, "sandbox", "slow")
    payout = create_payout().payout

    payout_dispatch(payout_id=payout.pk)

    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert slept == [4.0]


def test_a_direct_call_without_an_attempt_is_up() -> None:
    from payouts.providers.base import TransferRequest

    request = TransferRequest(
        reference="po_no_attempt",
        account_number=GOOD_ACCOUNT,
        account_name="ADA",
        bank_code=GTB_CODE,
        amount=Decimal("10.00"),
        currency="NGN",
        narration=None,
    )
    assert SandboxProvider().initiate_transfer(request).outcome == TransferOutcome.SUCCESSFUL
