"""The ops commands' progress bar: plain text on the raw stream, a line per tenth off a terminal,
redrawn in place on one, the unit after the count."""

from __future__ import annotations

from io import StringIO

from core.progress import ProgressBar


class TerminalStream(StringIO):
    def isatty(self) -> bool:
        return True


def test_writes_a_line_per_tenth_when_not_on_a_terminal() -> None:
    out = StringIO()
    bar = ProgressBar(out, label="dispatch")
    for done in range(1, 21):
        bar(done, 20)
    lines = out.getvalue().splitlines()
    assert len(lines) == 11  # 0 to 10 tenths
    assert lines[-1] == f"dispatch [{'#' * 30}] 20/20"


def test_redraws_in_place_on_a_terminal_once_per_percent() -> None:
    out = TerminalStream()
    bar = ProgressBar(out, label="requery")
    for done in range(1, 1001):
        bar(done, 1000)
    text = out.getvalue()
    assert text.count("\r") == 101  # 0 to 100 percent
    assert text.count("\n") == 1
    assert text.endswith(f"\rrequery [{'#' * 30}] 1000/1000\n")


def test_unit_follows_the_count() -> None:
    out = StringIO()
    ProgressBar(out, label="reconcile", unit="wallets")(1, 1)
    assert out.getvalue() == f"reconcile [{'#' * 30}] 1/1 wallets\n"


def test_nothing_to_do_draws_nothing() -> None:
    out = StringIO()
    ProgressBar(out, label="expire")(0, 0)
    assert out.getvalue() == ""
