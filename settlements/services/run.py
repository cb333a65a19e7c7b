"""A settlement run: one merchant's paid, unsettled collections of one mode settled into its
wallet, exactly once.

One database transaction, in a fixed lock order: the merchant's wallet and the platform's
wallet of the mode (ascending id, as every multi-wallet write locks them; the platform's only
when the run needs it), then the claim. The
claim is one ``UPDATE`` that sets ``settlement`` on every eligible collection still without
one, so two runs can never take the same collection, and a run that fails anywhere after it
rolls the claim back with everything else: the next run settles them all. Aggregates come from
a fixed number of statements, whatever the number of collections:

    net = gross - fees - subaccount shares - refunds deducted

where the refunds deducted are the pending refund deductions of the merchant and mode (taken
from what it is owed when the refund was made), oldest first, as long as the net stays at or
above zero; the rest wait for the next run. The net is credited by one ``settlement`` ledger
entry; the shares go to the platform's wallet (one ``subaccount_shares`` entry) and, after the
commit, to the subaccounts by payouts (``settlements.services.shares``).
"""

from __future__ import annotations

import logging
import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import Count, Max, Min, Sum
from django.utils import timezone

from collections_app.models import CollectionTransaction, PaymentStatus, TransactionSplitEntry
from core.dates import local_isoformat
from core.exceptions import NotFoundError
from core.money import CURRENCY_NGN, format_amount
from merchants.models import Merchant, Mode
from refunds.models import Refund, RefundStatus
from settlements import tasks
from settlements.events import settlement_completed_event_record
from settlements.models import PlatformAccount, Settlement, SettlementShare
from settlements.platform_ledger import platform_post
from settlements.schedule import settlement_cutoff
from settlements.services.platform import platform_wallet_get
from wallets.models import LedgerEntryType, Wallet
from wallets.services import wallet_collection_credit, wallet_lock

logger = logging.getLogger(__name__)

ZERO = Decimal("0.00")
SETTLEMENT_ID_PREFIX = "STL_"
SETTLEMENT_ID_RANDOM_LENGTH = 20
_SETTLEMENT_ID_ALPHABET = string.ascii_uppercase + string.digits
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.1}


def settlement_id_generate() -> str:
    """``STL_`` and 20 upper-case letters and digits."""
    random_part = "".join(
        secrets.choice(_SETTLEMENT_ID_ALPHABET) for _ in range(SETTLEMENT_ID_RANDOM_LENGTH)
    )
    return SETTLEMENT_ID_PREFIX + random_part


def _eligible_collections(*, merchant_id: int, mode: str, cutoff: datetime) -> Any:
    """The merchant's paid, unsettled collections of ``mode`` paid before ``cutoff`` (the
    partial index ``collection_unsettled_idx``)."""
    return CollectionTransaction.objects.filter(
        merchant_id=merchant_id,
        mode=mode,
        payment_status=PaymentStatus.PAID,
        settlement__isnull=True,
        paid_at__lt=cutoff,
    )


class _PlatformWallet:
    """The platform's wallet of the mode, locked when first needed but always in ascending
    wallet id after the merchant's (the order every multi-wallet write locks in): at once when
    its id is below the merchant wallet's, else only once the run has shares to credit, so a
    merchant without splits never waits on it."""

    def __init__(self, *, wallet_id: int, merchant_wallet_id: int) -> None:
        self.wallet_id = wallet_id
        self._locked: Wallet | None = None
        if wallet_id < merchant_wallet_id:
            self._locked = wallet_lock(wallet_id=wallet_id)

    def locked(self) -> Wallet:
        if self._locked is None:
            self._locked = wallet_lock(wallet_id=self.wallet_id)
        return self._locked


@dataclass(frozen=True)
class _ClaimTotals:
    count: int
    gross: Decimal
    fees: Decimal
    first_paid_at: datetime | None
    shares: dict[int, Decimal]

    @property
    def subaccount_shares(self) -> Decimal:
        return sum(self.shares.values(), ZERO)

    @property
    def owed_to_merchant(self) -> Decimal:
        return self.gross - self.fees - self.subaccount_shares


def _claim_totals(*, settlement: Settlement) -> _ClaimTotals:
    """The claimed collections' totals (one statement) and each subaccount's share (one)."""
    totals = CollectionTransaction.objects.filter(settlement=settlement).aggregate(
        count=Count("id"),
        gross=Sum("amount_paid"),
        fees=Sum("transaction_fee"),
        first_paid_at=Min("paid_at"),
        last_paid_at=Max("paid_at"),
    )
    shares = (
        TransactionSplitEntry.objects.filter(transaction__settlement=settlement)
        .order_by("subaccount_id")
        .values("subaccount_id")
        .annotate(total=Sum("share"))
    )
    return _ClaimTotals(
        count=totals["count"],
        gross=totals["gross"] or ZERO,
        fees=totals["fees"] or ZERO,
        first_paid_at=totals["first_paid_at"],
        shares={row["subaccount_id"]: row["total"] for row in shares if row["total"]},
    )


