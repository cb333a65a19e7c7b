"""Catalogue writes (the admin edits through model forms; code paths use these)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from merchants.models import Merchant
from payment_items.models import (
    Business,
    Category,
    PaymentItem,
    SplitType,
    Subaccount,
    SubCategory,
    TransactionSplit,
    TransactionSplitShare,
)


def business_create(*, merchant: Merchant, mode: str, business_name: str) -> Business:
    business = Business(merchant=merchant, mode=mode, business_name=business_name)
    business.full_clean()
    business.save()
    return business


def category_create(*, merchant: Merchant, mode: str, name: str, **extra: Any) -> Category:
    category = Category(merchant=merchant, mode=mode, name=name, **extra)
    category.full_clean()
    category.save()
    return category


def sub_category_create(*, category: Category, name: str, **extra: Any) -> SubCategory:
    sub_category = SubCategory(category=category, name=name, **extra)
    sub_category.full_clean()
    sub_category.save()
    return sub_category


def subaccount_create(
    *,
    merchant: Merchant,
    mode: str,
    bank: Any,
    account_number: str,
    account_name: str,
) -> Subaccount:
    subaccount = Subaccount(
        merchant=merchant,
        mode=mode,
        bank=bank,
        account_number=account_number,
        account_name=account_name,
    )
    subaccount.full_clean()
    subaccount.save()
    return subaccount


@transaction.atomic
def transaction_split_create(
    *,
    merchant: Merchant,
    mode: str,
    name: str,
    split_type: str = SplitType.PERCENTAGE,
    shares: list[tuple[Subaccount, Decimal]],
) -> TransactionSplit:
    """A split with one share per subaccount; percentage shares must total at most 100."""
    if split_type == SplitType.PERCENTAGE and sum(s for _, s in shares) > Decimal("100"):
        raise ValidationError({"shares": "percentage shares must total at most 100"})
    split = TransactionSplit(merchant=merchant, mode=mode, name=name, split_type=split_type)
    split.full_clean()
    split.save()
    for subaccount, share in shares:
        row = TransactionSplitShare(split=split, subaccount=subaccount, share=share)
        row.full_clean()
        row.save()
    return split


def payment_item_create(*, merchant: Merchant, mode: str, **fields: Any) -> PaymentItem:
    """Validates every field (``form_data`` included) and the merchant/mode of every link."""
    item = PaymentItem(merchant=merchant, mode=mode, **fields)
    item.full_clean()
    item.save()
    return item
