"""The rule a payout fee schedule's tiers obey (checked by the back office before it saves
one): contiguous kobo ranges from 0.01, only the last open-ended."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from core.exceptions import ApplicationError

FEE_TIER_STEP = Decimal("0.01")


def fee_tiers_validate(*, tiers: Iterable[tuple[Decimal, Decimal | None]]) -> None:
    """Checks the ``(min_amount, max_amount)`` tiers of one fee schedule, in any order: at least
    one, the first starting at 0.01, each starting one kobo after the previous one ends (no gap,
    no overlap), and only the last open-ended (``max_amount`` None). Raises ``ApplicationError``
    naming the first problem."""
    ordered = sorted(tiers, key=lambda tier: tier[0])
    if not ordered:
        raise ApplicationError("A fee schedule needs at least one tier.")
    if ordered[0][0] > FEE_TIER_STEP:
        raise ApplicationError("The first tier must start at 0.01.")
    for (low, high), (next_low, _next_high) in zip(ordered, ordered[1:], strict=False):
        if high is None:
            raise ApplicationError(f"Only the last tier may be open-ended (tier from {low}).")
        if next_low != high + FEE_TIER_STEP:
            raise ApplicationError(
                f"Tiers must be contiguous: after {high} the next tier starts at "
                f"{high + FEE_TIER_STEP}, not {next_low}."
            )
