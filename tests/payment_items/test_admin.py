"""The back office refuses malformed form_data and cross-merchant links, and soft-deletes."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.test import Client

from merchants.models import Merchant
from payment_items.models import PaymentItem, TransactionSplitShare
from tests.payment_items.factories import (
    BusinessFactory,
    CategoryFactory,
    PaymentItemFactory,
    SubaccountFactory,
    SubCategoryFactory,
    TransactionSplitFactory,
)

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/payment_items/paymentitem/add/"


def item_post_data(merchant: Merchant, **overrides: object) -> dict[str, object]:
    business = BusinessFactory(merchant=merchant)
    category = CategoryFactory(merchant=merchant)
    sub_category = SubCategoryFactory(category=category)
    data: dict[str, object] = {
        "merchant": merchant.pk,
        "mode": "test",
        "business": business.pk,
        "name": "Admission form",
        "description": "",
        "amount": "2500.00",
        "form_data": json.dumps(
            [{"name": "pupil", "type": "input", "value": "", "options": [], "required": True}]
        ),
        "category": category.pk,
        "sub_category": sub_category.pk,
        "status": "1",
        "can_edit_item": "on",
    }
    data.update(overrides)
    return data


def test_admin_creates_an_item_with_valid_form_data(admin_client: Client, merchant) -> None:
    response = admin_client.post(ADD_URL, item_post_data(merchant))
    assert response.status_code == 302
    item = PaymentItem.objects.get(name="Admission form")
    assert item.form_data[0]["name"] == "pupil"
    assert item.amount == Decimal("2500.00")


@pytest.mark.parametrize(
    ("form_data", "message"),
    [
        ('{"name": "x"}', "must be an array"),
        ("[{", "Enter a valid JSON"),
        ('[{"name": "x", "type": "input"}]', "missing value, options, required"),
        (
            '[{"name": "x", "type": "input", "value": "", "options": [], "required": "yes"}]',
            "required: must be true or false",
        ),
    ],
)
def test_admin_rejects_malformed_form_data(
    admin_client: Client, merchant, form_data: str, message: str
) -> None:
    response = admin_client.post(ADD_URL, item_post_data(merchant, form_data=form_data))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not PaymentItem.objects.filter(name="Admission form").exists()


def test_admin_rejects_a_business_of_another_merchant(admin_client: Client, merchant) -> None:
    data = item_post_data(merchant, business=BusinessFactory().pk)
    response = admin_client.post(ADD_URL, data)
    assert response.status_code == 200
    assert "must belong to the same merchant and mode" in response.content.decode()
    assert not PaymentItem.objects.filter(name="Admission form").exists()


def test_admin_rejects_a_negative_amount(admin_client: Client, merchant) -> None:
    response = admin_client.post(ADD_URL, item_post_data(merchant, amount="-5.00"))
    assert response.status_code == 200
    assert not PaymentItem.objects.filter(name="Admission form").exists()


def test_mark_deleted_action_soft_deletes(admin_client: Client, merchant) -> None:
    item = PaymentItemFactory(merchant=merchant)
    response = admin_client.post(
        "/admin/payment_items/paymentitem/",
        {"action": "mark_deleted", "_selected_action": [item.pk]},
    )
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.is_deleted is True
    assert item.delete_at is not None


def test_category_admin_records_the_creating_user(admin_client: Client, merchant) -> None:
    response = admin_client.post(
        "/admin/payment_items/category/add/",
        {
            "merchant": merchant.pk,
            "mode": "test",
            "name": "Levies",
            "status": "1",
            "sub_categories-TOTAL_FORMS": "0",
            "sub_categories-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302
    from payment_items.models import Category

    category = Category.objects.get(name="Levies")
    assert category.created_by is not None
    assert category.created_by.is_superuser


def test_split_admin_refuses_percentages_over_100(admin_client: Client, merchant) -> None:
    split = TransactionSplitFactory(merchant=merchant)
    first = SubaccountFactory(merchant=merchant)
    second = SubaccountFactory(merchant=merchant)
    response = admin_client.post(
        f"/admin/payment_items/transactionsplit/{split.pk}/change/",
        {
            "merchant": merchant.pk,
            "mode": "test",
            "name": split.name,
            "split_type": "percentage",
            "is_active": "on",
            "shares-TOTAL_FORMS": "2",
            "shares-INITIAL_FORMS": "0",
            "shares-0-subaccount": first.pk,
            "shares-0-share": "60",
            "shares-1-subaccount": second.pk,
            "shares-1-share": "50",
        },
    )
    assert response.status_code == 200
    assert "more than 100%" in response.content.decode()
    assert not TransactionSplitShare.objects.filter(split=split).exists()
