"""Low-balance alerts: ``wallet.balance_low`` once per downward crossing of the merchant's
threshold by the available balance, re-armed when the balance is back at or above it; a new
threshold the balance is already below alerts at once. Recorded in the transaction that moves
the balance (``wallets.signals.wallet_balance_low`` → ``webhooks.receivers``)."""

from __future__ import annotations

import json
from decimal import Decimal
from itertools import count
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from merchants.models import Mode
from merchants.services import webhook_settings_set
from payouts.services import payout_create
from tests.wallets.factories import WalletFactory
from tests.wallets.writers import wallet_capture, wallet_release, wallet_reserve
from wallets.exceptions import InsufficientBalanceError
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from wallets.services import (
    wallet_alerts_set,
    wallet_fund,
    wallet_lock,
)
from webhooks.events import event_timestamp
from webhooks.models import Event, EventType, WebhookDelivery

pytestmark = pytest.mark.django_db

ALERTS_URL = "/api/v1/transactions/in/merchant-wallet/alerts"
WEBHOOK_URL = "https://merchant.example.com/hooks"
_references = count(1)


def _fund(wallet: Wallet, amount: str) -> None:
    wallet_fund(
        wallet_id=wallet.pk, amount=Decimal(amount), reference=f"ALERT-F{next(_references)}"
    )


def _reserve(wallet: Wallet, amount: str) -> LedgerEntry:
    with transaction.atomic():
        locked = wallet_lock(wallet_id=wallet.pk)
        return wallet_reserve(
            wallet=locked, amount=Decimal(amount), reference=f"ALERT-P{next(_references)}"
        )


def _release(wallet: Wallet, amount: str) -> LedgerEntry:
    return wallet_release(
        wallet_id=wallet.pk, amount=Decimal(amount), reference=f"ALERT-R{next(_references)}"
    )


def _set(wallet: Wallet, threshold: str | None) -> Wallet:
    return wallet_alerts_set(
        wallet_id=wallet.pk,
        low_balance_threshold=None if threshold is None else Decimal(threshold),
    )


def _alerts(wallet: Wallet) -> list[dict[str, Any]]:
    """The ``data`` of the wallet's ``wallet.balance_low`` events, oldest first."""
    events = Event.objects.filter(
        event_type=EventType.WALLET_BALANCE_LOW, reference=wallet.static_account_number
    ).order_by("id")
    return [json.loads(event.body)["data"] for event in events]


def _alerted(wallet: Wallet) -> bool:
    wallet.refresh_from_db()
    return wallet.low_balance_alerted


# --- crossing, re-arming ---------------------------------------------------------------------


def test_a_reserve_crossing_below_the_threshold_records_one_event_with_the_payload(
    test_wallet: Wallet,
) -> None:
    webhook_settings_set(merchant=test_wallet.merchant, mode=Mode.TEST, url=WEBHOOK_URL)
    _fund(test_wallet, "10000.00")
    _set(test_wallet, "5000.00")
    assert _alerts(test_wallet) == []

    entry = _reserve(test_wallet, "6000.00")

    event = Event.objects.get(event_type=EventType.WALLET_BALANCE_LOW)
    assert (event.merchant_id, event.mode) == (test_wallet.merchant_id, Mode.TEST)
    assert (event.payout_id, event.transaction_id) == (None, None)
    assert event.reference == test_wallet.static_account_number
    body = json.loads(event.body)
    assert body["event"] == "wallet.balance_low"
    assert body["data"] == {
        "wallet_id": test_wallet.pk,
        "mode": "test",
        "currency": "NGN",
        "available_balance": "4000.00",
        "reserved_balance": "6000.00",
        "low_balance_threshold": "5000.00",
        "trigger": "balance_change",
        "ledger_entry": {
            "id": entry.pk,
            "entry_type": "payout_reserve",
            "reference": entry.reference,
            "amount": "6000.00",
        },
        "occurred_at": event_timestamp(entry.created_at),
    }
    assert _alerted(test_wallet)
    delivery = WebhookDelivery.objects.get(event=event)
    assert delivery.url == WEBHOOK_URL


