"""The settlement routes: the list (pagination, filters, modes), one settlement with its shares,
and the transactions it settled; another merchant's or mode's settlement is a 404."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from core.dates import local_day_start
from merchants.models import Mode
from merchants.services import MerchantCreated, merchant_create
from payouts.models import PayoutStatus
from settlements.api.serializers import SettlementOutputSerializer
from tests.payment_items.factories import SubaccountFactory
from tests.payouts.factories import PayoutFactory
from tests.settlements.factories_api import (
    SettlementFactory,
    SettlementShareFactory,
    settled_collection,
)
from wallets.models import Wallet
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db

LIST_URL = "/api/v1/settlements"
DAY = date(2026, 3, 10)


def _url(settlement_id: str, suffix: str = "") -> str:
    return f"{LIST_URL}/{settlement_id}{suffix}"


def _ok(response, message: str) -> dict:
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["statusCode"], body["message"]) == (True, 200, message)
    return body["data"]


def _error(response, status: int) -> str:
    assert response.status_code == status, response.content
    body = response.json()
    assert (body["status"], body["data"], body["statusCode"]) == (False, None, status)
    return body["message"]


@pytest.fixture
def test_wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)


def _at(day: date, hour: int = 12):
    return local_day_start(day) + timedelta(hours=hour)


# --- the list ----------------------------------------------------------------------------------


def test_the_list_shows_the_resource_newest_first_with_the_payout_lists_pagination(
    test_client: APIClient, merchant_account: MerchantCreated
) -> None:
    merchant = merchant_account.merchant
    older = SettlementFactory(merchant=merchant, settled_at=_at(DAY, 9))
    newer = SettlementFactory(
        merchant=merchant,
        settled_at=_at(DAY, 10),
        period_start=_at(DAY - timedelta(days=1), 0),
        period_end=_at(DAY, 0),
        transaction_count=2,
        gross=Decimal("14410.00"),
        fees=Decimal("410.00"),
        subaccount_shares=Decimal("1500.00"),
        refunds_deducted=Decimal("2000.00"),
    )
    data = _ok(test_client.get(LIST_URL), "Settlements retrieved successfully")
    assert [item["settlement_id"] for item in data["items"]] == [
        newer.settlement_id,
        older.settlement_id,
    ]
    assert data["items"][0] == {
        "settlement_id": newer.settlement_id,
        "mode": "test",
        "currency": "NGN",
        "period_start": "2026-03-09T00:00:00+01:00",
        "period_end": "2026-03-10T00:00:00+01:00",
        "transaction_count": 2,
        "gross": "14410.00",
        "fees": "410.00",
        "subaccount_shares": "1500.00",
        "refunds_deducted": "2000.00",
        "net": "10500.00",
        "status": "completed",
        "settled_at": "2026-03-10T10:00:00+01:00",
    }
    assert data["pagination"] == {
        "page": 1,
        "limit": 50,
        "total": 2,
        "total_pages": 1,
        "has_next_page": False,
        "has_previous_page": False,
    }


def test_pages_split_the_list_and_a_page_past_the_end_is_empty(
    test_client: APIClient, merchant_account: MerchantCreated
) -> None:
    settlements = SettlementFactory.create_batch(5, merchant=merchant_account.merchant)
    newest_first = [s.settlement_id for s in reversed(settlements)]
    second = _ok(
        test_client.get(LIST_URL, {"page": 2, "limit": 2}), "Settlements retrieved successfully"
    )
    assert [item["settlement_id"] for item in second["items"]] == newest_first[2:4]
    assert second["pagination"] == {
        "page": 2,
        "limit": 2,
        "total": 5,
        "total_pages": 3,
        "has_next_page": True,
        "has_previous_page": True,
    }
    past = _ok(
        test_client.get(LIST_URL, {"page": 9, "limit": 2}), "Settlements retrieved successfully"
    )
    assert past["items"] == []
    assert past["pagination"]["total"] == 5


def test_from_and_to_date_are_lagos_days_on_settled_at(
    test_client: APIClient, merchant_account: MerchantCreated
) -> None:
    merchant = merchant_account.merchant
    # 00:30 in Lagos on DAY is 23:30 UTC the day before: it belongs to DAY.
    early = SettlementFactory(
        merchant=merchant, settled_at=local_day_start(DAY) + timedelta(minutes=30)
    )
    late = SettlementFactory(merchant=merchant, settled_at=_at(DAY, 23))
    SettlementFactory(merchant=merchant, settled_at=_at(DAY - timedelta(days=1), 23))
    SettlementFactory(merchant=merchant, settled_at=_at(DAY + timedelta(days=1), 0))
    params = {"from_date": DAY.isoformat(), "to_date": DAY.isoformat()}
    data = _ok(test_client.get(LIST_URL, params), "Settlements retrieved successfully")
    assert [item["settlement_id"] for item in data["items"]] == [
        late.settlement_id,
        early.settlement_id,
    ]
    assert data["pagination"]["total"] == 2


def test_the_status_filter(test_client: APIClient, merchant_account: MerchantCreated) -> None:
    SettlementFactory(merchant=merchant_account.merchant)
    data = _ok(
        test_client.get(LIST_URL, {"status": "completed"}), "Settlements retrieved successfully"
    )
    assert data["pagination"]["total"] == 1


@pytest.mark.parametrize(
    ("params", "field_name"),
    [
        ({"status": "paid"}, "status"),
        ({"from_date": "yesterday"}, "from_date"),
        ({"from_date": "2026-02-30"}, "from_date"),
        ({"to_date": "2026-13-01"}, "to_date"),
        ({"from_date": "2026-03-10", "to_date": "2026-03-09"}, "to_date"),
        ({"page": "0"}, "page"),
        ({"limit": "201"}, "limit"),
        ({"limit": "ten"}, "limit"),
    ],
)
def test_bad_filters_are_a_400_naming_the_field(
    test_client: APIClient, params: dict[str, str], field_name: str
) -> None:
    assert field_name in _error(test_client.get(LIST_URL, params), 400)


def test_a_key_sees_only_its_own_merchant_and_mode(
    test_client: APIClient, live_client: APIClient, merchant_account: MerchantCreated
) -> None:
    merchant = merchant_account.merchant
    test_settlement = SettlementFactory(merchant=merchant, mode=Mode.TEST)
    live_settlement = SettlementFactory(merchant=merchant, mode=Mode.LIVE)
    SettlementFactory()  # another merchant's
    test_data = _ok(test_client.get(LIST_URL), "Settlements retrieved successfully")
    assert [item["settlement_id"] for item in test_data["items"]] == [test_settlement.settlement_id]
    live_data = _ok(live_client.get(LIST_URL), "Settlements retrieved successfully")
    assert [item["settlement_id"] for item in live_data["items"]] == [live_settlement.settlement_id]
    assert live_data["items"][0]["mode"] == "live"


def test_the_list_takes_a_fixed_number_of_queries(
    test_client: APIClient, merchant_account: MerchantCreated, django_assert_num_queries
) -> None:
    SettlementFactory.create_batch(3, merchant=merchant_account.merchant)
    with django_assert_num_queries(3):  # the key, the count, the page
        test_client.get(LIST_URL)


# --- one settlement -----------------------------------------------------------------------------


def test_the_detail_shows_each_share_with_its_payout(
    test_client: APIClient, merchant_account: MerchantCreated, test_wallet: Wallet
) -> None:
    settlement = SettlementFactory(
        merchant=merchant_account.merchant, subaccount_shares=Decimal("1500.00")
    )
    chika = SubaccountFactory(
        merchant=settlement.merchant, account_name="CHIKA PARTNERS LTD", mode=Mode.TEST
    )
    dayo = SubaccountFactory(merchant=settlement.merchant, account_name="DAYO LOGISTICS")
    payout = PayoutFactory(
        wallet=test_wallet, amount=Decimal("1000.00"), status=PayoutStatus.SUCCESSFUL
    )
    SettlementShareFactory(
        settlement=settlement, subaccount=chika, amount=Decimal("1000.00"), payout=payout
    )
    SettlementShareFactory(settlement=settlement, subaccount=dayo, amount=Decimal("500.00"))
    data = _ok(test_client.get(_url(settlement.settlement_id)), "Settlement retrieved successfully")
    assert data["settlement_id"] == settlement.settlement_id
    assert data["net"] == "5500.00"
    assert data["shares"] == [
        {
            "account_code": chika.account_code,
            "account_name": "CHIKA PARTNERS LTD",
            "amount": "1000.00",
            "payout": {"internal_reference": payout.internal_reference, "status": "successful"},
        },
        {
            "account_code": dayo.account_code,
            "account_name": "DAYO LOGISTICS",
            "amount": "500.00",
            "payout": None,
        },
    ]


def test_the_detail_takes_a_fixed_number_of_queries(
    test_client: APIClient, merchant_account: MerchantCreated, django_assert_num_queries
) -> None:
    settlement = SettlementFactory(merchant=merchant_account.merchant)
    SettlementShareFactory.create_batch(3, settlement=settlement)
    with django_assert_num_queries(3):  # the key, the settlement, its shares with subaccounts
        response = test_client.get(_url(settlement.settlement_id))
    assert len(response.json()["data"]["shares"]) == 3


@pytest.fixture
def other_merchant() -> MerchantCreated:
    return merchant_create(name="Bisi Foods", email="bisi@example.com")


@pytest.mark.parametrize("suffix", ["", "/transactions"])
def test_another_merchants_or_modes_settlement_is_a_404(
    test_client: APIClient,
    live_client: APIClient,
    merchant_account: MerchantCreated,
    other_merchant: MerchantCreated,
    suffix: str,
) -> None:
    theirs = SettlementFactory(merchant=other_merchant.merchant)
    live = SettlementFactory(merchant=merchant_account.merchant, mode=Mode.LIVE)
    test = SettlementFactory(merchant=merchant_account.merchant, mode=Mode.TEST)
    assert (
        _error(test_client.get(_url(theirs.settlement_id, suffix)), 404) == "Settlement not found"
    )
    assert _error(test_client.get(_url(live.settlement_id, suffix)), 404) == "Settlement not found"
    assert _error(live_client.get(_url(test.settlement_id, suffix)), 404) == "Settlement not found"
    assert _error(test_client.get(_url("stl_unknown", suffix)), 404) == "Settlement not found"
    assert _error(test_client.get(_url("x" * 41, suffix)), 404) == "Settlement not found"


# --- its transactions --------------------------------------------------------------------------


def test_the_transactions_are_the_collections_it_settled_in_the_order_paid(
    test_client: APIClient, merchant_account: MerchantCreated
) -> None:
    settlement = SettlementFactory(merchant=merchant_account.merchant, transaction_count=2)
    chika = SubaccountFactory(merchant=settlement.merchant)
    dayo = SubaccountFactory(merchant=settlement.merchant)
    second = settled_collection(settlement=settlement, paid_at=_at(DAY, 14))
    first = settled_collection(
        settlement=settlement,
        paid_at=_at(DAY, 9),
        shares=((chika, Decimal("1000.00")), (dayo, Decimal("500.00"))),
        amount_refunded=Decimal("2000.00"),
    )
    other = SettlementFactory(merchant=merchant_account.merchant, transaction_count=1)
    settled_collection(settlement=other)
    data = _ok(
        test_client.get(_url(settlement.settlement_id, "/transactions")),
        "Settlement transactions retrieved successfully",
    )
    assert [item["reference"] for item in data["items"]] == [first.reference, second.reference]
    assert data["items"][0] == {
        "reference": first.reference,
        "client_reference": first.client_reference,
        "amount": "7000.00",
        "transaction_fee": "205.00",
        "amount_paid": "7205.00",
        "amount_refunded": "2000.00",
        "subaccount_shares": "1500.00",
        "net_to_merchant": "5500.00",
        "paid_at": "2026-03-10T09:00:00+01:00",
        "payment_channel": "card",
    }
    assert (data["items"][1]["subaccount_shares"], data["items"][1]["net_to_merchant"]) == (
        "0.00",
        "7000.00",
    )
    assert data["pagination"]["total"] == 2


def test_the_transactions_are_paged_in_one_query_per_page(
    test_client: APIClient, merchant_account: MerchantCreated, django_assert_num_queries
) -> None:
    settlement = SettlementFactory(merchant=merchant_account.merchant, transaction_count=5)
    collections = [
        settled_collection(settlement=settlement, paid_at=_at(DAY, hour)) for hour in range(5)
    ]
    # the key, the settlement, the page
    with django_assert_num_queries(3):
        response = test_client.get(
            _url(settlement.settlement_id, "/transactions"), {"page": 2, "limit": 2}
        )
    data = response.json()["data"]
    assert [item["reference"] for item in data["items"]] == [c.reference for c in collections[2:4]]
    assert data["pagination"] == {
        "page": 2,
        "limit": 2,
        "total": 5,
        "total_pages": 3,
        "has_next_page": True,
        "has_previous_page": True,
    }


def test_bad_page_parameters_of_the_transactions_are_a_400(
    test_client: APIClient, merchant_account: MerchantCreated
) -> None:
    settlement = SettlementFactory(merchant=merchant_account.merchant)
    response = test_client.get(_url(settlement.settlement_id, "/transactions"), {"limit": "0"})
    assert "limit" in _error(response, 400)


def test_the_resource_is_the_settlement_completed_events_data(
    merchant_account: MerchantCreated,
) -> None:
    """The list's item and the event's data are one object (``settlements.events``)."""
    events = pytest.importorskip(
        "settlements.events", reason="settlements.events is not on this branch"
    )
    settlement = SettlementFactory(merchant=merchant_account.merchant, period_start=_at(DAY, 0))
    assert events.settlement_event_data(settlement=settlement) == dict(
        SettlementOutputSerializer(settlement).data
    )
