"""The one writer and reader of the platform ledger (see ``settlements.models``).

``platform_post`` writes one group of postings in the caller's transaction and refuses a group
that does not balance: the amounts posted to every bucket but ``collected`` must add up to the
amount posted to ``collected`` (zero for a move between buckets). ``platform_balances`` adds
them up; ``platform_equation_holds`` is the check the simulator and tests run after each step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Sum

from settlements.models import (
    STILL_OWED_ACCOUNTS,
    PlatformAccount,
    PlatformLedgerEntry,
)

ZERO = Decimal("0.00")


class PlatformPostingUnbalancedError(ValueError):
    """A group of postings that would break collected = sum of the other buckets."""


def platform_post(
    *,
    mode: str,
    group: str,
    postings: Mapping[str, Decimal],
    merchant_id: int | None = None,
    collection_id: int | None = None,
    settlement_id: int | None = None,
    refund_id: int | None = None,
    payout_id: int | None = None,
    description: str = "",
) -> list[PlatformLedgerEntry]:
    """Writes one balanced group of postings (zero amounts are skipped). Call it inside the
    transaction that makes the change it accounts for."""
    for account, amount in postings.items():
        if account not in PlatformAccount.values:
            raise ValueError(f"unknown platform account {account!r}")
        if not isinstance(amount, Decimal):
            raise TypeError("platform postings are Decimal amounts")
    collected = postings.get(PlatformAccount.COLLECTED, ZERO)
    rest = sum(
        (amount for account, amount in postings.items() if account != PlatformAccount.COLLECTED),
        ZERO,
    )
    if rest != collected:
        raise PlatformPostingUnbalancedError(
            f"postings of {group} do not balance: collected {collected}, other buckets {rest}"
        )
    entries = [
        PlatformLedgerEntry(
            mode=mode,
            account=account,
            amount=amount,
            group=group[:60],
            merchant_id=merchant_id,
            collection_id=collection_id,
            settlement_id=settlement_id,
            refund_id=refund_id,
            payout_id=payout_id,
            description=description[:255],
        )
        for account, amount in postings.items()
        if amount != ZERO
    ]
    return PlatformLedgerEntry.objects.bulk_create(entries)


@dataclass(frozen=True)
class PlatformBalances:
    """Each bucket's balance in one mode (or both), with the two sides of the equation."""

    by_account: dict[str, Decimal]

    def __getitem__(self, account: str) -> Decimal:
        return self.by_account.get(account, ZERO)

    @property
    def still_owed(self) -> Decimal:
        return sum((self[account] for account in STILL_OWED_ACCOUNTS), ZERO)

    @property
    def accounted_for(self) -> Decimal:
        """fees + merchant credits + subaccount payouts + refunds + still owed."""
        return (
            self[PlatformAccount.FEES]
            + self[PlatformAccount.MERCHANT_CREDITS]
            + self[PlatformAccount.SUBACCOUNT_PAYOUTS]
            + self[PlatformAccount.REFUNDS]
            + self.still_owed
        )

    @property
    def equation_holds(self) -> bool:
        return self[PlatformAccount.COLLECTED] == self.accounted_for


def platform_balances(
    *, mode: str | None = None, merchant_id: int | None = None
) -> PlatformBalances:
    entries = PlatformLedgerEntry.objects.all()
    if mode is not None:
        entries = entries.filter(mode=mode)
    if merchant_id is not None:
        entries = entries.filter(merchant_id=merchant_id)
    rows = entries.order_by().values("account").annotate(total=Sum("amount"))
    return PlatformBalances(by_account={row["account"]: row["total"] or ZERO for row in rows})


def platform_equation_holds(*, mode: str | None = None) -> bool:
    return platform_balances(mode=mode).equation_holds


def collection_paid_post(
    *,
    mode: str,
    merchant_id: int,
    collection_id: int,
    reference: str,
    amount_paid: Decimal,
    fee: Decimal,
    shares: Decimal,
) -> list[PlatformLedgerEntry]:
    """A collection was paid: ``amount_paid`` enters, split into our fee, what the subaccounts
    are owed and what the merchant is owed (the rest). Call it in the transaction that marks
    the collection paid."""
    owed_merchant = amount_paid - fee - shares
    if owed_merchant < 0:
        raise PlatformPostingUnbalancedError(
            f"collection {reference}: fee and shares exceed the amount paid"
        )
    return platform_post(
        mode=mode,
        group=f"paid:{reference}",
        postings={
            PlatformAccount.COLLECTED: amount_paid,
            PlatformAccount.FEES: fee,
            PlatformAccount.OWED_SUBACCOUNTS: shares,
            PlatformAccount.OWED_MERCHANTS: owed_merchant,
        },
        merchant_id=merchant_id,
        collection_id=collection_id,
        description="collection paid",
    )
