"""Wallet reads: wallets, ledger pages, totals, the bank list (cached), bank resolution and the fee
schedule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Prefetch, Q, QuerySet, Sum, Window
from django.utils import timezone

from core.exceptions import ApplicationError, NotFoundError
from core.memo import LocalMemo
from core.money import CURRENCY_NGN, format_amount, format_amount_display, round_amount
from wallets.models import (
    COLLECTION_CREDIT_TYPES,
    Bank,
    FeeSchedule,
    FeeTier,
    LedgerEntry,
    LedgerEntryType,
    Wallet,
)

if TYPE_CHECKING:
    from typing import TypedDict

    from django_stubs_ext import WithAnnotations

    from merchants.models import Merchant

    class _LedgerSums(TypedDict):
        ledger_available: Decimal
        ledger_reserved: Decimal

    class _RunningSums(TypedDict):
        running_available: Decimal
        running_reserved: Decimal


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
    """Money in, money out and where the rest sits:
    available + reserved + captured + refunded == funded + credited."""

    funded: Decimal
    captured: Decimal  # paid out for good: captured payouts and fees, less what was returned
    available: Decimal
    reserved: Decimal
    ledger_available: Decimal
    ledger_reserved: Decimal
    # Collected money credited: settlements, failed refunds put back, subaccount shares.
    credited: Decimal = ZERO
    refunded: Decimal = ZERO  # refunds to customers taken from the wallet

    @property
    def balanced(self) -> bool:
        return (
            self.available == self.ledger_available
            and self.reserved == self.ledger_reserved
            and self.available + self.reserved + self.captured + self.refunded
            == self.funded + self.credited
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
        credited=Sum("amount", filter=Q(entry_type__in=COLLECTION_CREDIT_TYPES)),
        refunded=Sum("amount", filter=Q(entry_type=LedgerEntryType.REFUND)),
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
        credited=sums["credited"],
        refunded=sums["refunded"],
    )


def wallet_reconciliation_list(
    *, wallet_ids: list[int] | None = None
) -> QuerySet[WithAnnotations[Wallet, _LedgerSums]]:
    """Every wallet with its merchant, annotated with the sums of its ledger deltas (one
    query)."""
    queryset = (
        Wallet.objects.select_related("merchant")
        .order_by("pk")
        .annotate(
            ledger_available=Sum("ledger_entries__available_delta", default=0),
            ledger_reserved=Sum("ledger_entries__reserved_delta", default=0),
        )
    )
    if wallet_ids is not None:
        queryset = queryset.filter(pk__in=wallet_ids)
    return queryset


def _snapshot_running_sums() -> QuerySet[WithAnnotations[LedgerEntry, _RunningSums]]:
    window: dict[str, Any] = {"partition_by": [F("wallet_id")], "order_by": F("id").asc()}
    return LedgerEntry.objects.annotate(
        running_available=Window(Sum("available_delta"), **window),
        running_reserved=Window(Sum("reserved_delta"), **window),
    )


def ledger_snapshot_mismatch_count() -> int:
    """Entries whose balance-after snapshots differ from the running sums of their wallet's
    deltas (in entry order). Two queries, computed in the database."""
    consistent = _snapshot_running_sums().filter(
        running_available=F("available_balance_after"),
        running_reserved=F("reserved_balance_after"),
    )
    return LedgerEntry.objects.count() - consistent.count()


def ledger_snapshot_mismatch_ids(*, limit: int) -> list[int]:
    """The first ``limit`` of those entries' ids, in entry order (one query)."""
    return list(
        _snapshot_running_sums()
        .exclude(
            running_available=F("available_balance_after"),
            running_reserved=F("reserved_balance_after"),
        )
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )


def _signed_display(amount: Decimal, currency: str) -> str:
    """``+₦250.00``, ``−₦250.00``, ``₦0.00``."""
    return ("+" if amount > 0 else "") + format_amount_display(amount, currency)


