"""The range of creation instants a list may be narrowed to (``from_date`` and ``to_date`` on
the routes): the base of every list's filters that have one, and the lookups it becomes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class CreatedRangeFilters:
    created_from: datetime | None = None  # inclusive
    created_to: datetime | None = None  # inclusive

    def created_lookups(self) -> dict[str, datetime | None]:
        """The range as ``filters_given`` lookups on ``created_at`` (a bound not given is
        left out there)."""
        return {"created_at__gte": self.created_from, "created_at__lte": self.created_to}
