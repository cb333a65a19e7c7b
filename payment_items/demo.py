"""Demo data for ``seed_demo``: the catalogue part (test mode)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction

from merchants.models import Merchant, Mode
from payment_items.models import CatalogueStatus
from payment_items.services import (
    business_create,
    category_create,
    payment_item_create,
    sub_category_create,
    subaccount_create,
    transaction_split_create,
)

DEMO_FORM_DATA = [
    {"name": "student_id", "type": "input", "value": "", "options": [], "required": True},
    {
        "name": "term",
        "type": "select",
        "value": "first",
        "options": ["first", "second", "third"],
        "required": False,
    },
]


@transaction.atomic
def demo_catalogue_seed(*, merchant: Merchant) -> dict[str, Any]:
    """Creates, in test mode: a business, a category and sub-category, two subaccounts, a
    percentage split (10% and 5%), a fixed item (7,000.00, with the split), a variable item
    and an inactive item. Returns the ``seed_demo --json`` keys."""
    from wallets.models import Bank

    mode = Mode.TEST
    banks = list(Bank.objects.filter(is_active=True).order_by("id")[:2])
    if len(banks) < 2:
        raise RuntimeError("The bank list is empty; run `python manage.py migrate` first.")

    business = business_create(
        merchant=merchant, mode=mode, business_name=f"{merchant.name} Academy"
    )
    category = category_create(merchant=merchant, mode=mode, name="School fees")
    sub_category = sub_category_create(
        category=category, name="Tuition", business_registration_type_id=1
    )
    bursary = subaccount_create(
        merchant=merchant,
        mode=mode,
        bank=banks[0],
        account_number="0123456789",
        account_name="Demo Academy Bursary",
    )
    library = subaccount_create(
        merchant=merchant,
        mode=mode,
        bank=banks[1],
        account_number="9876543210",
        account_name="Demo Academy Library Fund",
    )
    split = transaction_split_create(
        merchant=merchant,
        mode=mode,
        name="Tuition split",
        shares=[(bursary, Decimal("10")), (library, Decimal("5"))],
    )
    common = {"business": business, "category": category, "sub_category": sub_category}
    fixed = payment_item_create(
        merchant=merchant,
        mode=mode,
        name="First term tuition",
        description="Tuition for the first term",
        amount=Decimal("7000.00"),
        form_data=DEMO_FORM_DATA,
        transaction_split=split,
        allow_quick_print=True,
        **common,
    )
    variable = payment_item_create(
        merchant=merchant,
        mode=mode,
        name="Development levy (any amount)",
        amount=Decimal("0"),
        **common,
    )
    inactive = payment_item_create(
        merchant=merchant,
        mode=mode,
        name="Old uniform levy",
        amount=Decimal("2500.00"),
        status=CatalogueStatus.INACTIVE,
        **common,
    )
    return {
        "payment_items": {"fixed": fixed.pk, "variable": variable.pk, "inactive": inactive.pk},
        "subaccount_codes": [bursary.account_code, library.account_code],
        "transaction_split_code": split.transaction_split_code,
    }
