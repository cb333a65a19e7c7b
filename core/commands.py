"""``OpsCommand``: the one way every ops command (sweepers, expiry, wallet reconciliation,
statement import) talks to the person or the script running it.

* **stdout** holds the result only: the human summary (plain text, its last line the one-line
  summary), or with ``--json`` exactly one JSON object and nothing else (counts as numbers,
  amounts as strings, instants in Lagos time with their offset, plus ``"ok"``).
* **stderr** holds the progress bar (``core.progress``), written to the raw stream in the
  terminal's plain style, not in Django's error style: redrawn in place on a terminal, a line
  per tenth into a pipe or a file. ``--no-progress`` leaves it out.
* **Logging.** While the command runs, the root logger's ``console`` handler (the one
  ``settings.LOGGING`` installs; every project logger reaches it) passes WARNING and above
  only, so the services' INFO lines do not interleave with the progress line. ``-v 2`` (or
  more) keeps them. The handler's level is restored when the command ends.
* **Exit status.** 0 when all is well. When something failed or mismatched, the command prints
  its summary (or its JSON object) on stdout all the same, then raises ``CommandError`` with a
  short message: ``manage.py`` prints it on stderr and exits 1; ``call_command`` raises it. A
  usage error (a bad option, an unknown payout) is a ``CommandError`` before anything is
  printed, so stdout stays empty.
* **Audit.** ``command_actor()`` names the command and the operating-system user, the actor a
  command records in the audit trail for an act a person forced (``audit.services``).
"""

from __future__ import annotations

import getpass
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.progress import ProgressBar

CONSOLE_HANDLER = "console"
QUIET_LEVEL = logging.WARNING


@contextmanager
def console_logging_quieted(*, verbosity: int) -> Iterator[None]:
    """Raises the root logger's ``console`` handler to WARNING for the duration, unless
    ``verbosity`` is 2 or more."""
    if verbosity >= 2:
        yield
        return
    handlers = [h for h in logging.getLogger().handlers if h.get_name() == CONSOLE_HANDLER]
    levels = [handler.level for handler in handlers]
    for handler in handlers:
        handler.setLevel(max(handler.level, QUIET_LEVEL))
    try:
        yield
    finally:
        for handler, level in zip(handlers, levels, strict=True):
            handler.setLevel(level)


def command_actor(command_name: str) -> str:
    """``manage.py requery_ambiguous (alice)``: an audit actor for a command-line act."""
    try:
        who = getpass.getuser()
    except (KeyError, OSError):
        who = "unknown"
    return f"manage.py {command_name} ({who})"


class OpsCommand(BaseCommand):
    """Adds ``--json`` and ``--no-progress`` to the command's own options; ``handle`` makes its
    bar with ``progress()`` and ends with ``report()``."""

    json_output = False
    show_progress = True

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument(
            "--json",
            action="store_true",
            dest="json_output",
            help="print exactly one JSON object on stdout instead of the summary",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
        return parser

    def execute(self, *args: Any, **options: Any) -> str | None:
        self.json_output = bool(options.get("json_output"))
        self.show_progress = not options.get("no_progress")
        with console_logging_quieted(verbosity=int(options.get("verbosity", 1))):
            return super().execute(*args, **options)

    @property
    def command_name(self) -> str:
        return self.__module__.rsplit(".", 1)[-1]

    def actor(self) -> str:
        return command_actor(self.command_name)

    def progress(self, label: str, *, unit: str = "") -> ProgressBar | None:
        """A bar on the raw stderr stream, or ``None`` with ``--no-progress``."""
        if not self.show_progress:
            return None
        return ProgressBar(self.stderr._out, label=label, unit=unit)  # type: ignore[arg-type]  # OutputWrapper._out is the wrapped stream; django-stubs leave it undeclared

    def report(
        self, *, lines: str | Sequence[str], data: Mapping[str, Any], failure: str = ""
    ) -> None:
        """Prints ``lines`` (or, with ``--json``, ``data`` as one JSON object) on stdout; then,
        when ``failure`` says what went wrong, raises ``CommandError`` with it (exit status 1)."""
        if self.json_output:
            self.stdout.write(json.dumps({**data, "ok": not failure}, ensure_ascii=False))
        else:
            for line in [lines] if isinstance(lines, str) else lines:
                self.stdout.write(line)
        if failure:
            raise CommandError(failure)