def test_a_payout_that_takes_the_balance_below_alerts_with_its_reference(
    test_wallet: Wallet,
) -> None:
    _fund(test_wallet, "3000.00")
    _set(test_wallet, "2000.00")
    payout = payout_create(
        merchant=test_wallet.merchant,
        mode=Mode.TEST,
        account_number="0123456789",
        bank_code="058",
        amount=Decimal("1500.00"),
        idempotency_key="alert-payout-1",
        narration="rent",
    ).payout
    [alert] = _alerts(test_wallet)
    assert alert["ledger_entry"]["entry_type"] == LedgerEntryType.PAYOUT_RESERVE
    assert alert["ledger_entry"]["reference"] == payout.internal_reference
    assert alert["ledger_entry"]["amount"] == str(payout.total_debit_amount)
    assert Decimal(alert["available_balance"]) == Decimal("3000.00") - payout.total_debit_amount


def test_the_delivery_is_enqueued_when_the_transaction_commits(
    test_wallet: Wallet, django_capture_on_commit_callbacks
) -> None:
    webhook_settings_set(merchant=test_wallet.merchant, mode=Mode.TEST, url=WEBHOOK_URL)
    _fund(test_wallet, "100.00")
    _set(test_wallet, "50.00")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        _reserve(test_wallet, "60.00")
    assert len(callbacks) == 1  # webhook_deliveries_enqueue for the alert's one delivery
    assert WebhookDelivery.objects.filter(event__event_type=EventType.WALLET_BALANCE_LOW).count()


def test_a_second_debit_while_below_records_nothing(test_wallet: Wallet) -> None:
    _fund(test_wallet, "10000.00")
    _set(test_wallet, "5000.00")
    _reserve(test_wallet, "6000.00")
    _reserve(test_wallet, "1000.00")
    _reserve(test_wallet, "2999.99")
    assert len(_alerts(test_wallet)) == 1
    assert _alerted(test_wallet)


def test_a_funding_back_to_the_threshold_re_arms_and_the_next_crossing_alerts_again(
    test_wallet: Wallet,
) -> None:
    _fund(test_wallet, "10000.00")
    _set(test_wallet, "5000.00")
    _reserve(test_wallet, "6000.00")  # 4000.00: alert 1
    _fund(test_wallet, "999.99")  # 4999.99: still below, still alerted
    assert _alerted(test_wallet)
    _fund(test_wallet, "0.01")  # exactly 5000.00: at the threshold re-arms
    assert not _alerted(test_wallet)
    assert len(_alerts(test_wallet)) == 1

    _reserve(test_wallet, "0.01")  # 4999.99: alert 2
    alerts = _alerts(test_wallet)
    assert [alert["available_balance"] for alert in alerts] == ["4000.00", "4999.99"]
    assert _alerted(test_wallet)


def test_a_failed_payout_released_back_above_re_arms(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "500.00")
    _reserve(test_wallet, "600.00")
    _release(test_wallet, "600.00")
    assert not _alerted(test_wallet)
    _reserve(test_wallet, "600.00")
    assert len(_alerts(test_wallet)) == 2


def test_reaching_exactly_the_threshold_is_not_below_it(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "400.00")
    _reserve(test_wallet, "600.00")
    assert _alerts(test_wallet) == []
    assert not _alerted(test_wallet)


def test_a_capture_moves_no_available_balance_and_sends_nothing(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "500.00")
    _reserve(test_wallet, "600.00")
    wallet_capture(
        wallet_id=test_wallet.pk,
        amount=Decimal("590.00"),
        fee_amount=Decimal("10.00"),
        reference="ALERT-CAPTURE",
    )
    assert len(_alerts(test_wallet)) == 1
    assert _alerted(test_wallet)


