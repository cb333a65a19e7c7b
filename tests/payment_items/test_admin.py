"""The back office refuses malformed form_data and cross-merchant links, and soft-deletes."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.test import Client

from audit.models import AuditRecord
from merchants.models import Merchant
from payment_items.models import PaymentItem, TransactionSplitShare
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import act_records, actions_offered, assert_admin_forbidden, client_for
from tests.payment_items.factories import (
    BusinessFactory,
    CategoryFactory,
    PaymentItemFactory,
    SubaccountFactory,
    SubCategoryFactory,
    TransactionSplitFactory,
)

pytestmark = pytest.mark.django_db

ITEMS = "/admin/payment_items/paymentitem/"
ADD_URL = f"{ITEMS}add/"


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


# --- Who may change the catalogue, and the audit trail -----------------------------------------


def test_a_view_only_user_cannot_mark_items_deleted(merchant) -> None:
    item = PaymentItemFactory(merchant=merchant)
    client = client_for(StaffUserFactory(permissions=["payment_items.view_paymentitem"]))
    listing = client.get(ITEMS)
    assert listing.status_code == 200
    assert actions_offered(listing) == set()
    response = client.post(ITEMS, {"action": "mark_deleted", "_selected_action": [item.pk]})
    assert_admin_forbidden(response)
    item.refresh_from_db()
    assert item.is_deleted is False
    assert not act_records().exists()


def test_a_view_only_user_cannot_edit_an_item(merchant) -> None:
    item = PaymentItemFactory(merchant=merchant, name="Old name")
    client = client_for(StaffUserFactory(permissions=["payment_items.view_paymentitem"]))
    page = client.get(f"{ITEMS}{item.pk}/change/")
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    response = client.post(f"{ITEMS}{item.pk}/change/", item_post_data(merchant, name="New"))
    assert_admin_forbidden(response)
    item.refresh_from_db()
    assert item.name == "Old name"


def test_ops_marks_items_deleted_and_each_is_audited(merchant) -> None:
    ops = StaffUserFactory(roles=["ops"])
    first, second = PaymentItemFactory(merchant=merchant), PaymentItemFactory(merchant=merchant)
    client = client_for(ops)
    assert actions_offered(client.get(ITEMS)) == {"mark_deleted"}
    response = client.post(
        ITEMS, {"action": "mark_deleted", "_selected_action": [first.pk, second.pk]}
    )
    assert response.status_code == 302
    assert set(PaymentItem.objects.filter(is_deleted=True).values_list("pk", flat=True)) == {
        first.pk,
        second.pk,
    }
    records = AuditRecord.objects.filter(action="payment_items.paymentitem.mark_deleted")
    assert {record.object_id for record in records} == {str(first.pk), str(second.pk)}
    assert all(record.actor == ops for record in records)
    assert all(record.before == {"is_deleted": False} for record in records)


def test_ops_edits_an_item_and_the_change_is_audited(merchant) -> None:
    ops = StaffUserFactory(roles=["ops"])
    response = client_for(ops).post(ADD_URL, item_post_data(merchant))
    assert response.status_code == 302
    item = PaymentItem.objects.get(name="Admission form")
    created = AuditRecord.objects.get(action="payment_items.paymentitem.add")
    assert (created.actor, created.object_id) == (ops, str(item.pk))
    assert created.after["amount"] == "2500.00"
    data = item_post_data(merchant, amount="3000.00")
    data.update(business=item.business_id, category=item.category_id)
    data["sub_category"] = item.sub_category_id
    response = client_for(ops).post(f"{ITEMS}{item.pk}/change/", data)
    assert response.status_code == 302
    changed = AuditRecord.objects.get(action="payment_items.paymentitem.change")
    assert changed.before["amount"] == "2500.00"
    assert changed.after["amount"] == "3000.00"


def test_ops_cannot_touch_subaccounts(merchant) -> None:
    subaccount = SubaccountFactory(merchant=merchant)
    client = client_for(StaffUserFactory(roles=["ops"]))
    assert client.get("/admin/payment_items/subaccount/").status_code == 200
    response = client.post(
        f"/admin/payment_items/subaccount/{subaccount.pk}/change/", {"account_number": "1"}
    )
    assert_admin_forbidden(response)
