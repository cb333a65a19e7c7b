from __future__ import annotations

from decimal import Decimal

import pytest

from core.exceptions import ApplicationError
from payment_items.models import SplitType
from payment_items.splits import transaction_split_breakdown
from tests.payment_items.factories import TransactionSplitFactory, TransactionSplitShareFactory

pytestmark = pytest.mark.django_db


def test_percentage_shares_are_rounded_down_to_the_kobo() -> None:
    split = TransactionSplitFactory()
    first = TransactionSplitShareFactory(split=split, share=Decimal("33.33"))
    second = TransactionSplitShareFactory(split=split, share=Decimal("12.5"))
    breakdown = transaction_split_breakdown(split=split, amount=Decimal("100.01"))
    assert [(e.subaccount.pk, e.share) for e in breakdown] == [
        (first.subaccount.pk, Decimal("33.33")),  # 33.333333 -> 33.33
        (second.subaccount.pk, Decimal("12.50")),  # 12.50125 -> 12.50
    ]


def test_percentage_shares_never_exceed_the_amount() -> None:
    split = TransactionSplitFactory()
    TransactionSplitShareFactory(split=split, share=Decimal("50"))
    TransactionSplitShareFactory(split=split, share=Decimal("50"))
    breakdown = transaction_split_breakdown(split=split, amount=Decimal("0.01"))
    assert sum(e.share for e in breakdown) <= Decimal("0.01")


def test_flat_shares_are_taken_as_they_are() -> None:
    split = TransactionSplitFactory(split_type=SplitType.FLAT)
    TransactionSplitShareFactory(split=split, share=Decimal("1500.00"))
    breakdown = transaction_split_breakdown(split=split, amount=Decimal("7000.00"))
    assert [e.share for e in breakdown] == [Decimal("1500.00")]


def test_flat_shares_above_the_amount_are_refused() -> None:
    split = TransactionSplitFactory(split_type=SplitType.FLAT)
    TransactionSplitShareFactory(split=split, share=Decimal("1500.00"))
    with pytest.raises(ApplicationError, match="exceed the transaction amount"):
        transaction_split_breakdown(split=split, amount=Decimal("1000.00"))
