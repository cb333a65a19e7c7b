"""Page/limit pagination with the §4.5 pagination object."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


class PageParamsSerializer(serializers.Serializer):
    page = serializers.IntegerField(min_value=1, default=1)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIMIT, default=DEFAULT_LIMIT)


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


def paginate(queryset: QuerySet, *, page: int, limit: int, total: int | None = None) -> Page:
    """Counts exactly and slices one page; ``total`` may be passed when known cheaply."""
    if total is None:
        total = queryset.count()
    offset = (page - 1) * limit
    items = list(queryset[offset : offset + limit]) if offset < total else []
    return Page(items=items, page=page, limit=limit, total=total)


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
