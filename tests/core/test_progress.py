"""The ops commands' progress bar: a line per tenth off a terminal, the unit after the count."""

from __future__ import annotations

from io import StringIO

from django.core.management.base import OutputWrapper

from core.progress import ProgressBar


def test_writes_a_line_per_tenth_when_not_on_a_terminal() -> None:
    out = StringIO()
    bar = ProgressBar(OutputWrapper(out), label="dispatch")
    for done in range(1, 21):
        bar(done, 20)
    lines = out.getvalue().splitlines()
    assert len(lines) == 11  # 0 to 10 tenths
    assert lines[-1] == f"dispatch [{'#' * 30}] 20/20"


def test_unit_follows_the_count() -> None:
    out = StringIO()
    ProgressBar(OutputWrapper(out), label="reconcile", unit="wallets")(1, 1)
    assert out.getvalue() == f"reconcile [{'#' * 30}] 1/1 wallets\n"
