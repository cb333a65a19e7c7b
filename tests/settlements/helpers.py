"""Scenarios for settlement tests, built through the services that move money: a collection
paid through ``transaction_confirm`` (which posts it to the platform ledger), a refund pending
as the refund service leaves it (its row and its platform postings), the platform and merchant
balances the tests compare."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal

from collections_app.models import CollectionTransaction, PaymentStatus
from collections_app.services import transaction_confirm
from merchants.models import Merchant, Mode
from merchants.services import merchant_create
from payment_items.models import Subaccount
from refunds.models import Refund
from settlements.models import PlatformAccount
from settlements.platform_ledger import platform_post
from tests.collections_app.factories import CollectionTransactionFactory
from tests.payment_items.factories import SubaccountFactory
from tests.settlements.factories import RefundFactory, TransactionSplitEntryFactory
from wallets.models import Wallet

ZERO = Decimal("0.00")
# Sandbox payouts to these accounts succeed (1000000001-3 fail or stay ambiguous).
_ACCOUNT_NUMBERS = itertools.count(2_000_000_000)


def merchant_with_wallets(name: str = "Ada Stores") -> Merchant:
    return merchant_create(name=name, email="ada@example.com").merchant


def subaccount_for(
    merchant: Merchant, *, mode: str = Mode.TEST, account_number: str = ""
) -> Subaccount:
    return SubaccountFactory(
        merchant=merchant,
        mode=mode,
        account_number=account_number or str(next(_ACCOUNT_NUMBERS)),
    )


def paid_collection(
    *,
    merchant: Merchant,
    mode: str = Mode.TEST,
    amount: Decimal = Decimal("7000.00"),
    fee: Decimal = Decimal("205.00"),
    shares: Mapping[Subaccount, Decimal] | None = None,
    paid_at: datetime | None = None,
) -> CollectionTransaction:
    """A collection of ``amount`` plus ``fee`` paid through ``transaction_confirm``, with its
    subaccount ``shares``; ``paid_at`` moved afterwards when given."""
    collection = CollectionTransactionFactory(
        merchant=merchant,
        mode=mode,
        amount=amount,
        transaction_fee=fee,
        amount_to_be_paid=amount + fee,
    )
    for subaccount, share in (shares or {}).items():
        TransactionSplitEntryFactory(transaction=collection, subaccount=subaccount, share=share)
    result = transaction_confirm(collection=collection, outcome=PaymentStatus.PAID)
    assert result.applied
    if paid_at is not None:
        CollectionTransaction.objects.filter(pk=collection.pk).update(paid_at=paid_at)
    return CollectionTransaction.objects.get(pk=collection.pk)


def refund_pending(
    *, collection: CollectionTransaction, deducted: Decimal, created_at: datetime | None = None
) -> Refund:
    """A pending refund wholly deducted from what the merchant is owed, as the refund service
    records it: the row, the collection's ``amount_refunded``, the platform postings."""
    refund = RefundFactory(collection=collection, amount=deducted)
    if created_at is not None:
        Refund.objects.filter(pk=refund.pk).update(created_at=created_at)
    CollectionTransaction.objects.filter(pk=collection.pk).update(
        amount_refunded=collection.amount_refunded + deducted
    )
    platform_post(
        mode=collection.mode,
        group=f"refund:{refund.refund_id}",
        postings={
            PlatformAccount.OWED_MERCHANTS: -deducted,
            PlatformAccount.REFUNDS_PENDING: deducted,
        },
        merchant_id=collection.merchant_id,
        collection_id=collection.pk,
        refund_id=refund.pk,
    )
    return Refund.objects.get(pk=refund.pk)


def wallet_of(merchant: Merchant, mode: str = Mode.TEST) -> Wallet:
    return Wallet.objects.get(merchant=merchant, mode=mode)
