"""Model rules the admin relies on: cross-merchant links and form_data are refused."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from merchants.models import Mode
from payment_items.models import SplitType
from tests.payment_items.factories import (
    BusinessFactory,
    CategoryFactory,
    PaymentItemFactory,
    SubaccountFactory,
    SubCategoryFactory,
    TransactionSplitFactory,
    TransactionSplitShareFactory,
)

pytestmark = pytest.mark.django_db


def test_a_valid_item_passes_full_clean() -> None:
    item = PaymentItemFactory()
    item.full_clean()


def test_malformed_form_data_fails_full_clean() -> None:
    item = PaymentItemFactory.build(form_data=[{"name": "x"}])
    with pytest.raises(ValidationError) as caught:
        item.full_clean(exclude=["merchant", "business", "category", "sub_category"])
    assert "form_data" in caught.value.message_dict


def test_business_of_another_merchant_is_refused() -> None:
    item = PaymentItemFactory()
    item.business = BusinessFactory()
    with pytest.raises(ValidationError) as caught:
        item.full_clean()
    assert caught.value.message_dict["business"] == ["must belong to the same merchant and mode"]


def test_category_of_the_other_mode_is_refused() -> None:
    item = PaymentItemFactory()
    item.category = CategoryFactory(merchant=item.merchant, mode=Mode.LIVE)
    item.sub_category = SubCategoryFactory(category=item.category)
    with pytest.raises(ValidationError) as caught:
        item.full_clean()
    assert "category" in caught.value.message_dict


def test_sub_category_must_belong_to_the_category() -> None:
    item = PaymentItemFactory()
    other = CategoryFactory(merchant=item.merchant)
    item.sub_category = SubCategoryFactory(category=other)
    with pytest.raises(ValidationError) as caught:
        item.full_clean()
    assert caught.value.message_dict["sub_category"] == ["must belong to the chosen category"]


def test_split_of_another_merchant_is_refused() -> None:
    item = PaymentItemFactory()
    item.transaction_split = TransactionSplitFactory()
    with pytest.raises(ValidationError) as caught:
        item.full_clean()
    assert "transaction_split" in caught.value.message_dict


def test_negative_amount_is_refused() -> None:
    item = PaymentItemFactory()
    item.amount = Decimal("-1.00")
    with pytest.raises(ValidationError) as caught:
        item.full_clean()
    assert "amount" in caught.value.message_dict


def test_transaction_split_code_reads_the_code_without_a_query(
    django_assert_num_queries,
) -> None:
    split = TransactionSplitFactory()
    item = PaymentItemFactory(merchant=split.merchant, transaction_split=split)
    with django_assert_num_queries(0):
        assert item.transaction_split_code == split.transaction_split_code
    assert PaymentItemFactory().transaction_split_code == ""


def test_soft_delete_sets_and_clears_delete_at() -> None:
    item = PaymentItemFactory()
    item.is_deleted = True
    item.save()
    assert item.delete_at is not None
    item.is_deleted = False
    item.save()
    assert item.delete_at is None


def test_codes_are_generated_and_unique() -> None:
    first, second = SubaccountFactory(), SubaccountFactory()
    assert first.account_code.startswith("ACCT_")
    assert first.account_code != second.account_code
    assert TransactionSplitFactory().transaction_split_code.startswith("SPL_")


def test_subaccount_account_number_must_be_ten_digits() -> None:
    subaccount = SubaccountFactory.build(account_number="12345", merchant=None)
    with pytest.raises(ValidationError) as caught:
        subaccount.full_clean(exclude=["merchant"])
    assert "account_number" in caught.value.message_dict


def test_percentage_share_above_100_is_refused() -> None:
    share = TransactionSplitShareFactory(share=Decimal("10"))
    share.share = Decimal("100.01")
    with pytest.raises(ValidationError) as caught:
        share.full_clean()
    assert "share" in caught.value.message_dict


def test_flat_share_may_exceed_100() -> None:
    share = TransactionSplitShareFactory(split__split_type=SplitType.FLAT, share=Decimal("500"))
    share.full_clean()


def test_share_subaccount_must_match_the_split_merchant() -> None:
    share = TransactionSplitShareFactory()
    share.subaccount = SubaccountFactory()
    with pytest.raises(ValidationError) as caught:
        share.full_clean()
    assert "subaccount" in caught.value.message_dict
