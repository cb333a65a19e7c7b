"""A small progress bar for ops commands: redrawn in place on a terminal, a line per tenth
otherwise (so logs stay readable)."""

from __future__ import annotations

from django.core.management.base import OutputWrapper

BAR_WIDTH = 30


class ProgressBar:
    """Called with ``(done, total)`` after each item; ``unit`` (e.g. ``"wallets"``) follows the
    count when given."""

    def __init__(self, stream: OutputWrapper, *, label: str, unit: str = "") -> None:
        self.stream = stream
        self.label = label
        self.unit = unit
        self.interactive = stream.isatty()
        self._last_tenth = -1

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        fraction = done / total
        filled = int(BAR_WIDTH * fraction)
        line = f"{self.label} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}"
        if self.unit:
            line = f"{line} {self.unit}"
        if self.interactive:
            self.stream.write("\r" + line, ending="\n" if done == total else "")
            self.stream.flush()
            return
        tenth = int(fraction * 10)
        if tenth != self._last_tenth or done == total:
            self._last_tenth = tenth
            self.stream.write(line)
