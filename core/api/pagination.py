"""Page/limit pagination with the pagination object of the payout list: the query parameters
(``page_params``, documented by ``PAGE_PARAMETERS``), the page (``paginate``), the schema of a
page answer (``page_schema``); ``core.api.responses.page_response`` answers one."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.db.models.query import ModelIterable, NamedValuesListIterable
from drf_spectacular.utils import OpenApiParameter, extend_schema_field, inline_serializer
from rest_framework import serializers

from core.api.fields import InputSerializer

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
# Below this offset a page is read in one query; from it on, with a deferred join (``paginate``).
# Measured on a wallet with 1,000,000 payouts and a warm cache: the extra round trip costs about
# 1 ms, the heap rows the offset skips cost as much from about 3,000-5,000 rows on.
DEFERRED_JOIN_MIN_OFFSET = 5000


class PageParamsSerializer(InputSerializer):
    page = serializers.IntegerField(min_value=1, default=1)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIMIT, default=DEFAULT_LIMIT)


PAGE_PARAMETERS = (
    OpenApiParameter("page", int, description="default 1"),
    OpenApiParameter("limit", int, description=f"1 to {MAX_LIMIT}, default {DEFAULT_LIMIT}"),
)


def page_params(query_params: Any) -> dict[str, int]:
    """``page`` and ``limit`` from the query string; a bad one is a 400 naming it."""
    params = PageParamsSerializer(data=query_params)
    params.is_valid(raise_exception=True)
    return dict(params.validated_data)


@dataclass(frozen=True)
class Page:
    items: list[Any]
    page: int
    limit: int
    total: int

    @property
    def total_pages(self) -> int:
        return math.ceil(self.total / self.limit) if self.total else 0

    def pagination(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "limit": self.limit,
            "total": self.total,
            "total_pages": self.total_pages,
            "has_next_page": self.page < self.total_pages,
            "has_previous_page": self.page > 1,
        }


def paginate(
    queryset: QuerySet,
    *,
    page: int,
    limit: int,
    total: int | None = None,
    deferred_join_min_offset: int | None = None,
) -> Page:
    """Counts exactly and slices one page; ``total`` may be passed when known cheaply.

    From ``deferred_join_min_offset`` (default ``DEFERRED_JOIN_MIN_OFFSET``) on, a queryset of
    model instances, or of named rows that hold the primary key, is paged with a deferred join:
    the page's primary keys first, then the rows with those keys (see
    ``_page_by_deferred_join``). A page past the end is empty, unqueried.
    """
    if total is None:
        total = queryset.count()
    offset = (page - 1) * limit
    items: list[Any] = []
    if offset < total:
        items = page_items(
            queryset, offset=offset, limit=limit, deferred_join_min_offset=deferred_join_min_offset
        )
    return Page(items=items, page=page, limit=limit, total=total)


def page_items(
    queryset: QuerySet, *, offset: int, limit: int, deferred_join_min_offset: int | None = None
) -> list[Any]:
    """The ``limit`` rows of ``queryset`` from ``offset`` on: in one query before
    ``deferred_join_min_offset`` (default ``DEFERRED_JOIN_MIN_OFFSET``), with the deferred join
    from it on when the rows hold their primary key."""
    if deferred_join_min_offset is None:
        deferred_join_min_offset = DEFERRED_JOIN_MIN_OFFSET
    if offset < deferred_join_min_offset or (key := _row_key(queryset)) is None:
        return list(queryset[offset : offset + limit])
    return _page_by_deferred_join(queryset, offset=offset, limit=limit, key=key)


def _row_key(queryset: QuerySet) -> str | None:
    """The attribute that holds a row's primary key (model instances, or named rows that
    include it); None for rows without one."""
    pk_name = queryset.model._meta.pk.attname
    if queryset._iterable_class is ModelIterable:
        return "pk"
    if queryset._iterable_class is NamedValuesListIterable and pk_name in queryset._fields:  # type: ignore[attr-defined]  # QuerySet._fields (values_list names), undeclared in django-stubs
        return pk_name
    return None


def _page_by_deferred_join(queryset: QuerySet, *, offset: int, limit: int, key: str) -> list[Any]:
    """One page as two queries: the page's primary keys at the offset, then those rows.

    ``OFFSET n`` makes the database produce and throw away n rows. Asking only for primary keys
    lets it skip them inside an index that ends in the primary key (an index-only scan) instead
    of reading n full rows from the table; only the page's own rows are then read, by key. The
    second query is the original queryset narrowed to those keys, so its select_related,
    prefetch_related, only/defer and annotations still apply; the rows come back in the order
    of the keys (each row's ``key`` attribute).
    """
    page_pks = list(queryset.values_list("pk", flat=True)[offset : offset + limit])
    if not page_pks:
        return []
    position = {pk: index for index, pk in enumerate(page_pks)}
    rows = list(queryset.filter(pk__in=page_pks))
    rows.sort(key=lambda row: position[getattr(row, key)])
    return rows


def pagination_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "page": {"type": "integer"},
            "limit": {"type": "integer"},
            "total": {"type": "integer"},
            "total_pages": {"type": "integer"},
            "has_next_page": {"type": "boolean"},
            "has_previous_page": {"type": "boolean"},
        },
        "required": [
            "page",
            "limit",
            "total",
            "total_pages",
            "has_next_page",
            "has_previous_page",
        ],
    }


@extend_schema_field(pagination_schema())
class PaginationField(serializers.JSONField):
    """The pagination object of a page response (documentation only)."""


def page_schema(name: str, items: serializers.BaseSerializer) -> Any:
    """The OpenAPI schema of one page of ``items`` (a ``many=True`` serializer) named ``name``."""
    return inline_serializer(name, {"items": items, "pagination": PaginationField()})