def _refund_deductions_take(
    *, merchant_id: int, mode: str, settlement: Settlement, room: Decimal
) -> Decimal:
    """Marks the pending refund deductions this settlement takes, oldest first, while their
    sum stays within ``room`` (what the settlement would pay otherwise); the first that does
    not fit, and every later one, waits for the next run. Returns the sum taken.

    The refunds are locked after the wallet, in the order the refund service locks them."""
    pending = list(
        Refund.objects.select_for_update()
        .filter(
            merchant_id=merchant_id,
            mode=mode,
            settlement__isnull=True,
            deducted_from_settlement__gt=0,
        )
        .exclude(status=RefundStatus.FAILED)
        .order_by("created_at", "id")
        .values_list("pk", "deducted_from_settlement")
    )
    taken: list[int] = []
    total = ZERO
    for refund_pk, deduction in pending:
        if total + deduction > room:
            break
        taken.append(refund_pk)
        total += deduction
    if taken:
        Refund.objects.filter(pk__in=taken).update(settlement=settlement)
    return total


def settlement_shares_pay_enqueue(settlement_pk: int) -> None:
    """Queues the payouts of a settlement's shares. A broker outage loses nothing: the share
    sweeper (beat) creates any payout still missing."""
    try:
        tasks.settlement_shares_pay_task.apply_async(
            args=(settlement_pk,), retry_policy=PUBLISH_RETRY_POLICY
        )
    except Exception:
        logger.exception(
            "could not enqueue the share payouts of settlement %s; the sweeper will",
            settlement_pk,
        )


def settlement_run(
    *, merchant_id: int, mode: str, now: datetime | None = None
) -> Settlement | None:
    """Settles the merchant's collections of ``mode`` due at ``now`` (``settlements.schedule``)
    and the refund deductions that fit; ``None`` when nothing is due (nothing is written).

    Exactly once: concurrent runs for one merchant and mode wait on the wallet lock and the
    later one finds nothing left; a failure anywhere rolls the whole run back."""
    now = now or timezone.now()
    cutoff = settlement_cutoff(mode=mode, now=now)
    if cutoff is None:
        return None
    merchant = Merchant.objects.filter(pk=merchant_id).only("pk", "is_platform").first()
    if merchant is None:
        raise NotFoundError("Merchant not found")
    if merchant.is_platform:
        return None
    wallet_id = (
        Wallet.objects.filter(merchant_id=merchant_id, mode=mode).values_list("pk", flat=True)
    ).first()
    if wallet_id is None:
        raise NotFoundError("Merchant wallet not found")
    platform_wallet_id = platform_wallet_get(mode=mode).pk
    with transaction.atomic():
        # Locks the platform's wallet here when its id is the lower one (ascending order).
        platform_wallet = _PlatformWallet(
            wallet_id=platform_wallet_id, merchant_wallet_id=wallet_id
        )
        wallet = wallet_lock(wallet_id=wallet_id)
        return _settle_locked(
            merchant_id=merchant_id,
            mode=mode,
            now=now,
            cutoff=cutoff,
            wallet=wallet,
            platform_wallet=platform_wallet,
        )


def _settle_locked(
    *,
    merchant_id: int,
    mode: str,
    now: datetime,
    cutoff: datetime,
    wallet: Wallet,
    platform_wallet: _PlatformWallet,
) -> Settlement | None:
    eligible = _eligible_collections(merchant_id=merchant_id, mode=mode, cutoff=cutoff)
    if not eligible.exists():
        return None
    settlement = Settlement.objects.create(
        settlement_id=settlement_id_generate(),
        merchant_id=merchant_id,
        mode=mode,
        currency=wallet.currency or CURRENCY_NGN,
        period_end=cutoff,
        transaction_count=0,
        gross=ZERO,
        fees=ZERO,
        subaccount_shares=ZERO,
        refunds_deducted=ZERO,
        net=ZERO,
        settled_at=now,
    )
    claimed = eligible.update(settlement=settlement)
    totals = _claim_totals(settlement=settlement)
    if claimed != totals.count:
        raise RuntimeError(f"settlement {settlement.settlement_id}: claim and count differ")
    refunds_deducted = _refund_deductions_take(
        merchant_id=merchant_id, mode=mode, settlement=settlement, room=totals.owed_to_merchant
    )
    net = totals.owed_to_merchant - refunds_deducted
    settlement.transaction_count = totals.count
    settlement.gross = totals.gross
    settlement.fees = totals.fees
    settlement.subaccount_shares = totals.subaccount_shares
    settlement.refunds_deducted = refunds_deducted
    settlement.net = net
    settlement.period_start = totals.first_paid_at
    if net > 0:
        settlement.ledger_entry = wallet_collection_credit(
            wallet=wallet,
            entry_type=LedgerEntryType.SETTLEMENT,
            amount=net,
            reference=settlement.settlement_id,
            description=f"settlement of {totals.count} collection(s)",
        )
    settlement.save()
    platform_post(
        mode=mode,
        group=f"settlement:{settlement.settlement_id}",
        postings={
            PlatformAccount.OWED_MERCHANTS: -net,
            PlatformAccount.MERCHANT_CREDITS: net,
        },
        merchant_id=merchant_id,
        settlement_id=settlement.pk,
        description="settled to the merchant's wallet",
    )
    _shares_record(settlement=settlement, totals=totals, platform_wallet=platform_wallet)
    settlement_completed_event_record(settlement=settlement)
    logger.info(
        "settlement %s: merchant %s %s, %s collection(s), net %s",
        settlement.settlement_id,
        merchant_id,
        mode,
        totals.count,
        format_amount(net),
    )
    return settlement