def test_without_a_threshold_nothing_is_recorded(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _reserve(test_wallet, "999.00")
    assert _alerts(test_wallet) == []
    assert not _alerted(test_wallet)


# --- queries ---------------------------------------------------------------------------------

# A reserve in its own atomic block: SAVEPOINT, SELECT … FOR UPDATE (the lock), UPDATE wallet,
# INSERT ledger entry, RELEASE SAVEPOINT: the same as before alerts existed.
RESERVE_QUERIES = 5


def test_a_reserve_without_a_threshold_costs_no_extra_query(
    test_wallet: Wallet, django_assert_num_queries
) -> None:
    _fund(test_wallet, "1000.00")
    with django_assert_num_queries(RESERVE_QUERIES):
        _reserve(test_wallet, "100.00")


def test_a_reserve_that_does_not_cross_costs_no_extra_query(
    test_wallet: Wallet, django_assert_num_queries
) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "100.00")
    with django_assert_num_queries(RESERVE_QUERIES):
        _reserve(test_wallet, "100.00")


def test_a_crossing_saves_the_flag_in_the_one_wallet_update(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "500.00")
    with CaptureQueriesContext(connection) as queries:
        _reserve(test_wallet, "600.00")
    wallet_updates = [
        query["sql"]
        for query in queries.captured_queries
        if query["sql"].startswith('UPDATE "wallets_wallet"')
    ]
    assert len(wallet_updates) == 1
    assert '"low_balance_alerted"' in wallet_updates[0]
    assert _alerted(test_wallet)


# --- same transaction ------------------------------------------------------------------------


def test_a_rolled_back_reserve_leaves_no_event_and_no_alert_state(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "500.00")
    with pytest.raises(RuntimeError, match="payout insert failed"), transaction.atomic():
        _reserve(test_wallet, "600.00")
        assert len(_alerts(test_wallet)) == 1  # recorded inside the transaction…
        raise RuntimeError("payout insert failed")
    assert _alerts(test_wallet) == []  # …and gone with it
    assert not _alerted(test_wallet)
    test_wallet.refresh_from_db()
    assert test_wallet.available_balance == Decimal("1000.00")
    _reserve(test_wallet, "600.00")  # still armed: the real crossing alerts
    assert len(_alerts(test_wallet)) == 1


def test_an_event_that_cannot_be_recorded_rolls_the_balance_change_back(
    test_wallet: Wallet, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "500.00")

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("events table unavailable")

    monkeypatch.setattr("webhooks.receivers.wallet_balance_low_record", broken)
    with pytest.raises(RuntimeError, match="events table unavailable"):
        _reserve(test_wallet, "600.00")
    test_wallet.refresh_from_db()
    assert (test_wallet.available_balance, test_wallet.reserved_balance) == (
        Decimal("1000.00"),
        Decimal("0.00"),
    )
    assert not test_wallet.low_balance_alerted
    assert not LedgerEntry.objects.filter(entry_type=LedgerEntryType.PAYOUT_RESERVE).exists()


# --- setting the threshold -------------------------------------------------------------------


def test_a_threshold_above_the_balance_alerts_at_once_without_a_ledger_entry(
    test_wallet: Wallet,
) -> None:
    _fund(test_wallet, "1000.00")
    wallet = _set(test_wallet, "5000.00")
    assert wallet.low_balance_alerted
    [alert] = _alerts(test_wallet)
    assert alert["trigger"] == "threshold_set"
    assert alert["ledger_entry"] is None
    assert (alert["available_balance"], alert["low_balance_threshold"]) == ("1000.00", "5000.00")
    _reserve(test_wallet, "10.00")  # still below: already alerted
    assert len(_alerts(test_wallet)) == 1


def test_sending_the_same_threshold_again_changes_nothing(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "5000.00")
    _set(test_wallet, "5000")
    assert len(_alerts(test_wallet)) == 1
    assert _alerted(test_wallet)


def test_a_new_threshold_still_above_the_balance_alerts_again(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "5000.00")
    _set(test_wallet, "2000.00")
    assert [alert["low_balance_threshold"] for alert in _alerts(test_wallet)] == [
        "5000.00",
        "2000.00",
    ]


