from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import factory

from merchants.models import Mode
from tests.merchants.factories import MerchantFactory
from wallets.models import (
    Bank,
    FeeSchedule,
    FeeTier,
    FundingSource,
    FundingTransfer,
    LedgerEntry,
    LedgerEntryType,
    Wallet,
    WalletStatus,
)


class WalletFactory(factory.django.DjangoModelFactory):
    """A wallet with zero balances; fund it through ``wallets.services.wallet_fund``."""

    class Meta:
        model = Wallet

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    currency = "NGN"
    status = WalletStatus.ACTIVE
    static_account_number = factory.Sequence(lambda n: f"{7_000_000_000 + n}")
    static_bank_name = "Sandbox Test Bank"
    static_account_name = factory.LazyAttribute(lambda o: o.merchant.name)


class BankFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Bank

    name = factory.Sequence(lambda n: f"Test Bank {n}")
    bank_code = factory.Sequence(lambda n: f"T{n:05d}")
    institution_code = factory.Sequence(lambda n: f"9{n:05d}")
    is_active = True


class FeeScheduleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = FeeSchedule

    name = factory.Sequence(lambda n: f"Schedule {n}")
    currency = "NGN"
    effective_from = factory.Sequence(lambda n: datetime(2030, 1, 1 + n % 28, tzinfo=UTC))


class FeeTierFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = FeeTier

    schedule = factory.SubFactory(FeeScheduleFactory)
    min_amount = Decimal("0.01")
    max_amount = None
    fee_amount = Decimal("10.00")


class LedgerEntryFactory(factory.django.DjangoModelFactory):
    """A raw ledger row, bypassing the services: only for tests that corrupt data on purpose."""

    class Meta:
        model = LedgerEntry

    wallet = factory.SubFactory(WalletFactory)
    entry_type = LedgerEntryType.FUNDING
    amount = Decimal("10.00")
    fee_amount = Decimal("0.00")
    available_delta = Decimal("10.00")
    reserved_delta = Decimal("0.00")
    available_balance_after = Decimal("10.00")
    reserved_balance_after = Decimal("0.00")
    reference = factory.Sequence(lambda n: f"RAW-{n}")


class FundingTransferFactory(factory.django.DjangoModelFactory):
    """A raw funding row with its ledger row, bypassing the services: only for tests of the
    database's own guarantees. The mode is the wallet's."""

    class Meta:
        model = FundingTransfer

    wallet = factory.SubFactory(WalletFactory)
    mode = factory.LazyAttribute(lambda o: o.wallet.mode)
    provider_reference = factory.Sequence(lambda n: f"RAW-FUND-{n}")
    ledger_entry = factory.SubFactory(
        LedgerEntryFactory,
        wallet=factory.SelfAttribute("..wallet"),
        reference=factory.SelfAttribute("..provider_reference"),
    )
    amount = Decimal("10.00")
    source = FundingSource.PROVIDER
    receiving_account_number = factory.LazyAttribute(lambda o: o.wallet.static_account_number)
