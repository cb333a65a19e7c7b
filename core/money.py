"""Money parsing and formatting. Amounts travel as strings and live as ``Decimal``."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

CURRENCY_NGN = "NGN"
TWO_PLACES = Decimal("0.01")

# Limits, so no sum ever reaches the bigint column's range (9,223,372,036,854,775,807 kobo):
# one amount (a payout, a funding, an item price, a collection) is at most one trillion naira;
# a wallet's available plus reserved balance at most ten quadrillion naira (10**18 kobo).
MAX_AMOUNT = Decimal("1000000000000.00")
MAX_WALLET_BALANCE = Decimal("10000000000000000.00")

# ASCII digits only, no sign, no exponent, no padding, no leading zeros, at most two decimals.
_AMOUNT_RE = re.compile(r"(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,2})?", re.ASCII)

AMOUNT_RULE = "must be a positive decimal string with at most two decimal places"


class AmountError(ValueError):
    """The value is not an acceptable amount; the message states the rule."""


def parse_amount(value: object, *, allow_zero: bool = False) -> Decimal:
    """Parse a request amount such as ``"2500.50"`` into a ``Decimal``.

    Rejects non-strings, signs, exponents, NaN and infinities, whitespace, leading zeros,
    non-ASCII digits, more than two decimals, more than 16 integer digits, amounts above
    ``MAX_AMOUNT``, and zero unless ``allow_zero``.
    """
    if not isinstance(value, str):
        raise AmountError(f"{AMOUNT_RULE}, given as a JSON string")
    if _AMOUNT_RE.fullmatch(value) is None:
        raise AmountError(AMOUNT_RULE)
    amount = Decimal(value)
    if amount == 0 and not allow_zero:
        raise AmountError(f"{AMOUNT_RULE} (greater than zero)")
    if amount > MAX_AMOUNT:
        raise AmountError(f"must not exceed {MAX_AMOUNT}")
    return amount.quantize(TWO_PLACES)


def format_amount(amount: Decimal) -> str:
    """Format a ``Decimal`` as a string with exactly two decimals."""
    return str(Decimal(amount).quantize(TWO_PLACES, rounding=ROUND_HALF_UP))


CURRENCY_SYMBOLS = {CURRENCY_NGN: "₦"}


def format_amount_display(amount: Decimal, currency: str = CURRENCY_NGN) -> str:
    """An amount as people read it: ``Decimal("-1234567.5")`` -> ``"−₦1,234,567.50"``.

    For screens and reports only; the API and stored values use :func:`format_amount`.
    """
    value = Decimal(amount).quantize(TWO_PLACES, rounding=ROUND_HALF_UP)
    symbol = CURRENCY_SYMBOLS.get(currency, f"{currency} ")
    sign = "\u2212" if value < 0 else ""
    return f"{sign}{symbol}{abs(value):,}"


def round_amount(amount: Decimal) -> Decimal:
    return Decimal(amount).quantize(TWO_PLACES, rounding=ROUND_HALF_UP)


def minor_units_from_decimal(amount: Decimal, *, places: int = 2) -> int:
    """``Decimal("1.13")`` -> ``113``. Exact: more places than ``places`` is a ``ValueError``."""
    units = amount.scaleb(places)
    if units != units.to_integral_value():
        raise ValueError(f"{amount} has more than {places} decimal places")
    result = int(units)
    if not -(2**63) <= result < 2**63:
        raise ValueError(f"{amount} is outside the storable range")
    return result


def minor_units_to_decimal(units: int, *, places: int = 2) -> Decimal:
    """``113`` -> ``Decimal("1.13")``, always with exactly ``places`` places."""
    return Decimal(units).scaleb(-places)
