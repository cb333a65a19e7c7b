"""Property-based tests: request amount parsing and the payout idempotency fingerprint.

Deterministic (``derandomize=True``) so CI failures reproduce; each property is bounded.
"""

from __future__ import annotations

import string
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.money import (
    MAX_AMOUNT,
    AmountError,
    format_amount,
    minor_units_from_decimal,
    parse_amount,
)
from payouts.services import payout_fingerprint

PROPERTY_SETTINGS = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

MAX_CENTS = minor_units_from_decimal(MAX_AMOUNT)  # the largest amount one request may carry
cents = st.integers(min_value=1, max_value=MAX_CENTS)
cents_over_the_limit = st.integers(min_value=MAX_CENTS + 1, max_value=10**18 - 1)


def _amount(cents_value: int) -> Decimal:
    return Decimal(cents_value).scaleb(-2)


def _spellings(value: Decimal) -> list[str]:
    """Every accepted way of writing ``value``: "100", "100.0", "100.00"."""
    canonical = format_amount(value)
    integer, _, decimals = canonical.partition(".")
    spellings = [canonical]
    if decimals.endswith("0"):
        spellings.append(f"{integer}.{decimals[0]}")
    if decimals == "00":
        spellings.append(integer)
    return spellings


# --- parse_amount ----------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(cents)
def test_every_spelling_of_an_amount_parses_to_the_same_two_place_decimal(value: int) -> None:
    amount = _amount(value)
    for spelling in _spellings(amount):
        parsed = parse_amount(spelling)
        assert parsed == amount
        assert parsed.as_tuple().exponent == -2
        assert format_amount(parsed) == format_amount(amount)


@PROPERTY_SETTINGS
@given(cents_over_the_limit)
def test_every_amount_above_the_limit_is_refused_however_written(value: int) -> None:
    for spelling in _spellings(_amount(value)):
        with pytest.raises(AmountError, match="must not exceed"):
            parse_amount(spelling)


@PROPERTY_SETTINGS
@given(cents)
def test_format_then_parse_is_the_identity(value: int) -> None:
    amount = _amount(value)
    assert parse_amount(format_amount(amount)) == amount
    assert format_amount(parse_amount(format_amount(amount))) == format_amount(amount)


@PROPERTY_SETTINGS
@given(st.text(max_size=30))
@example("1e3")
@example("NaN")
@example("-Infinity")
@example(" 1")
@example("0100")
@example("1.234")
@example("١٠٠")
@example("１００")
def test_arbitrary_text_is_either_a_valid_amount_or_an_amount_error(text: str) -> None:
    try:
        parsed = parse_amount(text)
    except AmountError as error:
        assert str(error)  # the message states the rule
        return
    # Accepted: plain ASCII digits, optional point and one or two decimals, positive, finite.
    assert text.isascii()
    assert set(text) <= set(string.digits + ".")
    assert parsed.is_finite() and parsed > 0
    assert parsed.as_tuple().exponent == -2
    assert parsed == Decimal(text)
    integer, _, decimals = text.partition(".")
    assert len(decimals) <= 2 and 1 <= len(integer) <= 16
    assert integer == "0" or not integer.startswith("0")


@PROPERTY_SETTINGS
@given(
    cents,
    st.sampled_from(["-", "+", " ", "\t", "0", "e2", "E0", "_", ",", "\u00a0", "\u0660"]),
    st.booleans(),
)
def test_decorated_amounts_are_rejected(value: int, decoration: str, in_front: bool) -> None:
    canonical = format_amount(_amount(value))
    text = decoration + canonical if in_front else canonical + decoration
    if decoration == "0" and not in_front:
        text = canonical + "0"  # a third decimal place
    with pytest.raises(AmountError):
        parse_amount(text)


@PROPERTY_SETTINGS
@given(cents, st.integers(min_value=3, max_value=8))
def test_more_than_two_decimal_places_are_rejected(value: int, places: int) -> None:
    text = format_amount(_amount(value)) + "1" * (places - 2)
    with pytest.raises(AmountError):
        parse_amount(text)


