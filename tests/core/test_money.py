from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.money import MAX_AMOUNT, AmountError, format_amount, parse_amount


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", Decimal("1.00")),
        ("100", Decimal("100.00")),
        ("100.5", Decimal("100.50")),
        ("2500.50", Decimal("2500.50")),
        ("0.01", Decimal("0.01")),
        ("1000000000000", Decimal("1000000000000.00")),
        ("1000000000000.00", Decimal("1000000000000.00")),
    ],
)
def test_parse_amount_accepts(raw: str, expected: Decimal) -> None:
    assert parse_amount(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "0",
        "0.00",
        "-1",
        "+1",
        "1e3",
        "1E3",
        "NaN",
        "nan",
        "Infinity",
        "-Infinity",
        " 100",
        "100 ",
        "0100",
        "1.234",
        "1.",
        ".5",
        "1,000",
        "١٠٠",  # Arabic-Indic digits
        "１００",  # full-width digits
        "",
        "10000000000000000",
        100,
        100.5,
        None,
        True,
        ["1"],
    ],
)
def test_parse_amount_rejects(raw: object) -> None:
    with pytest.raises(AmountError):
        parse_amount(raw)


def test_zero_allowed_only_when_asked() -> None:
    assert parse_amount("0", allow_zero=True) == Decimal("0.00")


@given(st.decimals(min_value=Decimal("0.01"), max_value=MAX_AMOUNT, places=2))
def test_format_then_parse_round_trips(amount: Decimal) -> None:
    assert parse_amount(format_amount(amount)) == amount


@given(st.text(max_size=20))
def test_parse_amount_never_raises_anything_but_amount_error(raw: str) -> None:
    try:
        result = parse_amount(raw)
    except AmountError:
        return
    assert result > 0
    assert result == result.quantize(Decimal("0.01"))


@pytest.mark.parametrize("raw", ["1000000000000.01", "9999999999999999.99", "5000000000000"])
def test_parse_amount_refuses_amounts_above_the_limit(raw: str) -> None:
    with pytest.raises(AmountError, match="must not exceed 1000000000000.00"):
        parse_amount(raw)
