"""Money parsing and formatting. Amounts travel as strings and live as ``Decimal``."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

CURRENCY_NGN = "NGN"
TWO_PLACES = Decimal("0.01")
MAX_AMOUNT_INTEGER_DIGITS = 16

# ASCII digits only, no sign, no exponent, no padding, no leading zeros, at most two decimals.
_AMOUNT_RE = re.compile(r"(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,2})?", re.ASCII)

AMOUNT_RULE = "must be a positive decimal string with at most two decimal places"


class AmountError(ValueError):
    """The value is not an acceptable amount; the message states the rule."""


def parse_amount(value: object, *, allow_zero: bool = False) -> Decimal:
    """Parse a request amount such as ``"2500.50"`` into a ``Decimal``.

    Rejects non-strings, signs, exponents, NaN and infinities, whitespace, leading zeros,
    non-ASCII digits, more than two decimals, more than 16 integer digits, and zero unless
    ``allow_zero``.
    """
    if not isinstance(value, str):
        raise AmountError(f"{AMOUNT_RULE}, given as a JSON string")
    if _AMOUNT_RE.fullmatch(value) is None:
        raise AmountError(AMOUNT_RULE)
    amount = Decimal(value)
    if amount == 0 and not allow_zero:
        raise AmountError(f"{AMOUNT_RULE} (greater than zero)")
    return amount.quantize(TWO_PLACES)


def format_amount(amount: Decimal) -> str:
    """Format a ``Decimal`` as a string with exactly two decimals."""
    return str(Decimal(amount).quantize(TWO_PLACES, rounding=ROUND_HALF_UP))


def round_amount(amount: Decimal) -> Decimal:
    return Decimal(amount).quantize(TWO_PLACES, rounding=ROUND_HALF_UP)