@PROPERTY_SETTINGS
@given(
    st.one_of(
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.decimals(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.none(),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    )
)
def test_non_strings_are_rejected(value: object) -> None:
    with pytest.raises(AmountError):
        parse_amount(value)


@PROPERTY_SETTINGS
@given(st.sampled_from(["0", "0.0", "0.00"]), st.booleans())
def test_zero_is_accepted_only_when_allowed(text: str, allow_zero: bool) -> None:
    if allow_zero:
        assert parse_amount(text, allow_zero=True) == Decimal("0.00")
    else:
        with pytest.raises(AmountError):
            parse_amount(text)


@PROPERTY_SETTINGS
@given(st.integers(min_value=10**16, max_value=10**30))
def test_more_than_sixteen_integer_digits_are_rejected(value: int) -> None:
    with pytest.raises(AmountError):
        parse_amount(str(value))


# --- payout idempotency fingerprint ----------------------------------------------------------

account_numbers = st.text(alphabet=string.digits, min_size=10, max_size=10)
bank_codes = st.text(alphabet=string.digits, min_size=3, max_size=6)
narrations = st.one_of(st.none(), st.text(max_size=40))

FINGERPRINT_FIELDS = ("account_number", "bank_code", "bank_id", "amount", "currency", "narration")
fingerprint_params = st.fixed_dictionaries(
    {
        "account_number": account_numbers,
        "bank_code": bank_codes,
        "bank_id": st.one_of(st.none(), st.integers(min_value=1, max_value=10**6)),
        "amount": cents.map(_amount),
        "currency": st.sampled_from(["NGN", "USD", "GHS"]),
        "narration": narrations,
    }
)


def _normalised(params: dict[str, Any]) -> dict[str, Any]:
    """What the fingerprint must depend on: the amount's value and a narration or nothing."""
    return {
        **params,
        "amount": format_amount(params["amount"]),
        "narration": params["narration"] or None,
    }


@PROPERTY_SETTINGS
@given(fingerprint_params)
def test_fingerprint_is_a_deterministic_sha256_hex(params: dict[str, Any]) -> None:
    first = payout_fingerprint(**params)
    assert first == payout_fingerprint(**dict(params))
    assert len(first) == 64 and set(first) <= set(string.hexdigits.lower())


@PROPERTY_SETTINGS
@given(fingerprint_params, st.data())
def test_equal_normalised_parameters_give_equal_fingerprints(
    params: dict[str, Any], data: st.DataObject
) -> None:
    spelling = data.draw(st.sampled_from(_spellings(params["amount"])), label="amount spelling")
    respelled = {**params, "amount": parse_amount(spelling)}
    if not params["narration"]:
        respelled["narration"] = data.draw(st.sampled_from([None, ""]), label="empty narration")
    assert _normalised(respelled) == _normalised(params)
    assert payout_fingerprint(**respelled) == payout_fingerprint(**params)


@pytest.mark.parametrize(("one", "other"), [("100", "100.00"), ("100.5", "100.50"), ("7", "7.0")])
def test_fingerprint_treats_spellings_of_one_amount_alike(one: str, other: str) -> None:
    base = {
        "account_number": "0123456789",
        "bank_code": "058",
        "bank_id": None,
        "currency": "NGN",
        "narration": None,
    }
    assert payout_fingerprint(**base, amount=parse_amount(one)) == payout_fingerprint(
        **base, amount=parse_amount(other)
    )
    assert payout_fingerprint(**base, amount=Decimal(one)) == payout_fingerprint(
        **base, amount=Decimal(other)
    )


@PROPERTY_SETTINGS
@given(fingerprint_params, fingerprint_params, st.sampled_from(FINGERPRINT_FIELDS))
def test_changing_any_one_field_changes_the_fingerprint(
    params: dict[str, Any], other: dict[str, Any], field: str
) -> None:
    changed = {**params, field: other[field]}
    if _normalised(changed) == _normalised(params):
        # The drawn value normalises to the same request: the fingerprint must not change.
        assert payout_fingerprint(**changed) == payout_fingerprint(**params)
    else:
        assert payout_fingerprint(**changed) != payout_fingerprint(**params)


@PROPERTY_SETTINGS
@given(fingerprint_params, fingerprint_params)
def test_fingerprints_are_equal_exactly_when_normalised_parameters_are(
    params: dict[str, Any], other: dict[str, Any]
) -> None:
    same_request = _normalised(params) == _normalised(other)
    assert (payout_fingerprint(**params) == payout_fingerprint(**other)) is same_request


@PROPERTY_SETTINGS
@given(fingerprint_params, st.integers(min_value=1, max_value=10**6))
def test_one_kobo_more_is_another_payout(params: dict[str, Any], kobo: int) -> None:
    more = {**params, "amount": params["amount"] + _amount(kobo)}
    assert payout_fingerprint(**more) != payout_fingerprint(**params)
