from __future__ import annotations

from decimal import Decimal

import factory

from merchants.models import Mode
from payment_items.models import (
    Business,
    CatalogueStatus,
    Category,
    PaymentItem,
    SplitType,
    Subaccount,
    SubCategory,
    TransactionSplit,
    TransactionSplitShare,
)
from tests.merchants.factories import MerchantFactory


def _first_bank():  # type: ignore[no-untyped-def]
    from wallets.models import Bank

    bank = Bank.objects.filter(is_active=True).order_by("id").first()
    assert bank is not None, "banks are seeded by the wallets migrations"
    return bank


class BusinessFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Business

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    business_name = factory.Sequence(lambda n: f"Business {n}")


class CategoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Category

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    name = factory.Sequence(lambda n: f"Category {n}")
    status = CatalogueStatus.ACTIVE


class SubCategoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SubCategory

    category = factory.SubFactory(CategoryFactory)
    name = factory.Sequence(lambda n: f"Sub-category {n}")
    status = CatalogueStatus.ACTIVE
    business_registration_type_id = 3


class SubaccountFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Subaccount

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    bank = factory.LazyFunction(_first_bank)
    account_number = factory.Sequence(lambda n: f"{1000000000 + n}")
    account_name = factory.Sequence(lambda n: f"Subaccount Holder {n}")


class TransactionSplitFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TransactionSplit

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    name = factory.Sequence(lambda n: f"Split {n}")
    split_type = SplitType.PERCENTAGE


class TransactionSplitShareFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TransactionSplitShare

    split = factory.SubFactory(TransactionSplitFactory)
    subaccount = factory.SubFactory(
        SubaccountFactory,
        merchant=factory.SelfAttribute("..split.merchant"),
        mode=factory.SelfAttribute("..split.mode"),
    )
    share = Decimal("10.00")


class PaymentItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PaymentItem

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    business = factory.SubFactory(
        BusinessFactory,
        merchant=factory.SelfAttribute("..merchant"),
        mode=factory.SelfAttribute("..mode"),
    )
    category = factory.SubFactory(
        CategoryFactory,
        merchant=factory.SelfAttribute("..merchant"),
        mode=factory.SelfAttribute("..mode"),
    )
    sub_category = factory.SubFactory(
        SubCategoryFactory, category=factory.SelfAttribute("..category")
    )
    name = factory.Sequence(lambda n: f"Payment item {n}")
    description = None
    amount = Decimal("7000.00")
    form_data = factory.LazyFunction(list)
    status = CatalogueStatus.ACTIVE
