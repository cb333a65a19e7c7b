from __future__ import annotations

import pytest

from core import memo
from core.memo import LocalMemo, local_memos_clear


def test_memo_answers_from_memory_until_its_period_ends(
    monkeypatch: pytest.MonkeyPatch, settings
) -> None:
    settings.REFERENCE_DATA_LOCAL_SECONDS = 5
    clock = [100.0]
    monkeypatch.setattr(memo.time, "monotonic", lambda: clock[0])
    loads: list[int] = []
    counter = LocalMemo(lambda: loads.append(1) or len(loads))
    assert counter.get() == 1
    clock[0] += 4.9
    assert counter.get() == 1
    clock[0] += 0.2
    assert counter.get() == 2
    assert len(loads) == 2


def test_memo_off_when_period_is_zero(settings) -> None:
    settings.REFERENCE_DATA_LOCAL_SECONDS = 0
    loads: list[int] = []
    counter = LocalMemo(lambda: loads.append(1) or len(loads))
    assert [counter.get(), counter.get()] == [1, 2]


def test_clearing_forgets_every_memo(settings) -> None:
    settings.REFERENCE_DATA_LOCAL_SECONDS = 60
    loads: list[int] = []
    first = LocalMemo(lambda: loads.append(1) or len(loads))
    second = LocalMemo(lambda: loads.append(1) or len(loads))
    assert (first.get(), second.get()) == (1, 2)
    local_memos_clear()
    assert (first.get(), second.get()) == (3, 4)
