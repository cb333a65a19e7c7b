"""Dispatches the payouts whose dispatch was lost, or one payout now (``--id``); says how many
reserved payouts are still young and when the next would count as stuck. Output and exit status
as every ops command (``core.commands``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import OpsCommand
from core.exceptions import ApplicationError
from payouts.selectors import payout_find
from payouts.services import DEFAULT_SWEEP_LIMIT, payout_dispatch_now, payouts_dispatch_stuck


class Command(OpsCommand):
    help = (
        "Dispatch reserved payouts whose dispatch was lost (older than --older-than seconds, "
        "default PAYOUT_DISPATCH_STUCK_AFTER) and processing payouts whose claim went stale, or "
        "with --id one reserved (or stale processing) payout now (recorded in the audit trail). "
        "Dispatch is idempotent. Prints what it considered, what it did and what waits; exits 1 "
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
        parser.add_argument(
            "--id",
            dest="payout",
            metavar="ID",
            help="dispatch this payout now (numeric id or internal reference)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        older_than = options["older_than"]
        if older_than is not None and older_than < 0:
            raise CommandError("--older-than must be zero or more seconds")
        if options["payout"] is not None:
            if options["enqueue"]:
                raise CommandError("--id dispatches here; leave out --enqueue")
            self._dispatch_one(options["payout"])
            return
        report = payouts_dispatch_stuck(
            older_than=None if older_than is None else timedelta(seconds=older_than),
            limit=options["limit"],
            enqueue=options["enqueue"],
            progress=self.progress("dispatch", unit="payouts"),
        )
        self.report(
            lines=report.summary(),
            data=report.as_dict(),
            failure=f"{report.errors} payout dispatch(es) failed; see the log"
            if report.errors
            else "",
        )

    def _dispatch_one(self, identifier: str) -> None:
        payout = payout_find(identifier=identifier)
        if payout is None:
            raise CommandError(f"no payout with id or internal reference {identifier!r}")
        try:
            result = payout_dispatch_now(payout=payout, actor=self.actor())
        except ApplicationError as error:
            raise CommandError(error.message) from error
        self.report(
            lines=result.summary(),
            data=result.as_dict(),
            failure="the provider could not be reached; the payout waits for the next attempt"
            if result.failed
            else "",
        )
