"""Imports a provider's or bank's statement file and matches it to our payouts, as the admin's
"Import a statement…" does. The same file again is recognised (by its SHA-256) and not
imported twice (unless that import was voided). ``--mode`` defaults to the mode of the payouts
the file's references name; when they name none of ours, or both modes, it must be given.
Output as every ops command (``core.commands``); exit status: 0 imported (or
already imported), 1 the file could not be read."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import OpsCommand
from core.dates import local_text
from core.exceptions import ApplicationError
from merchants.models import Mode
from reconciliation.formats import FORMATS
from reconciliation.models import MatchCategory
from reconciliation.services import statement_import

ACTOR_LABEL = "manage.py import_statement"


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as error:
        raise CommandError(f"{value!r} is not a date (YYYY-MM-DD)") from error


class Command(OpsCommand):
    help = "Import a statement file (CSV) and match every line to our payouts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the statement file")
        parser.add_argument(
            "--format", dest="statement_format", required=True, choices=sorted(FORMATS)
        )
        parser.add_argument(
            "--mode",
            default=None,
            choices=Mode.values,
            help="whose payouts to match against; default: the mode of the payouts the file's "
            "references name (refused when they name none of ours or both modes)",
        )
        parser.add_argument("--from", dest="period_start", help="first day covered (YYYY-MM-DD)")
        parser.add_argument("--to", dest="period_end", help="last day covered (YYYY-MM-DD)")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        start, end = options["period_start"], options["period_end"]
        if (start is None) != (end is None):
            raise CommandError("give both --from and --to, or neither")
        period = (_day(start), _day(end)) if start and end else None
        try:
            result = statement_import(
                content=path.read_bytes(),
                file_name=path.name,
                statement_format=options["statement_format"],
                mode=options["mode"],
                actor_label=ACTOR_LABEL,
                period=period,
            )
        except ApplicationError as error:
            raise CommandError(f"{path.name}: {error.message}") from error
        run = result.run
        data = {
            "run_id": run.pk,
            "file": path.name,
            "duplicate": result.duplicate,
            "mode": run.mode,
            "period_start": str(run.period_start),
            "period_end": str(run.period_end),
            "line_count": run.line_count,
            "duration_ms": run.duration_ms,
            "category_counts": {
                value: run.category_counts.get(value, 0) for value in MatchCategory.values
            },
        }
        if result.duplicate:
            self.report(
                lines=(
                    f"{path.name} was already imported as #{run.pk} on "
                    f"{local_text(run.created_at)}; nothing imported."
                ),
                data=data,
            )
            return
        counts = ", ".join(
            f"{label.lower()}: {run.category_counts.get(value, 0)}"
            for value, label in MatchCategory.choices
        )
        self.report(
            lines=(
                f"Imported {run.line_count} line(s) from {path.name} as #{run.pk} "
                f"({run.period_start}–{run.period_end}, {run.mode}) in {run.duration_ms} ms. "
                f"{counts}."
            ),
            data=data,
        )