def test_a_threshold_at_or_below_the_balance_arms_the_alert(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "5000.00")  # alerted
    wallet = _set(test_wallet, "1000.00")  # balance at the new threshold: re-armed
    assert not wallet.low_balance_alerted
    _reserve(test_wallet, "0.01")
    assert [alert["trigger"] for alert in _alerts(test_wallet)] == [
        "threshold_set",
        "balance_change",
    ]


def test_turning_the_alert_off_clears_it_and_stops_events(test_wallet: Wallet) -> None:
    _fund(test_wallet, "1000.00")
    _set(test_wallet, "5000.00")
    wallet = _set(test_wallet, None)
    assert (wallet.low_balance_threshold, wallet.low_balance_alerted) == (None, False)
    _reserve(test_wallet, "999.00")
    assert len(_alerts(test_wallet)) == 1
    _set(test_wallet, "5000.00")  # on again while below: alerts at once
    assert len(_alerts(test_wallet)) == 2


@pytest.mark.parametrize("threshold", ["0.00", "-1.00", "0.001"])
def test_the_service_refuses_a_threshold_that_is_not_a_positive_amount(
    test_wallet: Wallet, threshold: str
) -> None:
    from core.exceptions import ApplicationError

    with pytest.raises(ApplicationError, match="^low_balance_threshold: "):
        _set(test_wallet, threshold)
    test_wallet.refresh_from_db()
    assert test_wallet.low_balance_threshold is None


# --- the API ---------------------------------------------------------------------------------


def test_get_answers_the_current_setting(test_client: APIClient, test_wallet: Wallet) -> None:
    _fund(test_wallet, "125000.00")
    response = test_client.get(ALERTS_URL)
    assert response.status_code == 200
    assert response.json() == {
        "status": True,
        "message": "Low-balance alert retrieved successfully",
        "data": {
            "low_balance_threshold": None,
            "low_balance_alerted": False,
            "available_balance": "125000.00",
        },
        "statusCode": 200,
    }


def test_put_sets_the_threshold_of_the_keys_wallet_only(
    test_client: APIClient, test_wallet: Wallet, live_wallet: Wallet
) -> None:
    _fund(test_wallet, "125000.00")
    response = test_client.put(ALERTS_URL, {"low_balance_threshold": "5000.00"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["data"] == {
        "low_balance_threshold": "5000.00",
        "low_balance_alerted": False,
        "available_balance": "125000.00",
    }
    assert test_client.get(ALERTS_URL).json()["data"]["low_balance_threshold"] == "5000.00"
    live_wallet.refresh_from_db()
    assert (live_wallet.low_balance_threshold, live_wallet.low_balance_alerted) == (None, False)
    assert _alerts(live_wallet) == []


def test_put_with_the_live_key_sets_the_live_wallet_and_alerts_if_already_below(
    live_client: APIClient, test_wallet: Wallet, live_wallet: Wallet
) -> None:
    response = live_client.put(ALERTS_URL, {"low_balance_threshold": "5000.00"}, format="json")
    assert response.json()["data"] == {
        "low_balance_threshold": "5000.00",
        "low_balance_alerted": True,
        "available_balance": "0.00",
    }
    [event] = Event.objects.filter(event_type=EventType.WALLET_BALANCE_LOW)
    assert event.mode == Mode.LIVE
    assert json.loads(event.body)["data"]["wallet_id"] == live_wallet.pk
    test_wallet.refresh_from_db()
    assert test_wallet.low_balance_threshold is None


def test_put_null_turns_the_alert_off(test_client: APIClient, test_wallet: Wallet) -> None:
    _set(test_wallet, "5000.00")
    response = test_client.put(ALERTS_URL, {"low_balance_threshold": None}, format="json")
    assert response.status_code == 200
    assert response.json()["data"]["low_balance_threshold"] is None
    assert response.json()["data"]["low_balance_alerted"] is False


@pytest.mark.parametrize("method", ["get", "put"])
def test_the_route_answers_401_without_a_key(method: str, test_wallet: Wallet) -> None:
    response = getattr(APIClient(), method)(
        ALERTS_URL, {"low_balance_threshold": "5000.00"}, format="json"
    )
    assert response.status_code == 401
    assert response.json() == {
        "status": False,
        "message": "Unauthorized: invalid or missing secret key",
        "data": None,
        "statusCode": 401,
    }
    test_wallet.refresh_from_db()
    assert test_wallet.low_balance_threshold is None


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"low_balance_threshold": "0"}, "low_balance_threshold"),
        ({"low_balance_threshold": "0.00"}, "low_balance_threshold"),
        ({"low_balance_threshold": "-5000.00"}, "low_balance_threshold"),
        ({"low_balance_threshold": "5000.001"}, "low_balance_threshold"),
        ({"low_balance_threshold": "5e3"}, "low_balance_threshold"),
        ({"low_balance_threshold": "abc"}, "low_balance_threshold"),
        ({"low_balance_threshold": 5000}, "low_balance_threshold"),
        ({"low_balance_threshold": 5000.5}, "low_balance_threshold"),
        ({"low_balance_threshold": "1000000000000.01"}, "low_balance_threshold"),
        ({}, "low_balance_threshold"),
        ({"low_balance_threshold": "5000.00", "currency": "NGN"}, "currency"),
    ],
)
def test_put_refuses_a_bad_threshold_naming_the_field(
    test_client: APIClient, test_wallet: Wallet, payload: dict[str, Any], field: str
) -> None:
    response = test_client.put(ALERTS_URL, payload, format="json")
    body = response.json()
    assert response.status_code == 400, body
    assert (body["status"], body["data"], body["statusCode"]) == (False, None, 400)
    assert body["message"].startswith(f"{field}: ")
    test_wallet.refresh_from_db()
    assert test_wallet.low_balance_threshold is None


