"""Serializer fields shared by every app: amounts in and out as strings, strict strings, date
query parameters, serializers that refuse unknown fields, and output serializers built once."""

from __future__ import annotations

import copy
import functools
from datetime import UTC, date, datetime, time, tzinfo
from decimal import Decimal
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
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


@extend_schema_field(OpenApiTypes.INT)
class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only (no strings, booleans or fractions)."""

    default_error_messages = {"invalid": "must be an integer"}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


_IMMUTABLE = (type(None), str, bytes, int, float, bool, Decimal, date, datetime, time)


def _field_copy(field: serializers.Field) -> serializers.Field:
    """A copy of a declared field for one serializer, equal to DRF's (``Field.__deepcopy__``
    builds the field again from its arguments) but without running its ``__init__`` again: the
    attributes copied, the containers a serializer may change (validators, error messages,
    style) copied too. Fields holding other fields (nested serializers, lists, dicts) and
    fields with a mutable default or initial value are deep-copied as DRF does."""
    attributes = vars(field)
    if (
        isinstance(field, serializers.BaseSerializer)
        or "child" in attributes
        or "child_relation" in attributes
        or not all(
            callable(attributes.get(name)) or isinstance(attributes.get(name), _IMMUTABLE)
            for name in ("default", "initial")
        )
    ):
        return copy.deepcopy(field)
    clone = copy.copy(field)
    if "_validators" in attributes:
        vars(clone)["_validators"] = list(attributes["_validators"])
    clone.error_messages = dict(field.error_messages)
    clone.style = dict(field.style)
    return clone


class InputSerializer(serializers.Serializer):
    """A serializer of request input whose fields are copied per serializer as DRF copies them,
    at a fraction of the cost (``_field_copy``): request bodies and query strings are read by
    one on every request."""

    def get_fields(self) -> dict[str, serializers.Field]:
        return {name: _field_copy(field) for name, field in self._declared_fields.items()}


class StrictSerializer(InputSerializer):
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


EARLIEST_INSTANT = datetime.min.replace(tzinfo=UTC)
LATEST_INSTANT = datetime.max.replace(tzinfo=UTC)


def _instant_utc(value: datetime) -> datetime:
    """``value`` in UTC; an instant before year 1 or after year 9999 in UTC (only reachable
    through an offset, e.g. ``9999-12-31T23:59:59-14:00``) becomes the nearest representable
    instant, which bounds every stored timestamp the same way."""
    try:
        return value.astimezone(UTC)
    except OverflowError:
        offset = value.utcoffset()
        return (
            LATEST_INSTANT
            if offset is not None and offset.total_seconds() < 0
            else (EARLIEST_INSTANT)
        )


@extend_schema_field(OpenApiTypes.STR)
class IsoDateTimeParamField(serializers.Field):
    """An ISO 8601 date or date-time query parameter, as an aware UTC ``datetime``.

    A bare date is the start of that day (``from_date``) or its last microsecond (``to_date``,
    ``end_of_day=True``); a time without offset is in ``TIME_ZONE``. Every date from
    ``0001-01-01`` to ``9999-12-31`` is accepted (instants UTC cannot hold are clamped to its
    range); anything else, years beyond 9999 included, is a 400.
    """

    default_error_messages = {"invalid": "must be an ISO 8601 date or date-time"}

    def __init__(self, *, end_of_day: bool = False, **kwargs: Any) -> None:
        self.end_of_day = end_of_day
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> datetime:
        if not isinstance(data, str) or not data.isascii() or not data.isprintable():
            self.fail("invalid")
        value: datetime | None = None
        day: date | None = None
        try:
            if len(data) == 10:
                day = parse_date(data)
            else:
                value = parse_datetime(data.replace(" ", "+", 1) if "T" in data else data)
        except (ValueError, OverflowError):
            self.fail("invalid")
        if day is not None:
            value = datetime.combine(day, time.max if self.end_of_day else time.min)
        if value is None:
            self.fail("invalid")
        if timezone.is_naive(value):
            try:
                value = timezone.make_aware(value)
            except OverflowError:
                value = value.replace(tzinfo=UTC)
        return _instant_utc(value)

    def to_representation(self, value: datetime) -> str:
        return value.isoformat()


def timestamp_representation(value: datetime | None, *, zone: tzinfo | None = None) -> str | None:
    """An aware instant as every API answer and event renders it: ISO 8601 in the current time
    zone (or ``zone``, when the caller looked it up once for many), ``Z`` for UTC, exactly as
    DRF's ``DateTimeField`` writes it; None for no instant."""
    if value is None:
        return None
    text = value.astimezone(zone or timezone.get_current_timezone()).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


@functools.cache
def _output_serializer(serializer_class: type[serializers.Serializer]) -> serializers.Serializer:
    return serializer_class()


def representation(serializer_class: type[serializers.Serializer], instance: Any) -> dict[str, Any]:
    """``serializer_class(instance).data``, from one serializer of that class per process.

    DRF deep-copies a serializer's declared fields, nested serializers' included, each time one
    is built; an output serializer (no context, one object) represents any number of objects,
    from any thread, with the same fields, so routes on the hot path build it once.
    """
    return _output_serializer(serializer_class).to_representation(instance)
