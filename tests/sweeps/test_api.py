"""PUT/GET /api/v1/transactions/in/merchant-wallet/sweep and POST …/sweep/run: the settings in
the envelope, bad input named and refused with nothing changed, the mode from the key, one
merchant never seeing another's settings, and a sweep payout in the payout list."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from audit.models import AuditRecord
from merchants.models import Mode
from merchants.services import merchant_create
from payouts.models import Payout
from sweeps.models import SettlementAccount, Sweep, SweepSchedule
from tests.payouts.helpers import fund_wallet
from tests.sweeps.factories import SettlementAccountFactory, SweepScheduleFactory
from wallets.models import Wallet
from wallets.providers.sandbox import sandbox_account_name
from webhooks.models import Event, EventType

pytestmark = pytest.mark.django_db

SWEEP_URL = "/api/v1/transactions/in/merchant-wallet/sweep"
RUN_URL = "/api/v1/transactions/in/merchant-wallet/sweep/run"
PAYOUTS_URL = "/api/v1/transactions/in/merchant-wallet/payouts"
GOOD_ACCOUNT = "0123456789"


def body(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schedule": "daily",
        "time": "17:00",
        "amount_to_keep": "5000.00",
        "settlement_account": {"bank_code": "058", "account_number": GOOD_ACCOUNT},
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not ...}


def put(client: APIClient, data: dict[str, Any]) -> Any:
    return client.put(SWEEP_URL, data, format="json")


def test_put_sets_the_settings_and_get_answers_them(test_client: APIClient) -> None:
    response = put(test_client, body())

    assert response.status_code == 200
    data = response.json()["data"]
    assert data["schedule"] == "daily"
    assert data["time"] == "17:00"
    assert data["weekday"] is None
    assert data["amount_to_keep"] == "5000.00"
    account = data["settlement_account"]
    assert account["status"] == "pending"
    assert account["account_number"] == GOOD_ACCOUNT
    assert account["account_name"] == sandbox_account_name(GOOD_ACCOUNT)
    assert account["bank_name"] == "Guaranty Trust Bank"
    assert data["pending_account"] is None
    assert data["next_sweep_at"] is not None
    assert test_client.get(SWEEP_URL).json()["data"] == data
    assert Event.objects.filter(event_type=EventType.SETTLEMENT_ACCOUNT_CHANGED).count() == 1
    record = AuditRecord.objects.get(action="sweeps.sweep_settings_set")
    assert record.actor_label.startswith("merchant ")
    assert "sk_test_" in record.actor_label


def test_a_new_account_shows_as_pending_beside_the_one_in_effect(
    merchant_account, test_client: APIClient
) -> None:
    SettlementAccountFactory(
        merchant=merchant_account.merchant,
        account_number="0987654321",
        effective_at=timezone.now() - timedelta(days=2),
    )

    data = put(test_client, body()).json()["data"]

    assert data["settlement_account"]["account_number"] == "0987654321"
    assert data["settlement_account"]["status"] == "active"
    assert data["pending_account"]["account_number"] == GOOD_ACCOUNT
    assert data["pending_account"]["status"] == "pending"


def test_the_account_may_be_left_out_once_set(test_client: APIClient) -> None:
    put(test_client, body())

    response = put(
        test_client,
        body(schedule="weekly", weekday="friday", time="09:30", settlement_account=...),
    )

    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["schedule"], data["weekday"], data["time"]) == ("weekly", "friday", "09:30")
    assert data["settlement_account"]["account_number"] == GOOD_ACCOUNT
    assert SettlementAccount.objects.count() == 1


def test_a_manual_schedule_has_no_time_weekday_or_next_sweep(test_client: APIClient) -> None:
    response = put(test_client, body(schedule="manual", time=...))

    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["schedule"], data["time"], data["weekday"]) == ("manual", None, None)
    assert data["next_sweep_at"] is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"time": "9:00"}, "time: must be HH:MM"),
        ({"time": "24:00"}, "time: must be HH:MM"),
        ({"time": 900}, "time: must be HH:MM"),
        ({"time": ...}, "time: required for a daily schedule"),
        ({"schedule": "weekly"}, "weekday: required for a weekly schedule"),
        ({"schedule": "weekly", "weekday": "funday"}, "weekday: must be one of"),
        ({"weekday": "monday"}, "weekday: only for a weekly schedule"),
        ({"schedule": "manual"}, "time: not used by a manual schedule"),
        ({"schedule": "hourly"}, "schedule: must be one of daily, weekly, manual"),
        ({"schedule": ...}, "schedule: This field is required."),
        ({"amount_to_keep": "-1.00"}, "amount_to_keep: must be a positive decimal string"),
        ({"amount_to_keep": 100}, "amount_to_keep: must be a positive decimal string"),
        ({"amount_to_keep": "1.005"}, "amount_to_keep: must be a positive decimal string"),
        ({"amount_to_keep": "1e3"}, "amount_to_keep: must be a positive decimal string"),
        ({"settlement_account": ...}, "settlement_account: required until"),
        (
            {"settlement_account": {"bank_code": "058", "account_number": "12345"}},
            "settlement_account.account_number: must be exactly 10 digits",
        ),
        (
            {"settlement_account": {"bank_code": "058"}},
            "settlement_account.account_number: This field is required.",
        ),
        ({"interval": "daily"}, "interval: is not an accepted field"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_nothing_changes(
    test_client: APIClient, overrides: dict[str, Any], message: str
) -> None:
    response = put(test_client, body(**overrides))

    assert response.status_code == 400
    assert message in response.json()["message"]
    assert response.json()["status"] is False
    assert not SweepSchedule.objects.exists()
    assert not SettlementAccount.objects.exists()
    assert not Event.objects.exists()


def test_a_refused_change_leaves_the_settings_as_they_were(test_client: APIClient) -> None:
    put(test_client, body())
    before = test_client.get(SWEEP_URL).json()["data"]

    response = put(test_client, body(schedule="weekly", amount_to_keep="1.00"))

    assert response.status_code == 400
    assert test_client.get(SWEEP_URL).json()["data"] == before


@pytest.mark.parametrize(
    ("account", "bank_code", "status"),
    [("0000000000", "058", 400), ("0000000009", "058", 503), (GOOD_ACCOUNT, "999", 400)],
)
def test_name_enquiry_failures_answer_as_the_payout_create_does(
    test_client: APIClient, funded_wallet: Wallet, account: str, bank_code: str, status: int
) -> None:
    response = put(
        test_client,
        body(settlement_account={"bank_code": bank_code, "account_number": account}),
    )
    payout = test_client.post(
        PAYOUTS_URL,
        {
            "account_number": account,
            "bank_code": bank_code,
            "amount": "100.00",
            "idempotency_key": "compare-1",
        },
        format="json",
    )

    assert (response.status_code, payout.status_code) == (status, status)
    assert response.json()["message"] == payout.json()["message"]
    assert not SweepSchedule.objects.exists()


def test_get_before_the_settings_are_set_is_not_found(test_client: APIClient) -> None:
    response = test_client.get(SWEEP_URL)

    assert response.status_code == 404
    assert response.json()["message"] == "Sweep settings not found"


def test_the_live_key_sets_the_live_settings_only(
    test_client: APIClient, live_client: APIClient, live_name_enquiry_sandbox
) -> None:
    response = put(live_client, body(amount_to_keep="1.00"))

    assert response.status_code == 200
    assert test_client.get(SWEEP_URL).status_code == 404
    assert SettlementAccount.objects.get().mode == Mode.LIVE
    assert SweepSchedule.objects.get().wallet.mode == Mode.LIVE
    put(test_client, body(amount_to_keep="2.00"))
    assert live_client.get(SWEEP_URL).json()["data"]["amount_to_keep"] == "1.00"
    assert test_client.get(SWEEP_URL).json()["data"]["amount_to_keep"] == "2.00"


def test_another_merchant_never_sees_the_settings(test_client: APIClient, client_for: Any) -> None:
    put(test_client, body())
    other = merchant_create(name="Bola Foods", email="bola@example.com")
    other_client = client_for(other.test_key.plaintext)

    assert other_client.get(SWEEP_URL).status_code == 404
    assert other_client.post(RUN_URL).status_code == 404


# --- Sweep now ---------------------------------------------------------------------------------


@pytest.fixture
def sweep_ready(merchant_account, test_wallet: Wallet) -> Wallet:
    """Manual schedule keeping NGN 1,000, an account in effect, NGN 100,000 available."""
    SettlementAccountFactory(merchant=merchant_account.merchant, account_number=GOOD_ACCOUNT)
    SweepScheduleFactory(wallet=test_wallet, schedule="manual", time=None, amount_to_keep="1000")
    return fund_wallet(test_wallet, "100000.00")


def test_sweep_now_pays_once_a_day(test_client: APIClient, sweep_ready: Wallet) -> None:
    first = test_client.post(RUN_URL)
    second = test_client.post(RUN_URL)

    assert first.status_code == 202
    data = first.json()["data"]
    assert data["duplicate"] is False
    assert data["sweep"]["amount"] == "98950.00"
    assert data["sweep"]["trigger"] == "manual"
    assert data["sweep"]["payout"]["total_debit_amount"] == "99000.00"
    assert second.status_code == 200
    assert second.json()["data"]["duplicate"] is True
    assert second.json()["data"]["sweep"]["id"] == data["sweep"]["id"]
    assert Payout.objects.count() == 1
    sweep_ready.refresh_from_db()
    assert str(sweep_ready.available_balance) == "1000.00"


def test_a_sweep_payout_is_in_the_payout_list_as_a_sweep(
    test_client: APIClient, sweep_ready: Wallet
) -> None:
    test_client.post(RUN_URL)

    [item] = test_client.get(PAYOUTS_URL).json()["data"]["items"]

    assert item["narration"] == "Sweep to settlement account"
    assert item["idempotency_key"].startswith(f"sweep-{sweep_ready.pk}-")
    assert item["beneficiary"]["account_number"] == GOOD_ACCOUNT


def test_sweep_now_with_nothing_above_the_amount_kept_is_refused(
    test_client: APIClient, sweep_ready: Wallet
) -> None:
    SweepSchedule.objects.update(amount_to_keep="99995.00")

    response = test_client.post(RUN_URL)

    assert response.status_code == 400
    assert response.json()["message"].startswith("Nothing to sweep")
    assert not Sweep.objects.exists()


def test_sweep_now_before_settings_is_not_found(test_client: APIClient) -> None:
    response = test_client.post(RUN_URL)

    assert response.status_code == 404


def test_sweep_now_with_the_live_key_sweeps_the_live_wallet_only(
    merchant_account,
    live_client: APIClient,
    live_wallet: Wallet,
    sweep_ready: Wallet,
    live_name_enquiry_sandbox,
) -> None:
    response = live_client.post(RUN_URL)

    assert response.status_code == 404  # the live wallet has no sweep settings
    assert not Payout.objects.exists()
