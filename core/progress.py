"""A small progress bar for ops commands, written as plain text to a raw stream (the command's
stderr): redrawn in place on a terminal (at most once per percent), a line per tenth otherwise,
so a file or a pipe keeps a readable record."""

from __future__ import annotations

from typing import Protocol

BAR_WIDTH = 30


class TextStream(Protocol):
    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


def _is_terminal(stream: TextStream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class ProgressBar:
    """Called with ``(done, total)`` after each item; ``unit`` (e.g. ``"wallets"``) follows the
    count when given."""

    def __init__(self, stream: TextStream, *, label: str, unit: str = "") -> None:
        self.stream = stream
        self.label = label
        self.unit = unit
        self.interactive = _is_terminal(stream)
        self._last_step = -1

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        fraction = min(done / total, 1.0)
        step = int(fraction * (100 if self.interactive else 10))
        if step == self._last_step and done != total:
            return
        self._last_step = step
        filled = int(BAR_WIDTH * fraction)
        line = f"{self.label} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}"
        if self.unit:
            line = f"{line} {self.unit}"
        if self.interactive:
            self.stream.write("\r" + line + ("\n" if done >= total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
