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
        self._value: T | None = None
        self._loaded_at: float | None = None
        _MEMOS.append(self)

    def get(self) -> T:
        ttl = float(getattr(settings, "REFERENCE_DATA_LOCAL_SECONDS", 5))
        now = time.monotonic()
        if self._loaded_at is None or ttl <= 0 or now - self._loaded_at >= ttl:
            value = self._loader()
            self._value, self._loaded_at = value, now
            return value
        return self._value  # type: ignore[return-value]

    def clear(self) -> None:
        self._value, self._loaded_at = None, None


def local_memos_clear() -> None:
    """Forgets every memo of this process (after a flush or rollback of reference data)."""
    for memo in _MEMOS:
        memo.clear()
