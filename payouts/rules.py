"""Payout rules shared by the quote, the create and the list: the one place they are written."""

from __future__ import annotations

from core.exceptions import ApplicationError
from core.money import CURRENCY_NGN

ONLY_NGN_MESSAGE = "Only NGN payouts are supported"


def payout_currency_validate(*, currency: str) -> None:
    """Payouts are in NGN only; any other currency is a 400."""
    if currency != CURRENCY_NGN:
        raise ApplicationError(ONLY_NGN_MESSAGE)
