"""How a collection is shared between subaccounts (the split design is in ``models.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal

from core.exceptions import ApplicationError
from core.money import TWO_PLACES
from payment_items.models import SplitType, Subaccount, TransactionSplit

HUNDRED = Decimal("100")


@dataclass(frozen=True)
class SplitShareAmount:
    """What one subaccount receives from one transaction, in naira."""

    subaccount: Subaccount
    share: Decimal


def transaction_split_breakdown(
    *, split: TransactionSplit, amount: Decimal
) -> list[SplitShareAmount]:
    """The amount each subaccount of ``split`` receives from a transaction of ``amount``.

    Percentage shares are rounded down to the kobo, so they never exceed the amount; the
    remainder stays with the merchant. Raises ``ApplicationError`` when the
    shares would exceed the transaction amount (a flat split on a small variable amount).
    """
    shares = list(split.shares.all())
    if split.split_type == SplitType.PERCENTAGE:
        breakdown = [
            SplitShareAmount(
                subaccount=row.subaccount,
                share=(amount * row.share / HUNDRED).quantize(TWO_PLACES, rounding=ROUND_DOWN),
            )
            for row in shares
        ]
    else:
        breakdown = [SplitShareAmount(subaccount=row.subaccount, share=row.share) for row in shares]
    if sum((entry.share for entry in breakdown), Decimal("0")) > amount:
        raise ApplicationError(
            "The payment item's transaction split shares exceed the transaction amount"
        )
    return breakdown