def _shares_record(
    *, settlement: Settlement, totals: _ClaimTotals, platform_wallet: _PlatformWallet
) -> None:
    """One ``SettlementShare`` per subaccount; their sum credited to the platform's wallet;
    their payouts queued when the transaction commits."""
    if not totals.shares:
        return
    SettlementShare.objects.bulk_create(
        [
            SettlementShare(settlement=settlement, subaccount_id=subaccount_id, amount=amount)
            for subaccount_id, amount in totals.shares.items()
        ]
    )
    wallet_collection_credit(
        wallet=platform_wallet.locked(),
        entry_type=LedgerEntryType.SUBACCOUNT_SHARES,
        amount=totals.subaccount_shares,
        reference=settlement.settlement_id,
        description=f"subaccount shares of {settlement.settlement_id}",
    )
    transaction.on_commit(partial(settlement_shares_pay_enqueue, settlement.pk))


# --- Runs over many merchants ---------------------------------------------------------------


def settlements_due(*, mode: str, now: datetime, merchant_id: int | None = None) -> list[int]:
    """The merchants with collections of ``mode`` due at ``now``, by id."""
    cutoff = settlement_cutoff(mode=mode, now=now)
    if cutoff is None:
        return []
    collections = CollectionTransaction.objects.filter(
        mode=mode, payment_status=PaymentStatus.PAID, settlement__isnull=True, paid_at__lt=cutoff
    )
    if merchant_id is not None:
        collections = collections.filter(merchant_id=merchant_id)
    return list(
        collections.order_by("merchant_id").values_list("merchant_id", flat=True).distinct()
    )


@dataclass
class SettlementRunReport:
    """What ``settlements_run`` did: the wording of the ops summary and its ``--json``."""

    now: datetime
    modes: tuple[str, ...]
    merchants: int = 0
    settlements: list[Settlement] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def net_total(self) -> Decimal:
        return sum((settlement.net for settlement in self.settlements), ZERO)

    def lines(self) -> list[str]:
        found = [
            f"{settlement.settlement_id} merchant {settlement.merchant_id} {settlement.mode}: "
            f"{settlement.transaction_count} collection(s), net {format_amount(settlement.net)}"
            for settlement in self.settlements
        ]
        return [*found, *self.errors, self.summary()]

    def summary(self) -> str:
        return (
            f"Settled {len(self.settlements)} of {self.merchants} merchant run(s) due "
            f"({', '.join(self.modes)}), net {format_amount(self.net_total)}; "
            f"{len(self.errors)} error(s)."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "now": local_isoformat(self.now),
            "modes": list(self.modes),
            "merchants": self.merchants,
            "settlements": [
                {
                    "settlement_id": settlement.settlement_id,
                    "merchant_id": settlement.merchant_id,
                    "mode": settlement.mode,
                    "transaction_count": settlement.transaction_count,
                    "net": format_amount(settlement.net),
                }
                for settlement in self.settlements
            ],
            "net_total": format_amount(self.net_total),
            "errors": len(self.errors),
        }


def settlements_run(
    *,
    modes: tuple[str, ...] = (Mode.TEST, Mode.LIVE),
    merchant_id: int | None = None,
    now: datetime | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SettlementRunReport:
    """Runs every due merchant's settlement of each mode in turn (each its own transaction);
    a merchant whose run fails is logged and counted, and the others still run."""
    now = now or timezone.now()
    due = [
        (mode, due_merchant)
        for mode in modes
        for due_merchant in settlements_due(mode=mode, now=now, merchant_id=merchant_id)
    ]
    report = SettlementRunReport(now=now, modes=modes, merchants=len(due))
    for index, (mode, due_merchant) in enumerate(due, start=1):
        try:
            settlement = settlement_run(merchant_id=due_merchant, mode=mode, now=now)
        except Exception as error:
            logger.exception("settlement of merchant %s (%s) failed", due_merchant, mode)
            report.errors.append(f"merchant {due_merchant} {mode}: {error}")
        else:
            if settlement is not None:
                report.settlements.append(settlement)
        if progress is not None:
            progress(index, len(due))
    return report
