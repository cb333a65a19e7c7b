"""Catalogue writes (the admin edits through model forms; code paths use these)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import models, transaction

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

RowT = TypeVar("RowT", bound=models.Model)


def _validated_save(row: RowT) -> RowT:
    """Saves ``row`` once every field and link passes the model's own validation."""
    row.full_clean()
    row.save()
    return row


def business_create(*, merchant: Merchant, mode: str, business_name: str) -> Business:
    return _validated_save(Business(merchant=merchant, mode=mode, business_name=business_name))


def category_create(*, merchant: Merchant, mode: str, name: str, **extra: Any) -> Category:
    return _validated_save(Category(merchant=merchant, mode=mode, name=name, **extra))


def sub_category_create(*, category: Category, name: str, **extra: Any) -> SubCategory:
    return _validated_save(SubCategory(category=category, name=name, **extra))


def subaccount_create(
    *,
    merchant: Merchant,
    mode: str,
    bank: Any,
    account_number: str,
    account_name: str,
) -> Subaccount:
    return _validated_save(
        Subaccount(
            merchant=merchant,
            mode=mode,
            bank=bank,
            account_number=account_number,
            account_name=account_name,
        )
    )


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
    split = _validated_save(
        TransactionSplit(merchant=merchant, mode=mode, name=name, split_type=split_type)
    )
    for subaccount, share in shares:
        _validated_save(TransactionSplitShare(split=split, subaccount=subaccount, share=share))
    return split


def payment_item_create(*, merchant: Merchant, mode: str, **fields: Any) -> PaymentItem:
    """Validates every field (``form_data`` included) and the merchant/mode of every link."""
    return _validated_save(PaymentItem(merchant=merchant, mode=mode, **fields))
