"""What list routes share beyond the page (``core.api.pagination``): the ``status`` filter (its
field, ``status_param_field``, and OpenAPI parameter, ``status_parameter``), a range of instants
asked for by ``from_date`` and ``to_date`` (their OpenAPI parameters, ``date_range_parameters``;
the check that the range is not reversed, ``DateRangeParamsSerializer``) and a queryset
narrowed by the filters given (``filters_given``)."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db.models import Choices, Model, QuerySet
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from core.api.fields import InputSerializer

_M = TypeVar("_M", bound=Model)


def status_param_field(statuses: type[Choices]) -> serializers.ChoiceField:
    """The optional ``status`` filter: one of ``statuses``' values; another is a 400 listing
    them."""
    return serializers.ChoiceField(
        choices=statuses.choices,
        required=False,
        error_messages={"invalid_choice": f"must be one of {', '.join(statuses.values)}"},
    )


def status_parameter(statuses: type[Choices]) -> OpenApiParameter:
    """The ``status`` filter's OpenAPI parameter: one of ``statuses``' values."""
    return OpenApiParameter("status", str, enum=statuses.values)


def date_range_parameters(bound: str) -> list[OpenApiParameter]:
    """``from_date`` and ``to_date``, the ISO 8601 bounds on ``bound`` (the instant filtered)."""
    return [
        OpenApiParameter("from_date", str, description=f"ISO 8601 lower bound on {bound}"),
        OpenApiParameter("to_date", str, description=f"ISO 8601 upper bound on {bound}"),
    ]


class DateRangeParamsSerializer(InputSerializer):
    """The base of a list's filters with ``from_date`` and ``to_date`` (declared by the list,
    in its own order, each with the ``source`` its selector's filters name the bound by): a
    ``to_date`` before ``from_date`` is a 400 naming ``to_date``."""

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = self._bound(attrs, "from_date"), self._bound(attrs, "to_date")
        if start is not None and end is not None and end < start:
            raise serializers.ValidationError({"to_date": "must not be earlier than from_date"})
        return attrs

    def _bound(self, attrs: dict[str, Any], field_name: str) -> Any:
        """The validated value of ``field_name``: validated data is keyed by the field's source."""
        return attrs.get(self.fields[field_name].source or field_name)


def filters_given(queryset: QuerySet[_M], **lookups: Any) -> QuerySet[_M]:
    """``queryset`` narrowed by each lookup whose value was given (neither ``None`` nor empty)."""
    given = {lookup: value for lookup, value in lookups.items() if value not in (None, "")}
    return queryset.filter(**given) if given else queryset
