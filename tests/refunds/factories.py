"""Factories for refunds and what a refund needs around it: a paid collection, a settlement
that settled it (as the settlement engine records one)."""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

import factory
from django.db import transaction
from django.utils import timezone

from collections_app.models import CollectionTransaction, PaymentStatus
from collections_app.services import transaction_confirm
from merchants.models import Merchant, Mode
from refunds.models import Refund, RefundStatus
from settlements.models import PlatformAccount, Settlement
from settlements.platform_ledger import platform_post
from tests.collections_app.factories import CollectionTransactionFactory
from tests.merchants.factories import MerchantFactory
from wallets.models import LedgerEntryType, Wallet
from wallets.services import wallet_collection_credit, wallet_lock


class SettlementFactory(factory.django.DjangoModelFactory):
    """A settlement record with no money of its own (gross 0); use ``collection_settle`` to
    settle a collection as the engine does."""

    class Meta:
        model = Settlement

    settlement_id = factory.LazyFunction(lambda: f"stl_factory_{secrets.token_hex(8)}")
    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    period_end = factory.LazyFunction(timezone.now)
    transaction_count = 0
    gross = Decimal("0.00")
    fees = Decimal("0.00")
    subaccount_shares = Decimal("0.00")
    refunds_deducted = Decimal("0.00")
    net = Decimal("0.00")
    settled_at = factory.LazyFunction(timezone.now)


class RefundFactory(factory.django.DjangoModelFactory):
    """A refund row only (no money moved): for list and detail tests."""

    class Meta:
        model = Refund

    refund_id = factory.Sequence(lambda n: f"rf_factory_{n:010d}")
    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    collection = factory.SubFactory(
        CollectionTransactionFactory,
        merchant=factory.SelfAttribute("..merchant"),
        mode=factory.SelfAttribute("..mode"),
    )
    amount = Decimal("1000.00")
    deducted_from_settlement = Decimal("1000.00")
    idempotency_key = factory.Sequence(lambda n: f"refund-key-{n}")
    request_fingerprint = "0" * 64
    status = RefundStatus.PENDING
    provider_name = "sandbox"


def paid_collection(
    *, merchant: Merchant, mode: str = Mode.TEST, **fields: Any
) -> CollectionTransaction:
    """A collection of ``merchant`` paid through the confirmation service (so the platform
    ledger has its paid postings): 7,000.00 + fee 205.00 = 7,205.00 paid by default."""
    pending = CollectionTransactionFactory(merchant=merchant, mode=mode, **fields)
    confirmed = transaction_confirm(collection=pending, outcome=PaymentStatus.PAID)
    return confirmed.transaction


def collection_settle(collection: CollectionTransaction) -> Settlement:
    """Settles one paid collection as the settlement engine does: the merchant's pending refund
    deductions taken oldest first while the net stays at or above zero, a settlement of the
    net, the wallet credited by a ``settlement`` entry, owed_merchants moved to
    merchant_credits."""
    owed = collection.amount_paid - collection.transaction_fee
    with transaction.atomic():
        wallet = Wallet.objects.get(merchant_id=collection.merchant_id, mode=collection.mode)
        wallet = wallet_lock(wallet_id=wallet.pk)
        deductions = []
        deducted = Decimal("0.00")
        pending = Refund.objects.filter(
            merchant_id=collection.merchant_id,
            mode=collection.mode,
            deducted_from_settlement__gt=0,
            settlement__isnull=True,
        ).exclude(status=RefundStatus.FAILED)
        for refund in pending.order_by("id"):
            if deducted + refund.deducted_from_settlement > owed:
                break
            deducted += refund.deducted_from_settlement
            deductions.append(refund.pk)
        net = owed - deducted
        settlement = SettlementFactory(
            merchant_id=collection.merchant_id,
            mode=collection.mode,
            transaction_count=1,
            gross=collection.amount_paid,
            fees=collection.transaction_fee,
            refunds_deducted=deducted,
            net=net,
        )
        if net > 0:
            entry = wallet_collection_credit(
                wallet=wallet,
                entry_type=LedgerEntryType.SETTLEMENT,
                amount=net,
                reference=settlement.settlement_id,
            )
            settlement.ledger_entry = entry
            settlement.save(update_fields=["ledger_entry"])
        CollectionTransaction.objects.filter(pk=collection.pk).update(settlement=settlement)
        Refund.objects.filter(pk__in=deductions).update(settlement=settlement)
        platform_post(
            mode=collection.mode,
            group=f"settlement:{settlement.settlement_id}",
            postings={
                PlatformAccount.OWED_MERCHANTS: -net,
                PlatformAccount.MERCHANT_CREDITS: net,
            },
            merchant_id=collection.merchant_id,
            settlement_id=settlement.pk,
        )
    collection.refresh_from_db()
    return settlement


def wallet_of(merchant: Merchant, mode: str = Mode.TEST) -> Wallet:
    return Wallet.objects.get(merchant=merchant, mode=mode)
