"""Asks the provider about recently successful payouts and applies the returns it reports (a
transfer the beneficiary's bank sent back after it succeeded). Output and exit status as every
ops command (``core.commands``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import OpsCommand
from payouts.services import DEFAULT_SWEEP_LIMIT, payouts_check_returns


class Command(OpsCommand):
    help = (
        "Check the successful, not yet returned payouts completed in the last --days days with "
        "the provider; a transfer it now reports reversed is a return: the payout keeps "
        "successful, gains returned_at, and its principal goes back to available. Exits 1 if "
        "the provider could not be asked about some payout."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=7)
        parser.add_argument("--limit", type=int, default=DEFAULT_SWEEP_LIMIT)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["days"] < 1 or options["limit"] < 1:
            raise CommandError("--days and --limit must be at least 1")
        report = payouts_check_returns(
            since=timedelta(days=options["days"]),
            limit=options["limit"],
            progress=self.progress("returns", unit="payouts"),
        )
        self.report(
            lines=report.lines(),
            data=report.as_dict(),
            failure=f"{report.errors} return check(s) failed; see the log" if report.errors else "",
        )
