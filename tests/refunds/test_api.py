"""The refund routes: create (replay, 409, limits, 404s), list with filters, detail."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from collections_app.models import CollectionTransaction, PaymentStatus
from merchants.models import Merchant, Mode
from merchants.services import MerchantCreated
from refunds.models import Refund, RefundStatus
from settlements.platform_ledger import platform_balances
from tests.collections_app.factories import CollectionTransactionFactory
from tests.refunds.factories import RefundFactory, collection_settle, paid_collection, wallet_of
from wallets.services import wallet_fund

pytestmark = pytest.mark.django_db

REFUNDS_URL = "/api/v1/transactions/in/refunds"
REFUND_KEYS = {
    "refund_id",
    "transaction_reference",
    "amount",
    "fee_returned",
    "currency",
    "status",
    "reason",
    "deducted_from_settlement",
    "debited_from_wallet",
    "failure_reason",
    "created_at",
    "processed_at",
}


def post(client: APIClient, body: Any) -> Any:
    return client.post(REFUNDS_URL, json.dumps(body), content_type="application/json")


def error(response: Any, status_code: int, message: str) -> None:
    assert response.status_code == status_code, response.content
    assert response.json() == {
        "status": False,
        "message": message,
        "data": None,
        "statusCode": status_code,
    }


@pytest.fixture
def collection(merchant: Merchant) -> CollectionTransaction:
    return paid_collection(merchant=merchant)


def test_create_answers_202_with_the_refund(test_client: APIClient, collection) -> None:  # type: ignore[no-untyped-def]
    response = post(
        test_client,
        {
            "transaction_reference": collection.reference,
            "amount": "2000.00",
            "reason": "one item back",
            "idempotency_key": "r-1",
        },
    )

    assert response.status_code == 202, response.content
    body = response.json()
    assert body["message"] == "Refund accepted for processing"
    assert body["data"]["duplicate"] is False
    refund = body["data"]["refund"]
    assert set(refund) == REFUND_KEYS
    assert refund["transaction_reference"] == collection.reference
    assert refund["amount"] == "2000.00"
    assert refund["deducted_from_settlement"] == "2000.00"
    assert refund["debited_from_wallet"] == "0.00"
    assert refund["fee_returned"] == "0.00"
    assert refund["currency"] == "NGN"
    assert refund["status"] == "pending"
    assert refund["reason"] == "one item back"
    assert refund["failure_reason"] is None


def test_replay_and_conflict(test_client: APIClient, collection) -> None:  # type: ignore[no-untyped-def]
    body = {"transaction_reference": collection.reference, "amount": "10", "idempotency_key": "k"}
    first = post(test_client, body)

    replay = post(test_client, {**body, "amount": "10.00"})
    conflict = post(test_client, {**body, "amount": "11"})

    assert replay.status_code == 202
    assert replay.json()["message"] == "Refund request already accepted"
    assert replay.json()["data"]["duplicate"] is True
    assert (
        replay.json()["data"]["refund"]["refund_id"] == first.json()["data"]["refund"]["refund_id"]
    )
    error(conflict, 409, "Idempotency key already used for a different refund request")
    assert Refund.objects.count() == 1


def test_partial_rest_and_a_third_refused(
    test_client: APIClient, collection, merchant: Merchant
) -> None:  # type: ignore[no-untyped-def]
    # 2,000.00 then 5,205.00: owed covers 7,000.00, the wallet the fee's 205.00.
    wallet_fund(wallet_id=wallet_of(merchant).pk, amount=Decimal("205.00"), reference="f-1")
    first = post(
        test_client,
        {"transaction_reference": collection.reference, "amount": "2000", "idempotency_key": "a"},
    )
    rest = post(
        test_client, {"transaction_reference": collection.reference, "idempotency_key": "b"}
    )
    third = post(
        test_client,
        {"transaction_reference": collection.reference, "amount": "1", "idempotency_key": "c"},
    )

    assert first.status_code == 202
    assert rest.status_code == 202
    assert rest.json()["data"]["refund"]["amount"] == "5205.00"
    error(third, 400, "amount: exceeds the refundable amount 0.00")
    assert wallet_of(merchant).available_balance == Decimal("0.00")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"amount": "0"},
            "amount: must be a positive decimal string with at most two decimal "
            "places (greater than zero)",
        ),
        (
            {"amount": 10},
            "amount: must be a positive decimal string with at most two decimal "
            "places, given as a JSON string",
        ),
        (
            {"amount": "1.001"},
            "amount: must be a positive decimal string with at most two decimal places",
        ),
        (
            {"amount": "1e3"},
            "amount: must be a positive decimal string with at most two decimal places",
        ),
        ({"reason": "x" * 256}, "reason: Ensure this field has no more than 255 characters."),
        (
            {"idempotency_key": "k" * 101},
            "idempotency_key: Ensure this field has no more than 100 characters.",
        ),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    test_client: APIClient, collection, body: dict[str, Any], message: str
) -> None:  # type: ignore[no-untyped-def]
    response = post(
        test_client,
        {"transaction_reference": collection.reference, "idempotency_key": "k", **body},
    )

    error(response, 400, message)
    assert not Refund.objects.exists()


def test_missing_idempotency_key_is_a_400(test_client: APIClient, collection) -> None:  # type: ignore[no-untyped-def]
    response = post(test_client, {"transaction_reference": collection.reference})

    assert response.status_code == 400
    assert response.json()["message"].startswith("idempotency_key:")


def test_unknown_field_is_refused(test_client: APIClient, collection) -> None:  # type: ignore[no-untyped-def]
    response = post(
        test_client,
        {"transaction_reference": collection.reference, "idempotency_key": "k", "amt": "1"},
    )

    assert response.status_code == 400
    assert not Refund.objects.exists()


def test_unknown_other_merchant_and_other_mode_are_404(
    test_client: APIClient, merchant: Merchant, collection
) -> None:  # type: ignore[no-untyped-def]
    other = paid_collection(merchant=CollectionTransactionFactory().merchant)
    live = paid_collection(merchant=merchant, mode=Mode.LIVE)
    balances_before = platform_balances().by_account

    for reference in ("TXN_UNKNOWN", other.reference, live.reference):
        response = post(
            test_client, {"transaction_reference": reference, "idempotency_key": reference}
        )
        error(response, 404, "Transaction not found")

    assert not Refund.objects.exists()
    assert platform_balances().by_account == balances_before


def test_unpaid_is_a_400_naming_the_reference(test_client: APIClient, merchant: Merchant) -> None:
    pending = CollectionTransactionFactory(merchant=merchant, payment_status=PaymentStatus.PENDING)

    response = post(
        test_client, {"transaction_reference": pending.reference, "idempotency_key": "k"}
    )

    error(
        response,
        400,
        "transaction_reference: only a paid transaction can be refunded (this one is pending)",
    )


def test_settled_refund_beyond_the_wallet_is_a_400(test_client: APIClient, collection) -> None:  # type: ignore[no-untyped-def]
    collection_settle(collection)

    response = post(
        test_client,
        {
            "transaction_reference": collection.reference,
            "amount": "7000.01",
            "idempotency_key": "k",
        },
    )

    error(response, 400, "insufficient available wallet balance")
    collection.refresh_from_db()
    assert collection.amount_refunded == Decimal("0.00")


def test_live_key_refunds_the_live_collection(live_client: APIClient, merchant: Merchant) -> None:
    live = paid_collection(merchant=merchant, mode=Mode.LIVE)

    response = post(
        live_client,
        {"transaction_reference": live.reference, "amount": "5", "idempotency_key": "k"},
    )

    assert response.status_code == 202
    assert Refund.objects.get().mode == Mode.LIVE
    assert Refund.objects.get().provider_name == "paystack"


def test_without_a_key_is_401(api_client: APIClient) -> None:
    response = api_client.get(REFUNDS_URL)

    assert response.status_code == 401


# --- List and detail ---------------------------------------------------------------------------


@pytest.fixture
def listed(merchant: Merchant) -> list[Refund]:
    first = RefundFactory(merchant=merchant, status=RefundStatus.PROCESSED)
    second = RefundFactory(merchant=merchant, status=RefundStatus.FAILED)
    RefundFactory(merchant=merchant, mode=Mode.LIVE)
    RefundFactory()  # another merchant's
    return [second, first]


def test_list_newest_first(test_client: APIClient, listed, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    with django_assert_num_queries(3):  # key lookup, count, page
        response = test_client.get(REFUNDS_URL)

    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Refunds retrieved successfully"
    assert [item["refund_id"] for item in body["data"]["items"]] == [
        refund.refund_id for refund in listed
    ]
    assert set(body["data"]["items"][0]) == REFUND_KEYS
    assert body["data"]["pagination"]["total"] == 2


def test_list_filters(test_client: APIClient, listed) -> None:  # type: ignore[no-untyped-def]
    failed = test_client.get(REFUNDS_URL, {"status": "failed"}).json()["data"]["items"]
    by_id = test_client.get(REFUNDS_URL, {"reference": listed[1].refund_id}).json()["data"]
    by_txn = test_client.get(REFUNDS_URL, {"reference": listed[0].collection.reference}).json()[
        "data"
    ]
    future = test_client.get(REFUNDS_URL, {"from_date": "2999-01-01"}).json()["data"]
    page = test_client.get(REFUNDS_URL, {"limit": 1, "page": 2}).json()["data"]

    assert [item["status"] for item in failed] == ["failed"]
    assert [item["refund_id"] for item in by_id["items"]] == [listed[1].refund_id]
    assert [item["refund_id"] for item in by_txn["items"]] == [listed[0].refund_id]
    assert future["items"] == []
    assert [item["refund_id"] for item in page["items"]] == [listed[1].refund_id]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "done"}, "status"),
        ({"from_date": "yesterday"}, "from_date"),
        ({"from_date": "2026-03-02", "to_date": "2026-03-01"}, "to_date"),
        ({"page": "0"}, "page"),
        ({"limit": "201"}, "limit"),
    ],
)
def test_list_bad_filters_are_a_400_naming_the_field(
    test_client: APIClient, params: dict[str, str], field: str
) -> None:
    response = test_client.get(REFUNDS_URL, params)

    assert response.status_code == 400
    assert response.json()["message"].startswith(f"{field}:")


def test_detail_and_other_merchants_404(
    test_client: APIClient, listed, merchant_account: MerchantCreated
) -> None:  # type: ignore[no-untyped-def]
    other = RefundFactory()
    live = Refund.objects.get(merchant=merchant_account.merchant, mode=Mode.LIVE)

    response = test_client.get(f"{REFUNDS_URL}/{listed[0].refund_id}")

    assert response.status_code == 200
    assert response.json()["data"]["refund_id"] == listed[0].refund_id
    assert response.json()["data"]["status"] == "failed"
    error(test_client.get(f"{REFUNDS_URL}/{other.refund_id}"), 404, "Refund not found")
    error(test_client.get(f"{REFUNDS_URL}/{live.refund_id}"), 404, "Refund not found")


def test_search_shows_amount_refunded(test_client: APIClient, collection) -> None:  # type: ignore[no-untyped-def]
    post(
        test_client,
        {"transaction_reference": collection.reference, "amount": "150", "idempotency_key": "k"},
    )

    response = test_client.get(f"/api/v1/transactions/in/search-transaction/{collection.reference}")

    assert response.status_code == 200, response.content
    assert response.json()["data"]["amount_refunded"] == "150.00"