# --- generated sequences ---------------------------------------------------------------------

naira = st.integers(min_value=1, max_value=300).map(Decimal)
thresholds = st.none() | st.integers(min_value=1, max_value=400).map(Decimal)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("fund"), naira),
        st.tuples(st.just("reserve"), naira),
        st.tuples(st.just("release"), st.integers(min_value=0, max_value=9)),
        st.tuples(st.just("capture"), st.integers(min_value=0, max_value=9)),
        st.tuples(st.just("threshold"), thresholds),
    ),
    max_size=25,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(opening=naira, threshold=thresholds, operations=steps)
def test_events_equal_the_downward_crossings_of_a_model_balance(
    opening: Decimal, threshold: Decimal | None, operations: list[tuple[str, Any]]
) -> None:
    """The model keeps the available balance and counts, per write, a move from at-or-above
    the threshold to below it, plus one for each new threshold the balance is already below."""
    with transaction.atomic():
        wallet = WalletFactory()
        _fund(wallet, str(opening))
        available, current, expected = opening, None, 0
        pending: list[Decimal] = []

        def set_threshold(new: Decimal | None) -> None:
            nonlocal current, expected
            _set(wallet, None if new is None else str(new))
            if new != current and new is not None and available < new:
                expected += 1
            current = new

        def moved(after: Decimal) -> None:
            nonlocal available, expected
            if current is not None and available >= current > after:
                expected += 1
            available = after

        set_threshold(threshold)
        for operation, value in operations:
            if operation == "fund":
                _fund(wallet, str(value))
                moved(available + value)
            elif operation == "reserve":
                try:
                    _reserve(wallet, str(value))
                except InsufficientBalanceError:
                    assert value > available
                    continue
                pending.append(value)
                moved(available - value)
            elif operation == "release" and pending:
                amount = pending.pop(value % len(pending))
                _release(wallet, str(amount))
                moved(available + amount)
            elif operation == "capture" and pending:
                amount = pending.pop(value % len(pending))
                wallet_capture(
                    wallet_id=wallet.pk,
                    amount=amount,
                    fee_amount=Decimal("0.00"),
                    reference=f"ALERT-C{next(_references)}",
                )
            elif operation == "threshold":
                set_threshold(value)
            assert len(_alerts(wallet)) == expected
        wallet.refresh_from_db()
        assert wallet.available_balance == available
        assert wallet.low_balance_alerted == (current is not None and available < current)
        transaction.set_rollback(True)
