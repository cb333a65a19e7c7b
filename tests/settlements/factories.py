"""Factories for settlement rows and for refunds as the refund service leaves them. They move
no money: scenarios that need the wallet and the platform ledger go through ``helpers``."""

from __future__ import annotations

from decimal import Decimal

import factory
from django.utils import timezone

from merchants.models import Mode
from refunds.models import Refund, RefundStatus
from settlements.models import Settlement, SettlementShare
from tests.merchants.factories import MerchantFactory
from tests.payment_items.factories import SubaccountFactory


class SettlementFactory(factory.django.DjangoModelFactory):
    """A settled day of one 7,205.00 collection (fee 205.00, no shares, no refunds)."""

    class Meta:
        model = Settlement

    settlement_id = factory.Sequence(lambda n: f"STL_FACTORY{n:013d}")
    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    period_start = factory.LazyFunction(timezone.now)
    period_end = factory.LazyFunction(timezone.now)
    transaction_count = 1
    gross = Decimal("7205.00")
    fees = Decimal("205.00")
    subaccount_shares = Decimal("0.00")
    refunds_deducted = Decimal("0.00")
    net = factory.LazyAttribute(
        lambda o: o.gross - o.fees - o.subaccount_shares - o.refunds_deducted
    )
    settled_at = factory.LazyFunction(timezone.now)


class SettlementShareFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SettlementShare

    settlement = factory.SubFactory(SettlementFactory, subaccount_shares=Decimal("700.00"))
    subaccount = factory.SubFactory(
        SubaccountFactory,
        merchant=factory.SelfAttribute("..settlement.merchant"),
        mode=factory.SelfAttribute("..settlement.mode"),
        account_number=factory.Sequence(lambda n: f"{3000000000 + n}"),
    )
    amount = Decimal("700.00")


class RefundFactory(factory.django.DjangoModelFactory):
    """A pending refund of a collection not yet settled, taken wholly from what the merchant is
    owed (``deducted_from_settlement``), as the refund service records it."""

    class Meta:
        model = Refund

    refund_id = factory.Sequence(lambda n: f"RFD_FACTORY{n:013d}")
    merchant = factory.SelfAttribute("collection.merchant")
    mode = factory.SelfAttribute("collection.mode")
    # ``collection`` is required: RefundFactory(collection=...)
    amount = Decimal("1000.00")
    fee_returned = Decimal("0.00")
    deducted_from_settlement = factory.LazyAttribute(lambda o: o.amount - o.fee_returned)
    debited_from_wallet = Decimal("0.00")
    idempotency_key = factory.Sequence(lambda n: f"refund-key-{n}")
    request_fingerprint = "0" * 64
    status = RefundStatus.PENDING
    provider_name = "sandbox"


class TransactionSplitEntryFactory(factory.django.DjangoModelFactory):
    """A subaccount's share of a collection, fixed at initialization."""

    class Meta:
        model = "collections_app.TransactionSplitEntry"

    # ``transaction`` is required: TransactionSplitEntryFactory(transaction=...)
    subaccount = factory.SubFactory(
        SubaccountFactory,
        merchant=factory.SelfAttribute("..transaction.merchant"),
        mode=factory.SelfAttribute("..transaction.mode"),
    )
    share = Decimal("700.00")
