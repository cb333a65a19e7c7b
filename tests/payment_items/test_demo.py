"""The catalogue part of seed_demo."""

from __future__ import annotations

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from merchants.models import Mode
from payment_items.demo import demo_catalogue_seed
from payment_items.models import CatalogueStatus, PaymentItem, Subaccount

pytestmark = pytest.mark.django_db


def test_demo_catalogue_creates_fixed_variable_and_inactive_items(merchant) -> None:
    seeded = demo_catalogue_seed(merchant=merchant)
    items = seeded["payment_items"]
    fixed = PaymentItem.objects.get(pk=items["fixed"])
    variable = PaymentItem.objects.get(pk=items["variable"])
    inactive = PaymentItem.objects.get(pk=items["inactive"])
    assert fixed.amount == Decimal("7000.00")
    assert fixed.status == CatalogueStatus.ACTIVE
    assert fixed.transaction_split_id == seeded["transaction_split_code"]
    assert fixed.form_data and fixed.form_data[0]["name"] == "student_id"
    assert variable.amount == Decimal("0")
    assert variable.status == CatalogueStatus.ACTIVE
    assert inactive.status == CatalogueStatus.INACTIVE
    for item in (fixed, variable, inactive):
        assert item.merchant_id == merchant.pk
        assert item.mode == Mode.TEST
        item.full_clean()


def test_demo_catalogue_creates_two_subaccounts_and_a_split(merchant) -> None:
    seeded = demo_catalogue_seed(merchant=merchant)
    codes = seeded["subaccount_codes"]
    assert len(codes) == 2
    subaccounts = Subaccount.objects.filter(account_code__in=codes, merchant=merchant)
    assert {s.mode for s in subaccounts} == {Mode.TEST}
    assert subaccounts.count() == 2
    fixed = PaymentItem.objects.get(pk=seeded["payment_items"]["fixed"])
    shares = {
        row.subaccount.account_code: row.share for row in fixed.transaction_split.shares.all()
    }
    assert shares == {codes[0]: Decimal("10.00"), codes[1]: Decimal("5.00")}


def test_seeded_items_are_listed_for_the_test_key(merchant, test_client) -> None:
    seeded = demo_catalogue_seed(merchant=merchant)
    ids = {
        row["id"] for row in test_client.get("/api/v1/transactions/in/payment-items").json()["data"]
    }
    assert ids == {seeded["payment_items"]["fixed"], seeded["payment_items"]["variable"]}


def test_seed_demo_json_includes_the_catalogue_keys() -> None:
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out)
    seeded = json.loads(out.getvalue())
    assert set(seeded["payment_items"]) == {"fixed", "variable", "inactive"}
    assert len(seeded["subaccount_codes"]) >= 2
    fixed = PaymentItem.objects.get(pk=seeded["payment_items"]["fixed"])
    assert fixed.merchant_id == seeded["merchant_id"]
