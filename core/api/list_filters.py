"""What list routes share beyond the page (``core.api.pagination``): a range of instants asked
for by ``from_date`` and ``to_date`` (their OpenAPI parameters, ``date_range_parameters``; the
check that the range is not reversed, ``DateRangeParamsSerializer``) and a queryset narrowed by
the filters given (``filters_given``)."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db.models import Model, QuerySet
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

_M = TypeVar("_M", bound=Model)


def date_range_parameters(bound: str) -> list[OpenApiParameter]:
    """``from_date`` and ``to_date``, the ISO 8601 bounds on ``bound`` (the instant filtered)."""
    return [
        OpenApiParameter("from_date", str, description=f"ISO 8601 lower bound on {bound}"),
        OpenApiParameter("to_date", str, description=f"ISO 8601 upper bound on {bound}"),
    ]


class DateRangeParamsSerializer(serializers.Serializer):
    """The base of a list's filters with ``from_date`` and ``to_date`` (declared by the list,
    in its own order): a ``to_date`` before ``from_date`` is a 400 naming ``to_date``."""

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("from_date"), attrs.get("to_date")
        if start is not None and end is not None and end < start:
            raise serializers.ValidationError({"to_date": "must not be earlier than from_date"})
        return attrs


def filters_given(queryset: QuerySet[_M], **lookups: Any) -> QuerySet[_M]:
    """``queryset`` narrowed by each lookup whose value was given (neither ``None`` nor empty)."""
    given = {lookup: value for lookup, value in lookups.items() if value not in (None, "")}
    return queryset.filter(**given) if given else queryset
