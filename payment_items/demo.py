"""Demo data for ``seed_demo``: the catalogue part (test mode)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, NamedTuple

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


class DemoSubaccount(NamedTuple):
    account_number: str
    account_name: str
    share: Decimal  # its percentage of the demo split


# One a bank, in the bank list's order.
DEMO_SUBACCOUNTS = (
    DemoSubaccount("0123456789", "Demo Academy Bursary", Decimal("10")),
    DemoSubaccount("9876543210", "Demo Academy Library Fund", Decimal("5")),
)


@transaction.atomic
def demo_catalogue_seed(*, merchant: Merchant) -> dict[str, Any]:
    """Creates, in test mode: a business, a category and sub-category, two subaccounts, a
    percentage split (10% and 5%), a fixed item (7,000.00, with the split), a variable item
    and an inactive item. Returns the ``seed_demo --json`` keys."""
    from wallets.models import Bank

    mode = Mode.TEST
    banks = list(Bank.objects.filter(is_active=True).order_by("id")[: len(DEMO_SUBACCOUNTS)])
    if len(banks) < len(DEMO_SUBACCOUNTS):
        raise RuntimeError("The bank list is empty; run `python manage.py migrate` first.")

    business = business_create(
        merchant=merchant, mode=mode, business_name=f"{merchant.name} Academy"
    )
    category = category_create(merchant=merchant, mode=mode, name="School fees")
    sub_category = sub_category_create(
        category=category, name="Tuition", business_registration_type_id=1
    )
    subaccounts = [
        subaccount_create(
            merchant=merchant,
            mode=mode,
            bank=bank,
            account_number=demo.account_number,
            account_name=demo.account_name,
        )
        for bank, demo in zip(banks, DEMO_SUBACCOUNTS, strict=True)
    ]
    split = transaction_split_create(
        merchant=merchant,
        mode=mode,
        name="Tuition split",
        shares=[
            (subaccount, demo.share)
            for subaccount, demo in zip(subaccounts, DEMO_SUBACCOUNTS, strict=True)
        ],
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
        "subaccount_codes": [subaccount.account_code for subaccount in subaccounts],
        "transaction_split_code": split.transaction_split_code,
    }
