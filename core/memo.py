"""Per-process memos for small, rarely changed reference data (banks, fee tiers).

A memo answers from process memory for ``REFERENCE_DATA_LOCAL_SECONDS`` (default 5) and then
loads again. Saving or deleting the data clears the memo of the process that saved it at once;
every other process sees the change within that many seconds. ``0`` turns the memos off.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar

from django.conf import settings

T = TypeVar("T")

_MEMOS: list[LocalMemo] = []


class LocalMemo(Generic[T]):
    """``loader()``'s result, kept in this process for the configured number of seconds."""

    def __init__(self, loader: Callable[[], T]) -> None:
        self._loader = loader
        # One attribute, replaced whole, so a thread never sees a value from one load paired
        # with the time of another (gthread workers may run several threads).
        self._entry: tuple[T, float] | None = None
        _MEMOS.append(self)

    def get(self) -> T:
        ttl = float(getattr(settings, "REFERENCE_DATA_LOCAL_SECONDS", 5))
        now = time.monotonic()
        entry = self._entry
        if entry is not None and ttl > 0 and now - entry[1] < ttl:
            return entry[0]
        value = self._loader()
        self._entry = (value, now)
        return value

    def clear(self) -> None:
        self._entry = None


def local_memos_clear() -> None:
    """Forgets every memo of this process (after a flush or rollback of reference data)."""
    for memo in _MEMOS:
        memo.clear()
