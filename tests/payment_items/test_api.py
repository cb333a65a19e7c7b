"""GET /api/v1/transactions/in/payment-items and /payment-item/{id}."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from merchants.models import Merchant, Mode
from merchants.services import secret_key_rotate
from payment_items.models import CatalogueStatus
from tests.payment_items.factories import (
    CategoryFactory,
    PaymentItemFactory,
    SubCategoryFactory,
    TransactionSplitFactory,
)

pytestmark = pytest.mark.django_db

LIST_URL = "/api/v1/transactions/in/payment-items"
BARE_FORBIDDEN = {"message": "Forbidden resource", "error": "Forbidden", "statusCode": 403}

LIST_FIELDS = {
    "id",
    "core_service_business_id",
    "name",
    "description",
    "amount",
    "form_data",
    "is_enumerated_data",
    "transaction_split_code",
    "category",
    "category_details",
    "sub_category",
    "sub_category_details",
    "status",
    "is_deleted",
    "allow_quick_print",
    "created_at",
    "delete_at",
}
DETAIL_FIELDS = LIST_FIELDS | {"can_edit_item", "show_on_agent_app", "updated_at"}
CATEGORY_DETAIL_FIELDS = {
    "id",
    "name",
    "status",
    "delete_at",
    "created_at",
    "created_by",
    "is_deleted",
    "updated_at",
}
FORM_DATA = [
    {"name": "student_id", "type": "input", "value": "", "options": [], "required": True},
    {"name": "term", "type": "select", "value": "a", "options": ["a", "b"], "required": False},
]


def detail_url(item_id: int | str) -> str:
    return f"/api/v1/transactions/in/payment-item/{item_id}"


def iso(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    assert parsed.tzinfo is not None
    return parsed


@pytest.fixture
def item(merchant: Merchant):  # type: ignore[no-untyped-def]
    user = get_user_model().objects.create_user(username="ops", password="x")
    category = CategoryFactory(merchant=merchant, name="School fees", created_by=user)
    sub_category = SubCategoryFactory(
        category=category, name="Tuition", business_registration_type_id=7
    )
    split = TransactionSplitFactory(merchant=merchant)
    return PaymentItemFactory(
        merchant=merchant,
        category=category,
        sub_category=sub_category,
        name="First term tuition",
        description="Term one",
        amount=Decimal("7000.00"),
        form_data=FORM_DATA,
        is_enumerated_data=True,
        transaction_split=split,
        allow_quick_print=True,
        can_edit_item=False,
        show_on_agent_app=True,
    )


# --- list --------------------------------------------------------------------------------------


def test_list_returns_the_list_view_of_each_active_item(test_client: APIClient, item) -> None:
    response = test_client.get(LIST_URL)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] is True
    assert body["statusCode"] == 200
    assert body["message"] == "Payment items retrieved"
    [row] = body["data"]
    assert set(row) == LIST_FIELDS
    assert row["id"] == item.pk
    assert row["core_service_business_id"] == item.business_id
    assert row["name"] == "First term tuition"
    assert row["description"] == "Term one"
    assert row["amount"] == "7000.00"
    assert row["form_data"] == FORM_DATA
    assert row["is_enumerated_data"] is True
    assert row["transaction_split_code"] == item.transaction_split_id
    assert row["category"] == item.category_id
    assert row["category_details"] == {
        "id": item.category_id,
        "name": "School fees",
        "status": 1,
    }
    assert row["sub_category"] == item.sub_category_id
    assert row["sub_category_details"] == {
        "id": item.sub_category_id,
        "name": "Tuition",
        "status": 1,
    }
    assert row["status"] == 1
    assert row["is_deleted"] is False
    assert row["allow_quick_print"] is True
    assert iso(row["created_at"]) == item.created_at
    assert row["delete_at"] is None


def test_list_hides_inactive_deleted_and_foreign_items(
    test_client: APIClient, merchant: Merchant, item
) -> None:
    PaymentItemFactory(merchant=merchant, status=CatalogueStatus.INACTIVE)
    PaymentItemFactory(merchant=merchant, is_deleted=True)
    PaymentItemFactory(merchant=merchant, mode=Mode.LIVE)
    PaymentItemFactory()  # another merchant
    ids = [row["id"] for row in test_client.get(LIST_URL).json()["data"]]
    assert ids == [item.pk]


def test_list_of_a_merchant_without_items_is_empty(test_client: APIClient) -> None:
    response = test_client.get(LIST_URL)
    assert response.status_code == 200
    assert response.json()["data"] == []


def test_variable_item_amount_is_zero(test_client: APIClient, merchant: Merchant) -> None:
    PaymentItemFactory(merchant=merchant, amount=Decimal("0"))
    assert test_client.get(LIST_URL).json()["data"][0]["amount"] == "0.00"


def test_item_without_split_has_an_empty_split_code(
    test_client: APIClient, merchant: Merchant
) -> None:
    PaymentItemFactory(merchant=merchant)
    row = test_client.get(LIST_URL).json()["data"][0]
    assert row["transaction_split_code"] == ""
    assert row["form_data"] == []
    assert row["description"] is None


def test_live_key_sees_only_live_items(
    live_client: APIClient, test_client: APIClient, merchant: Merchant, item
) -> None:
    live_item = PaymentItemFactory(merchant=merchant, mode=Mode.LIVE)
    assert [row["id"] for row in live_client.get(LIST_URL).json()["data"]] == [live_item.pk]
    assert [row["id"] for row in test_client.get(LIST_URL).json()["data"]] == [item.pk]


def test_list_runs_a_fixed_number_of_queries(
    test_client: APIClient, merchant: Merchant, django_assert_num_queries
) -> None:
    PaymentItemFactory.create_batch(5, merchant=merchant)
    with django_assert_num_queries(2):  # the key, then the items with their categories
        response = test_client.get(LIST_URL)
    assert len(response.json()["data"]) == 5


# --- detail ------------------------------------------------------------------------------------


def test_detail_returns_the_detail_view(test_client: APIClient, item) -> None:
    response = test_client.get(detail_url(item.pk))
    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Payment item retrieved"
    data = body["data"]
    assert set(data) == DETAIL_FIELDS
    assert data["id"] == item.pk
    assert data["amount"] == "7000.00"
    assert data["form_data"] == FORM_DATA
    assert data["can_edit_item"] is False
    assert data["show_on_agent_app"] is True
    assert iso(data["updated_at"]) == item.updated_at
    assert iso(data["created_at"]) == item.created_at
    category = item.category
    assert set(data["category_details"]) == CATEGORY_DETAIL_FIELDS
    assert data["category_details"]["id"] == category.pk
    assert data["category_details"]["name"] == "School fees"
    assert data["category_details"]["status"] == 1
    assert data["category_details"]["created_by"] == category.created_by_id
    assert data["category_details"]["is_deleted"] is False
    assert data["category_details"]["delete_at"] is None
    assert iso(data["category_details"]["created_at"]) == category.created_at
    assert iso(data["category_details"]["updated_at"]) == category.updated_at
    sub = item.sub_category
    assert set(data["sub_category_details"]) == CATEGORY_DETAIL_FIELDS | {
        "business_registration_type_id"
    }
    assert data["sub_category_details"]["id"] == sub.pk
    assert data["sub_category_details"]["name"] == "Tuition"
    assert data["sub_category_details"]["business_registration_type_id"] == 7
    assert data["sub_category_details"]["created_by"] is None


def test_detail_shows_an_inactive_item_with_its_status(
    test_client: APIClient, merchant: Merchant
) -> None:
    inactive = PaymentItemFactory(merchant=merchant, status=CatalogueStatus.INACTIVE)
    response = test_client.get(detail_url(inactive.pk))
    assert response.status_code == 200
    assert response.json()["data"]["status"] == 0


@pytest.mark.parametrize("owner", ["other_merchant", "other_mode", "missing", "huge"])
def test_detail_of_an_item_not_visible_to_the_key_is_404(
    test_client: APIClient, merchant: Merchant, owner: str
) -> None:
    target = {
        "other_merchant": lambda: PaymentItemFactory().pk,
        "other_mode": lambda: PaymentItemFactory(merchant=merchant, mode=Mode.LIVE).pk,
        "missing": lambda: 987654321,
        "huge": lambda: 10**30,
    }[owner]()
    response = test_client.get(detail_url(target))
    assert response.status_code == 404
    assert response.json() == {
        "status": False,
        "message": "Payment item not found",
        "data": None,
        "statusCode": 404,
    }


def test_non_numeric_id_is_not_a_route(test_client: APIClient) -> None:
    response = test_client.get(detail_url("abc"))
    assert response.status_code == 404
    assert response.json()["status"] is False


def test_detail_runs_a_fixed_number_of_queries(
    test_client: APIClient, item, django_assert_num_queries
) -> None:
    with django_assert_num_queries(2):
        assert test_client.get(detail_url(item.pk)).status_code == 200


# --- authentication ----------------------------------------------------------------------------


@pytest.fixture(params=["list", "detail"])
def route(request, item) -> str:  # type: ignore[no-untyped-def]
    return LIST_URL if request.param == "list" else detail_url(item.pk)


def test_missing_header_is_bare_403(api_client: APIClient, route: str) -> None:
    response = api_client.get(route)
    assert response.status_code == 403
    assert response.json() == BARE_FORBIDDEN


def test_wrong_scheme_is_bare_403(api_client: APIClient, merchant_account, route: str) -> None:
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {merchant_account.test_key.plaintext}")
    response = api_client.get(route)
    assert response.status_code == 403
    assert response.json() == BARE_FORBIDDEN


def test_unknown_key_is_bare_403(api_client: APIClient, route: str) -> None:
    api_client.credentials(HTTP_AUTHORIZATION="Bearer sk_test_" + "n" * 43)
    response = api_client.get(route)
    assert response.status_code == 403
    assert response.json() == BARE_FORBIDDEN


def test_revoked_key_is_bare_403(client_for, merchant_account, route: str) -> None:
    old_key = merchant_account.test_key.plaintext
    secret_key_rotate(merchant=merchant_account.merchant, mode=Mode.TEST)
    response = client_for(old_key).get(route)
    assert response.status_code == 403
    assert response.json() == BARE_FORBIDDEN
