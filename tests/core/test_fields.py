"""``MoneyField``: a two-place ``Decimal`` in Python, integer kobo in the column, on both
backends; arithmetic and aggregates in the database stay exact."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import F, Sum
from hypothesis import given, settings
from hypothesis import strategies as st

from core.fields import MoneyField
from core.money import MAX_AMOUNT, minor_units_from_decimal, minor_units_to_decimal
from tests.payouts.factories import PayoutFactory
from tests.wallets.factories import WalletFactory
from wallets.models import LedgerEntry
from wallets.services import wallet_fund

ODD_CENTS = ["0.07", "1.13", "59.96", "506.17", "8188.62", "65534.29"]
kobo = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@settings(max_examples=500, derandomize=True, database=None)
@given(kobo)
def test_minor_units_round_trip_through_decimal_exactly(units: int) -> None:
    amount = minor_units_to_decimal(units)
    assert amount.as_tuple().exponent == -2
    assert minor_units_from_decimal(amount) == units


def test_more_than_two_places_is_refused_not_rounded() -> None:
    with pytest.raises(ValueError, match="more than 2 decimal places"):
        minor_units_from_decimal(Decimal("1.005"))


def test_a_value_outside_bigint_is_refused() -> None:
    with pytest.raises(ValueError, match="outside the storable range"):
        minor_units_from_decimal(Decimal(2**63).scaleb(-2) + Decimal("0.01"))


@pytest.mark.parametrize("value", [1.13, True, object()])
def test_the_field_refuses_inexact_python_values(value: object) -> None:
    field = MoneyField()
    field.set_attributes_from_name("amount")
    with pytest.raises(ValueError, match="amount"):
        field.get_prep_value(value)


def test_the_field_reads_ints_and_strings_as_naira() -> None:
    field = MoneyField()
    assert field.get_prep_value(5) == 500
    assert field.get_prep_value("1.13") == 113
    assert field.get_prep_value(Decimal("0.07")) == 7


@pytest.mark.django_db
@pytest.mark.parametrize("value", ODD_CENTS)
def test_an_odd_cent_amount_is_stored_as_integer_kobo(value: str) -> None:
    wallet = WalletFactory()
    result = wallet_fund(wallet_id=wallet.pk, amount=Decimal(value), reference=f"F-{value}")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT amount, available_balance_after FROM wallets_ledgerentry WHERE id = %s",
            [result.ledger_entry.pk],
        )
        raw_amount, raw_after = cursor.fetchone()
    assert type(raw_amount) is int
    assert raw_amount == raw_after == minor_units_from_decimal(Decimal(value))
    entry = LedgerEntry.objects.get(pk=result.ledger_entry.pk)
    assert entry.amount == Decimal(value)
    assert str(entry.amount) == value


@pytest.mark.django_db
def test_sums_and_f_expressions_are_exact_in_the_database() -> None:
    wallet = WalletFactory()
    for index, value in enumerate(ODD_CENTS):
        wallet_fund(wallet_id=wallet.pk, amount=Decimal(value), reference=f"S-{index}")
    total = LedgerEntry.objects.filter(wallet=wallet).aggregate(total=Sum("amount"))["total"]
    assert total == sum(Decimal(value) for value in ODD_CENTS)
    assert str(total) == "74290.24"

    payout = PayoutFactory(wallet=wallet, amount=Decimal("65534.29"), fee_amount=Decimal("0.07"))
    combined = (
        type(payout)
        .objects.filter(pk=payout.pk, total_debit_amount=F("amount") + F("fee_amount"))
        .values_list("total_debit_amount", flat=True)
        .get()
    )
    assert combined == Decimal("65534.36")


@pytest.mark.django_db
def test_a_filter_on_a_money_field_compares_kobo() -> None:
    wallet = WalletFactory()
    wallet_fund(wallet_id=wallet.pk, amount=Decimal("1.13"), reference="CMP-1")
    entries = LedgerEntry.objects.filter(wallet=wallet)
    assert entries.filter(amount=Decimal("1.13")).count() == 1
    assert entries.filter(amount__gt=Decimal("1.12"), amount__lt="1.14").count() == 1
    assert entries.filter(amount__gt=MAX_AMOUNT).count() == 0
