"""Wallet reads: wallets, ledger pages, totals, the bank list (cached), bank resolution and the fee
schedule."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Prefetch, Q, QuerySet, Sum, Window
from django.utils import timezone

from core.exceptions import ApplicationError, NotFoundError
from core.memo import LocalMemo
from core.money import CURRENCY_NGN, round_amount
from wallets.models import Bank, FeeSchedule, FeeTier, LedgerEntry, LedgerEntryType, Wallet

if TYPE_CHECKING:
    from merchants.models import Merchant

ZERO = Decimal("0.00")
BANK_CACHE_KEY = "wallets:banks:active:v1"
FEE_UNAVAILABLE_MESSAGE = "Payout fee could not be determined for this amount"
BANK_NOT_RESOLVED_MESSAGE = "Beneficiary bank could not be resolved"
BANK_ID_MISMATCH_MESSAGE = "bank_id: does not match bank_code"


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
    captured: Decimal  # paid out for good: captured payouts and fees, less what was returned
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
        returned_amount=Sum("amount", filter=Q(entry_type=LedgerEntryType.PAYOUT_RETURN)),
        returned_fee=Sum("fee_amount", filter=Q(entry_type=LedgerEntryType.PAYOUT_RETURN)),
    )
    fresh = Wallet.objects.values("available_balance", "reserved_balance").get(pk=wallet.pk)
    sums = {name: value or ZERO for name, value in sums.items()}
    return WalletTotals(
        funded=sums["funded"],
        captured=sums["captured_amount"]
        + sums["captured_fee"]
        - sums["returned_amount"]
        - sums["returned_fee"],
        available=fresh["available_balance"],
        reserved=fresh["reserved_balance"],
        ledger_available=sums["ledger_available"],
        ledger_reserved=sums["ledger_reserved"],
    )


def wallet_reconciliation_list(*, wallet_ids: list[int] | None = None) -> QuerySet[Wallet]:
    """Every wallet annotated with the sums of its ledger deltas (one query)."""
    queryset = Wallet.objects.order_by("pk").annotate(
        ledger_available=Sum("ledger_entries__available_delta", default=0),
        ledger_reserved=Sum("ledger_entries__reserved_delta", default=0),
    )
    if wallet_ids is not None:
        queryset = queryset.filter(pk__in=wallet_ids)
    return queryset


def ledger_snapshot_mismatch_count() -> int:
    """Entries whose balance-after snapshots differ from the running sums of their wallet's
    deltas (in entry order). Two queries, computed in the database."""
    window = {"partition_by": [F("wallet_id")], "order_by": F("id").asc()}
    consistent = LedgerEntry.objects.annotate(
        running_available=Window(Sum("available_delta"), **window),
        running_reserved=Window(Sum("reserved_delta"), **window),
    ).filter(
        running_available=F("available_balance_after"),
        running_reserved=F("reserved_balance_after"),
    )
    return LedgerEntry.objects.count() - consistent.count()


# --- Banks -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ActiveBanks:
    by_name: list[Bank]
    by_code: dict[str, Bank]


def _active_banks_load() -> _ActiveBanks:
    """From the shared cache (one read per process per memo period), else the database."""
    banks = cache.get(BANK_CACHE_KEY)
    if banks is None:
        banks = list(Bank.objects.filter(is_active=True).order_by("name", "id"))
        cache.set(BANK_CACHE_KEY, banks, timeout=settings.BANK_LIST_CACHE_SECONDS)
    by_code: dict[str, Bank] = {}
    for bank in banks:
        by_code.setdefault(bank.bank_code, bank)
    return _ActiveBanks(by_name=banks, by_code=by_code)


_active_banks = LocalMemo(_active_banks_load)


def bank_cache_clear() -> None:
    """Forgets the bank list here and in the shared cache (other processes within
    ``REFERENCE_DATA_LOCAL_SECONDS``)."""
    _active_banks.clear()
    cache.delete(BANK_CACHE_KEY)


def bank_list() -> list[Bank]:
    """Active banks by name; cached (cleared whenever a bank is saved or deleted)."""
    return list(_active_banks.get().by_name)


def bank_get_by_code(*, bank_code: str) -> Bank | None:
    """The active bank with this code, or None (a dictionary lookup in process memory)."""
    return _active_banks.get().by_code.get(bank_code)


def bank_resolve(*, bank_code: str, bank_id: int | None = None) -> Bank:
    """The active bank with this code, which must also have ``bank_id`` when one is given;
    a 400 ``ApplicationError`` otherwise."""
    bank = bank_get_by_code(bank_code=bank_code)
    if bank is None:
        raise ApplicationError(BANK_NOT_RESOLVED_MESSAGE)
    if bank_id is not None and bank_id != bank.pk:
        raise ApplicationError(BANK_ID_MISMATCH_MESSAGE)
    return bank


# --- Fee schedule ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _FeeTierRow:
    min_amount: Decimal
    max_amount: Decimal | None
    fee_amount: Decimal


@dataclass(frozen=True)
class _FeeScheduleRow:
    effective_from: datetime
    tiers: tuple[_FeeTierRow, ...]  # highest min_amount first


def _fee_schedules_load() -> tuple[_FeeScheduleRow, ...]:
    """Every NGN schedule with its tiers, latest ``effective_from`` first (two queries)."""
    schedules = (
        FeeSchedule.objects.filter(currency=CURRENCY_NGN)
        .order_by("-effective_from")
        .prefetch_related(Prefetch("tiers", queryset=FeeTier.objects.order_by("-min_amount")))
    )
    return tuple(
        _FeeScheduleRow(
            effective_from=schedule.effective_from,
            tiers=tuple(
                _FeeTierRow(
                    min_amount=tier.min_amount,
                    max_amount=tier.max_amount,
                    fee_amount=tier.fee_amount,
                )
                for tier in schedule.tiers.all()
            ),
        )
        for schedule in schedules
    )


_fee_schedules = LocalMemo(_fee_schedules_load)


def fee_schedule_cache_clear() -> None:
    """Forgets the fee schedules of this process (other processes within
    ``REFERENCE_DATA_LOCAL_SECONDS``)."""
    _fee_schedules.clear()


def payout_fee_calculate(*, amount: Decimal, at: datetime | None = None) -> Decimal:
    """The flat payout fee for ``amount`` from the schedule in effect at ``at`` (default now).

    The schedule in effect is the NGN schedule with the latest ``effective_from`` not after
    ``at``; its tier with the highest ``min_amount`` covering ``amount`` gives the fee. The
    schedules are read from a per-process memo (see ``core.memo``).
    """
    at = at or timezone.now()
    for schedule in _fee_schedules.get():
        if schedule.effective_from > at:
            continue
        for tier in schedule.tiers:
            if tier.min_amount <= amount and (tier.max_amount is None or tier.max_amount >= amount):
                return round_amount(tier.fee_amount)
        break
    raise ApplicationError(FEE_UNAVAILABLE_MESSAGE)
