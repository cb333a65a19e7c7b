"""Factories for settlement rows as the API, the admin and the reports read them. They write no
ledger entries and post nothing to the platform ledger: money-moving scenarios go through
``settlements.services`` (or, where a test needs the wallet's side, through
``wallets.services`` as ``settled_with_ledger_entry`` does)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from unittest import mock

import factory
from django.db import transaction
from django.utils import timezone

from collections_app.models import CollectionTransaction, PaymentStatus, TransactionSplitEntry
from merchants.models import Mode
from payment_items.models import Subaccount
from refunds.models import Refund, RefundStatus
from settlements.models import Settlement, SettlementShare
from tests.collections_app.factories import CollectionTransactionFactory
from tests.merchants.factories import MerchantFactory
from tests.payment_items.factories import SubaccountFactory
from wallets.models import LedgerEntryType, Wallet
from wallets.services import wallet_collection_credit, wallet_lock, wallet_refund_debit

ZERO = Decimal("0.00")


class SettlementFactory(factory.django.DjangoModelFactory):
    """A completed settlement whose amounts add up (``net`` follows the others)."""

    class Meta:
        model = Settlement

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    settlement_id = factory.Sequence(lambda n: f"stl_factory_{n:020d}")
    period_start = None
    period_end = factory.LazyFunction(timezone.now)
    transaction_count = 0
    gross = Decimal("7205.00")
    fees = Decimal("205.00")
    subaccount_shares = ZERO
    refunds_deducted = ZERO
    net = factory.LazyAttribute(
        lambda o: o.gross - o.fees - o.subaccount_shares - o.refunds_deducted
    )
    settled_at = factory.LazyFunction(timezone.now)


class SettlementShareFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SettlementShare

    settlement = factory.SubFactory(SettlementFactory)
    subaccount = factory.SubFactory(
        SubaccountFactory,
        merchant=factory.SelfAttribute("..settlement.merchant"),
        mode=factory.SelfAttribute("..settlement.mode"),
    )
    amount = Decimal("1000.00")
    payout = None


class TransactionSplitEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TransactionSplitEntry

    transaction = factory.SubFactory(CollectionTransactionFactory)
    subaccount = factory.SubFactory(
        SubaccountFactory,
        merchant=factory.SelfAttribute("..transaction.merchant"),
        mode=factory.SelfAttribute("..transaction.mode"),
    )
    share = Decimal("100.00")


def settled_collection(
    *,
    settlement: Settlement,
    amount: Decimal = Decimal("7000.00"),
    fee: Decimal = Decimal("205.00"),
    paid_at: datetime | None = None,
    shares: Sequence[tuple[Subaccount, Decimal]] = (),
    amount_refunded: Decimal = ZERO,
) -> CollectionTransaction:
    """A paid collection of the settlement's merchant and mode that ``settlement`` settled,
    with split entries for ``shares``."""
    paid_at = paid_at or timezone.now()
    collection = CollectionTransactionFactory(
        merchant=settlement.merchant,
        mode=settlement.mode,
        amount=amount,
        transaction_fee=fee,
        amount_to_be_paid=amount + fee,
        amount_paid=amount + fee,
        amount_refunded=amount_refunded,
        payment_status=PaymentStatus.PAID,
        paid_at=paid_at,
        status_changed_at=paid_at,
        settlement=settlement,
    )
    for subaccount, share in shares:
        TransactionSplitEntryFactory(transaction=collection, subaccount=subaccount, share=share)
    return collection


def settled_with_ledger_entry(*, wallet: Wallet, **kwargs: object) -> Settlement:
    """A settlement whose net is credited to ``wallet`` by one ``settlement`` ledger entry,
    written as the settlement run writes it (``wallet_collection_credit`` under the wallet's
    row lock), at the settlement's ``settled_at``."""
    settlement = SettlementFactory(merchant=wallet.merchant, mode=wallet.mode, **kwargs)
    if settlement.net > 0:
        at_settlement = mock.patch("django.utils.timezone.now", return_value=settlement.settled_at)
        with at_settlement, transaction.atomic():
            locked = wallet_lock(wallet_id=wallet.pk)
            entry = wallet_collection_credit(
                wallet=locked,
                entry_type=LedgerEntryType.SETTLEMENT,
                amount=settlement.net,
                reference=settlement.settlement_id,
                description="settlement",
            )
            Settlement.objects.filter(pk=settlement.pk).update(ledger_entry=entry)
        settlement.refresh_from_db()
    return settlement


class RefundRowFactory(factory.django.DjangoModelFactory):
    """A refund row as the refund service leaves it (``amount`` = deducted + debited + fee
    returned); it writes no ledger entry: ``refund_with_wallet_debit`` does, for the wallet
    part."""

    class Meta:
        model = Refund

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    collection = factory.SubFactory(
        CollectionTransactionFactory,
        merchant=factory.SelfAttribute("..merchant"),
        mode=factory.SelfAttribute("..mode"),
        payment_status=PaymentStatus.PAID,
        amount_paid=Decimal("7205.00"),
        paid_at=factory.LazyFunction(timezone.now),
    )
    refund_id = factory.Sequence(lambda n: f"rfd_factory_{n:020d}")
    deducted_from_settlement = ZERO
    debited_from_wallet = Decimal("1000.00")
    fee_returned = ZERO
    amount = factory.LazyAttribute(
        lambda o: o.deducted_from_settlement + o.debited_from_wallet + o.fee_returned
    )
    idempotency_key = factory.Sequence(lambda n: f"refund-key-{n}")
    request_fingerprint = "0" * 64
    status = RefundStatus.PROCESSED


def refund_with_wallet_debit(*, wallet: Wallet, at: datetime, **kwargs: object) -> Refund:
    """A refund created at ``at`` whose wallet part is debited from ``wallet`` by one
    ``refund`` ledger entry, as the refund service writes it (``wallet_refund_debit`` under the
    wallet's row lock)."""
    with mock.patch("django.utils.timezone.now", return_value=at):
        refund = RefundRowFactory(merchant=wallet.merchant, mode=wallet.mode, **kwargs)
        if refund.debited_from_wallet > 0:
            with transaction.atomic():
                locked = wallet_lock(wallet_id=wallet.pk)
                wallet_refund_debit(
                    wallet=locked, amount=refund.debited_from_wallet, reference=refund.refund_id
                )
    return refund
