from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.progress import ProgressBar
from payouts.services import DEFAULT_SWEEP_LIMIT, payouts_requery_due


class Command(BaseCommand):
    help = (
        "Requery ambiguous and long-dispatched payouts whose next requery time has come "
        "(PAYOUT_AMBIGUOUS_REQUERY_DELAY after becoming ambiguous, then exponential backoff). "
        "Prints a progress bar and a one-line summary; exits non-zero if any requery failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--limit", type=int, default=DEFAULT_SWEEP_LIMIT)
        parser.add_argument(
            "--enqueue",
            action="store_true",
            help="hand each payout to the Celery workers instead of requerying here",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        report = payouts_requery_due(
            limit=options["limit"],
            enqueue=options["enqueue"],
            progress=ProgressBar(self.stderr, label="requery"),
        )
        self.stdout.write(report.summary())
        if report.errors:
            raise CommandError(f"{report.errors} payout requery(ies) failed; see the log")
