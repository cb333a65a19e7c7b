"""Model fields shared by every app.

``MoneyField`` keeps an amount as an integer count of its minor unit (kobo) in a ``bigint``
column and hands Python code a ``Decimal`` with two places. CHECK constraints, ``F()`` arithmetic
and aggregates then run on integers, exactly. No module multiplies by 100 on its own.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.core import checks, exceptions
from django.db import models

from core.money import MAX_AMOUNT, minor_units_from_decimal, minor_units_to_decimal

BIGINT_MAX = 2**63 - 1


class FixedPointField(models.BigIntegerField):
    """A decimal with ``decimal_places`` places, stored as an integer count of its last place.

    Python values are ``Decimal`` (``int`` and numeric strings are accepted and read as the
    major unit; ``float`` is refused). A value with more places than the field keeps is an
    error, never rounded.
    """

    description = "Fixed-point decimal stored as an integer count of its smallest unit"

    def __init__(self, *args: Any, decimal_places: int = 2, **kwargs: Any) -> None:
        self.decimal_places = decimal_places
        super().__init__(*args, **kwargs)

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        errors = super().check(**kwargs)
        if not isinstance(self.decimal_places, int) or not 0 <= self.decimal_places <= 6:
            errors.append(checks.Error("decimal_places must be an integer from 0 to 6", obj=self))
        return errors

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        name, path, args, kwargs = super().deconstruct()
        if self.decimal_places != 2:
            kwargs["decimal_places"] = self.decimal_places
        return name, path, args, kwargs

    # Python <-> database --------------------------------------------------------------------

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Decimal | None:
        if value is None:
            return None
        # SUM() over bigint is numeric on PostgreSQL: an integral Decimal, still exact.
        return minor_units_to_decimal(int(value), places=self.decimal_places)

    def get_prep_value(self, value: Any) -> int | None:
        if value is None or hasattr(value, "resolve_expression"):
            return value
        return minor_units_from_decimal(
            self._as_decimal(value, error=ValueError), places=self.decimal_places
        )

    def to_python(self, value: Any) -> Decimal | None:
        if value is None:
            return None
        decimal_value = self._as_decimal(value, error=exceptions.ValidationError)
        quantum = Decimal(1).scaleb(-self.decimal_places)
        if decimal_value != decimal_value.quantize(quantum):
            raise exceptions.ValidationError(
                f"Ensure that there are no more than {self.decimal_places} decimal places.",
                code="max_decimal_places",
            )
        return decimal_value.quantize(quantum)

    def _as_decimal(self, value: Any, *, error: type[Exception]) -> Decimal:
        if isinstance(value, bool | float):
            raise error(f"{self.name}: {type(value).__name__} is not an exact amount")
        if isinstance(value, Decimal):
            decimal_value = value
        elif isinstance(value, int | str):
            try:
                decimal_value = Decimal(value)
            except InvalidOperation:
                raise error(f"{self.name}: {value!r} is not a decimal number") from None
        else:
            raise error(f"{self.name}: {type(value).__name__} is not an exact amount")
        if not decimal_value.is_finite():
            raise error(f"{self.name}: {value!r} is not a finite number")
        return decimal_value

    # Forms and admin --------------------------------------------------------------------------

    def formfield(self, **kwargs: Any) -> forms.Field:
        defaults: dict[str, Any] = {
            "form_class": forms.DecimalField,
            "decimal_places": self.decimal_places,
            "max_digits": len(str(BIGINT_MAX)) - 1,
        }
        defaults.update(kwargs)
        # Skip IntegerField.formfield, which would force an integer form field.
        return models.Field.formfield(self, **defaults)

    @property
    def validators(self) -> list[Any]:
        # The bigint range is enforced in kobo by get_prep_value, not on the Decimal value.
        return list(self._validators)


class MoneyField(FixedPointField):
    """An amount of money: a two-place ``Decimal`` in Python, integer kobo in the database."""

    description = "Money: two-place Decimal stored as integer minor units (kobo)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["decimal_places"] = 2
        super().__init__(*args, **kwargs)

    def formfield(self, **kwargs: Any) -> forms.Field:
        # An amount typed in the back office obeys the same limit as one sent to the API.
        return super().formfield(**{"max_value": MAX_AMOUNT, **kwargs})

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("decimal_places", None)
        return name, path, args, kwargs
