"""Wallet reads: wallets, ledger pages, totals, the bank list (cached) and the fee schedule."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Q, QuerySet, Subquery, Sum, Window
from django.db.models.functions import Round
from django.utils import timezone

from core.exceptions import ApplicationError, NotFoundError
from core.money import CURRENCY_NGN, round_amount
from wallets.models import Bank, FeeSchedule, FeeTier, LedgerEntry, LedgerEntryType, Wallet

if TYPE_CHECKING:
    from merchants.models import Merchant

ZERO = Decimal("0.00")
BANK_CACHE_KEY = "wallets:banks:active:v1"
FEE_UNAVAILABLE_MESSAGE = "Payout fee could not be determined for this amount"


# --- Wallets and ledger ------------------------------------------------------------------------


def wallet_get(*, merchant: Merchant, mode: str) -> Wallet:
    """The merchant's wallet for the key's mode; NotFoundError if it does not exist."""
    wallet = Wallet.objects.filter(merchant=merchant, mode=mode).first()
    if wallet is None:
        raise NotFoundError("Merchant wallet not found")
    return wallet


def ledger_entry_list(*, wallet: Wallet) -> QuerySet[LedgerEntry]:
    """The wallet's ledger, newest first."""
    return LedgerEntry.objects.filter(wallet=wallet).order_by("-id")


@dataclass(frozen=True)
class WalletTotals:
    """Money in, money out and where the rest sits: available + reserved + captured == funded."""

    funded: Decimal
    captured: Decimal
    available: Decimal
    reserved: Decimal
    ledger_available: Decimal
    ledger_reserved: Decimal

    @property
    def balanced(self) -> bool:
        return (
            self.available == self.ledger_available
            and self.reserved == self.ledger_reserved
            and self.available + self.reserved + self.captured == self.funded
        )


def wallet_totals(*, wallet: Wallet) -> WalletTotals:
    """Recomputes the wallet from its ledger in one query (balances read fresh from the row)."""
    sums = LedgerEntry.objects.filter(wallet_id=wallet.pk).aggregate(
        ledger_available=Sum("available_delta"),
        ledger_reserved=Sum("reserved_delta"),
        funded=Sum("amount", filter=Q(entry_type=LedgerEntryType.FUNDING)),
        captured_amount=Sum("amount", filter=Q(entry_type=LedgerEntryType.PAYOUT_DEBIT)),
        captured_fee=Sum("fee_amount", filter=Q(entry_type=LedgerEntryType.PAYOUT_DEBIT)),
    )
    fresh = Wallet.objects.values("available_balance", "reserved_balance").get(pk=wallet.pk)
    # round_amount: SQLite sums decimals as floats; PostgreSQL sums are exact already.
    sums = {name: round_amount(value or ZERO) for name, value in sums.items()}
    return WalletTotals(
        funded=sums["funded"],
        captured=sums["captured_amount"] + sums["captured_fee"],
        available=fresh["available_balance"],
        reserved=fresh["reserved_balance"],
        ledger_available=sums["ledger_available"],
        ledger_reserved=sums["ledger_reserved"],
    )


@dataclass(frozen=True)
class WalletReconciliation:
    wallet_id: int
    available_balance: Decimal
    reserved_balance: Decimal
    ledger_available: Decimal
    ledger_reserved: Decimal

    @property
    def matches(self) -> bool:
        return (
            self.available_balance == self.ledger_available
            and self.reserved_balance == self.ledger_reserved
        )


def wallet_reconciliation_list(*, wallet_ids: list[int] | None = None) -> QuerySet[Wallet]:
    """Every wallet annotated with the sums of its ledger deltas (one query)."""
    queryset = Wallet.objects.order_by("pk").annotate(
        ledger_available=Sum("ledger_entries__available_delta", default=ZERO),
        ledger_reserved=Sum("ledger_entries__reserved_delta", default=ZERO),
    )
    if wallet_ids is not None:
        queryset = queryset.filter(pk__in=wallet_ids)
    return queryset


def ledger_snapshot_mismatch_count() -> int:
    """Entries whose balance-after snapshots differ from the running sums of their wallet's
    deltas (in entry order). Two queries, computed in the database."""
    window = {"partition_by": [F("wallet_id")], "order_by": F("id").asc()}
    consistent = LedgerEntry.objects.annotate(
        # Round(): SQLite sums decimals as floats; PostgreSQL sums are exact already.
        running_available=Round(Window(Sum("available_delta"), **window), 2),
        running_reserved=Round(Window(Sum("reserved_delta"), **window), 2),
    ).filter(
        running_available=F("available_balance_after"),
        running_reserved=F("reserved_balance_after"),
    )
    return LedgerEntry.objects.count() - consistent.count()


# --- Banks -------------------------------------------------------------------------------------


def _bank_cache_load() -> list[Bank]:
    banks = cache.get(BANK_CACHE_KEY)
    if banks is None:
        banks = list(Bank.objects.filter(is_active=True).order_by("name", "id"))
        cache.set(BANK_CACHE_KEY, banks, timeout=settings.BANK_LIST_CACHE_SECONDS)
    return banks


def bank_cache_clear() -> None:
    cache.delete(BANK_CACHE_KEY)


def bank_list() -> list[Bank]:
    """Active banks by name; cached (cleared whenever a bank is saved or deleted)."""
    return list(_bank_cache_load())


def bank_get_by_code(*, bank_code: str) -> Bank | None:
    """The active bank with this code, or None."""
    for bank in _bank_cache_load():
        if bank.bank_code == bank_code:
            return bank
    return None


# --- Fee schedule and quote --------------------------------------------------------------------


def payout_fee_calculate(*, amount: Decimal, at: datetime | None = None) -> Decimal:
    """The flat payout fee for ``amount`` from the schedule in effect at ``at`` (default now).

    The schedule in effect is the NGN schedule with the latest ``effective_from`` not after
    ``at``; its tier covering ``amount`` gives the fee (one query).
    """
    at = at or timezone.now()
    current_schedule = (
        FeeSchedule.objects.filter(currency=CURRENCY_NGN, effective_from__lte=at)
        .order_by("-effective_from")
        .values("pk")[:1]
    )
    fee_amount = (
        FeeTier.objects.filter(schedule_id=Subquery(current_schedule), min_amount__lte=amount)
        .filter(Q(max_amount__isnull=True) | Q(max_amount__gte=amount))
        .order_by("-min_amount")
        .values_list("fee_amount", flat=True)
        .first()
    )
    if fee_amount is None:
        raise ApplicationError(FEE_UNAVAILABLE_MESSAGE)
    return round_amount(fee_amount)


@dataclass(frozen=True)
class PayoutQuote:
    amount: Decimal
    fee_amount: Decimal
    total_debit_amount: Decimal
    currency: str


ONLY_NGN_MESSAGE = "Only NGN payouts are supported"


def payout_quote(*, amount: Decimal, currency: str = CURRENCY_NGN) -> PayoutQuote:
    """Fee and total debit for a prospective payout; reserves nothing."""
    if currency != CURRENCY_NGN:
        raise ApplicationError(ONLY_NGN_MESSAGE)
    fee_amount = payout_fee_calculate(amount=amount)
    return PayoutQuote(
        amount=round_amount(amount),
        fee_amount=fee_amount,
        total_debit_amount=round_amount(amount + fee_amount),
        currency=CURRENCY_NGN,
    )
