"""Serializer fields shared by every app: amounts in and out as strings, strict strings, and
serializers that refuse unknown fields."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.money import AmountError, format_amount, parse_amount


@extend_schema_field({"type": "string", "pattern": r"^(0|[1-9][0-9]{0,15})(\.[0-9]{1,2})?$"})
class AmountField(serializers.Field):
    """A request amount: a positive decimal string with at most two decimals."""

    default_error_messages = {"invalid": "{reason}"}

    def __init__(self, *, allow_zero: bool = False, **kwargs: Any) -> None:
        self.allow_zero = allow_zero
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Decimal:
        try:
            return parse_amount(data, allow_zero=self.allow_zero)
        except AmountError as error:
            self.fail("invalid", reason=str(error))
            raise  # unreachable: fail() raises

    def to_representation(self, value: Decimal) -> str:
        return format_amount(value)


@extend_schema_field(OpenApiTypes.STR)
class MoneyField(serializers.Field):
    """Output-only amount formatted with two decimals."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Decimal) -> str:
        return format_amount(value)


class StrictCharField(serializers.CharField):
    """A JSON string only: numbers, booleans and objects are refused rather than converted, and
    so is text that cannot be stored (lone surrogates)."""

    default_error_messages = {
        "not_a_string": "must be a string",
        "not_text": "must be valid Unicode text",
    }

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates cannot be stored
            self.fail("not_text")
        return super().to_internal_value(data)


class StrictSerializer(serializers.Serializer):
    """Rejects fields the route does not accept, naming them."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError(
                {"non_field_errors": ["request body must be a JSON object"]}
            )
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError(
                {name: ["is not an accepted field"] for name in unknown}
            )
        return super().to_internal_value(data)
