"""What the paginated list routes share: reading the page and the filters from the query string
(``list_query``) and the OpenAPI description of a page answer (``list_schema``).

A list route reads ``list_query``, hands the filters to its selector, and answers
``core.api.responses.page_response``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers

from core.api.pagination import PAGE_PARAMETERS, page_params, page_schema


def list_query(
    query_params: Any, filters_class: type[serializers.Serializer]
) -> tuple[dict[str, int], dict[str, Any]]:
    """The page (``page`` and ``limit``, for the selector's keyword arguments) and the filters
    (``filters_class``' validated data) of a list route's query string; a bad value of either
    is a 400 naming it, the page's checked first."""
    pages = page_params(query_params)
    filters = filters_class(data=query_params)
    filters.is_valid(raise_exception=True)
    return pages, dict(filters.validated_data)


def list_schema(
    *,
    operation_id: str,
    summary: str,
    page_name: str,
    item_serializer: type[serializers.Serializer],
    examples: Sequence[OpenApiExample],
    parameters: Sequence[OpenApiParameter | type[serializers.Serializer]] = (),
    description: str | None = None,
) -> Callable[[Any], Any]:
    """``extend_schema`` of a paginated list: ``page`` and ``limit`` then ``parameters`` (the
    filters), and the answer ``page_name``, one page of ``item_serializer``."""
    return extend_schema(
        operation_id=operation_id,
        summary=summary,
        description=description,
        parameters=[*PAGE_PARAMETERS, *parameters],
        responses=page_schema(page_name, item_serializer(many=True)),
        examples=list(examples),
    )
