from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import factory
from django.utils import timezone

from collections_app.models import (
    Channel,
    CollectionFeeSchedule,
    CollectionTransaction,
    Customer,
    PaymentStatus,
)
from merchants.models import Mode
from tests.merchants.factories import MerchantFactory
from tests.payment_items.factories import PaymentItemFactory


class CollectionFeeScheduleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CollectionFeeSchedule

    name = "Default collections pricing"
    percentage_rate = Decimal("1.50")
    flat_fee = Decimal("100.00")
    flat_fee_waiver_below = Decimal("2500.00")
    fee_cap = Decimal("2000.00")
    is_active = True


class CustomerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Customer

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    customer_tag = factory.Sequence(lambda n: f"CUS_factory{n:08d}")
    email = factory.Sequence(lambda n: f"payer{n}@example.com")
    phone_number = "08012345678"
    first_name = "Ada"
    last_name = "Obi"


class CollectionTransactionFactory(factory.django.DjangoModelFactory):
    """A pending card transaction for a 7,000.00 item (fee 205.00)."""

    class Meta:
        model = CollectionTransaction

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    reference = factory.Sequence(lambda n: f"TXN_FACTORY{n:013d}")
    client_reference = factory.Sequence(lambda n: f"order-{n}")
    request_fingerprint = "0" * 64
    payment_item = factory.SubFactory(
        PaymentItemFactory,
        merchant=factory.SelfAttribute("..merchant"),
        mode=factory.SelfAttribute("..mode"),
    )
    business = factory.SelfAttribute("payment_item.business")
    customer = factory.SubFactory(
        CustomerFactory,
        merchant=factory.SelfAttribute("..merchant"),
        mode=factory.SelfAttribute("..mode"),
    )
    channel = Channel.CARD
    amount = Decimal("7000.00")
    transaction_fee = Decimal("205.00")
    amount_to_be_paid = Decimal("7205.00")
    payment_status = PaymentStatus.PENDING
    callback_url = "https://merchant.example.com/callback"
    initiation_time = factory.LazyFunction(timezone.now)
    expires_at = factory.LazyFunction(lambda: timezone.now() + timedelta(hours=24))
