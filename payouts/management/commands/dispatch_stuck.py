from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.progress import ProgressBar
from payouts.services import DEFAULT_SWEEP_LIMIT, payouts_dispatch_stuck


class Command(BaseCommand):
    help = (
        "Dispatch reserved payouts whose dispatch was lost (older than --older-than seconds, "
        "default PAYOUT_DISPATCH_STUCK_AFTER) and processing payouts whose claim went stale. "
        "Dispatch is idempotent. Prints a progress bar and a one-line summary; exits non-zero "
        "if any dispatch failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", type=int, default=None, help="seconds")
        parser.add_argument("--limit", type=int, default=DEFAULT_SWEEP_LIMIT)
        parser.add_argument(
            "--enqueue",
            action="store_true",
            help="hand each payout to the Celery workers instead of dispatching here",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        older_than = options["older_than"]
        if older_than is not None and older_than < 0:
            raise CommandError("--older-than must be zero or more seconds")
        report = payouts_dispatch_stuck(
            older_than=None if older_than is None else timedelta(seconds=older_than),
            limit=options["limit"],
            enqueue=options["enqueue"],
            progress=ProgressBar(self.stderr, label="dispatch"),
        )
        self.stdout.write(report.summary())
        if report.errors:
            raise CommandError(f"{report.errors} payout dispatch(es) failed; see the log")