@dataclass(frozen=True)
class WalletMismatch:
    """A wallet whose balances differ from the sums of its ledger deltas."""

    wallet_id: int
    merchant_id: int
    merchant_name: str
    mode: str
    currency: str
    available_balance: Decimal
    ledger_available: Decimal
    reserved_balance: Decimal
    ledger_reserved: Decimal

    def _balance_text(self, name: str, wallet: Decimal, ledger: Decimal) -> str:
        money = self.currency
        return (
            f"{name}: wallet {format_amount_display(wallet, money)} vs ledger "
            f"{format_amount_display(ledger, money)}, difference "
            f"{_signed_display(wallet - ledger, money)}"
        )

    def text(self) -> str:
        available = self._balance_text("available", self.available_balance, self.ledger_available)
        reserved = self._balance_text("reserved", self.reserved_balance, self.ledger_reserved)
        return (
            f"Mismatch: wallet {self.wallet_id} of {self.merchant_name} (merchant "
            f"{self.merchant_id}), {self.mode}: {available}; {reserved}"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "wallet_id": self.wallet_id,
            "merchant_id": self.merchant_id,
            "merchant_name": self.merchant_name,
            "mode": self.mode,
            "currency": self.currency,
            "available_balance": format_amount(self.available_balance),
            "ledger_available": format_amount(self.ledger_available),
            "available_difference": format_amount(self.available_balance - self.ledger_available),
            "reserved_balance": format_amount(self.reserved_balance),
            "ledger_reserved": format_amount(self.ledger_reserved),
            "reserved_difference": format_amount(self.reserved_balance - self.ledger_reserved),
        }


@dataclass(frozen=True)
class WalletReconciliation:
    """Every wallet checked against its ledger, and every entry's snapshot against the running
    sums: the one home of the wording of ``reconcile_wallets`` and of its ``--json`` object."""

    wallet_count: int
    mismatches: tuple[WalletMismatch, ...]
    snapshot_mismatch_count: int
    snapshot_mismatch_ids: tuple[int, ...]

    @property
    def balanced(self) -> bool:
        return not self.mismatches and not self.snapshot_mismatch_count

    def summary(self) -> str:
        mismatched = len(self.mismatches)
        return (
            f"Reconciled {self.wallet_count} wallet(s): {self.wallet_count - mismatched} match, "
            f"{mismatched} mismatch; {self.snapshot_mismatch_count} ledger snapshot "
            f"mismatch(es)."
        )

    def lines(self) -> list[str]:
        lines = [mismatch.text() for mismatch in self.mismatches]
        if self.snapshot_mismatch_count:
            ids = ", ".join(str(entry_id) for entry_id in self.snapshot_mismatch_ids)
            more = self.snapshot_mismatch_count - len(self.snapshot_mismatch_ids)
            lines.append(
                f"Ledger snapshot mismatch: {self.snapshot_mismatch_count} entry(ies) whose "
                f"balance-after differs from the running sum, first entries {ids}"
                f"{f' and {more} more' if more > 0 else ''}"
            )
        return [*lines, self.summary()]

    def as_dict(self) -> dict[str, object]:
        return {
            "wallets": self.wallet_count,
            "matching": self.wallet_count - len(self.mismatches),
            "mismatches": [mismatch.as_dict() for mismatch in self.mismatches],
            "ledger_snapshot_mismatches": self.snapshot_mismatch_count,
            "ledger_snapshot_mismatch_first_entry_ids": list(self.snapshot_mismatch_ids),
        }


SNAPSHOT_MISMATCH_IDS_SHOWN = 5


def wallet_reconciliation(
    *, progress: Callable[[int, int], None] | None = None
) -> WalletReconciliation:
    """Recomputes every wallet from its ledger (one query, streamed) and checks the entries'
    snapshots (three queries); ``progress(done, total)`` after each wallet."""
    wallets = wallet_reconciliation_list()
    total = wallets.count()
    mismatches = []
    for done, wallet in enumerate(wallets.iterator(chunk_size=500), start=1):
        if (
            wallet.available_balance != wallet.ledger_available
            or wallet.reserved_balance != wallet.ledger_reserved
        ):
            mismatches.append(
                WalletMismatch(
                    wallet_id=wallet.pk,
                    merchant_id=wallet.merchant_id,
                    merchant_name=wallet.merchant.name,
                    mode=wallet.mode,
                    currency=wallet.currency,
                    available_balance=wallet.available_balance,
                    ledger_available=round_amount(wallet.ledger_available),
                    reserved_balance=wallet.reserved_balance,
                    ledger_reserved=round_amount(wallet.ledger_reserved),
                )
            )
        if progress is not None:
            progress(done, total)
    snapshot_count = ledger_snapshot_mismatch_count()
    snapshot_ids = (
        ledger_snapshot_mismatch_ids(limit=SNAPSHOT_MISMATCH_IDS_SHOWN) if snapshot_count else []
    )
    return WalletReconciliation(
        wallet_count=total,
        mismatches=tuple(mismatches),
        snapshot_mismatch_count=snapshot_count,
        snapshot_mismatch_ids=tuple(snapshot_ids),
    )


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
