"""Requeries the ambiguous and long-dispatched payouts that are due, or one payout now
(``--id``); says how many wait and when the next is due. Output and exit status as every ops
command (``core.commands``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import OpsCommand
from core.exceptions import ApplicationError
from payouts.selectors import payout_find
from payouts.services import DEFAULT_SWEEP_LIMIT, payout_requery_now, payouts_requery_due


class Command(OpsCommand):
    help = (
        "Requery ambiguous and long-dispatched payouts whose next requery time has come "
        "(PAYOUT_AMBIGUOUS_REQUERY_DELAY after becoming ambiguous, then exponential backoff), "
        "or with --id one dispatched/ambiguous payout now, whatever its next requery time "
        "(recorded in the audit trail). Prints what it considered, what it did and what waits; "
        "exits 1 if any requery failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--limit", type=int, default=DEFAULT_SWEEP_LIMIT)
        parser.add_argument(
            "--enqueue",
            action="store_true",
            help="hand each payout to the Celery workers instead of requerying here",
        )
        parser.add_argument(
            "--id",
            dest="payout",
            metavar="ID",
            help="requery this payout now (numeric id or internal reference)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        if options["payout"] is not None:
            if options["enqueue"]:
                raise CommandError("--id requeries here; leave out --enqueue")
            self._requery_one(options["payout"])
            return
        report = payouts_requery_due(
            limit=options["limit"],
            enqueue=options["enqueue"],
            progress=self.progress("requery", unit="payouts"),
        )
        self.report(
            lines=report.summary(),
            data=report.as_dict(),
            failure=f"{report.errors} payout requery(ies) failed; see the log"
            if report.errors
            else "",
        )

    def _requery_one(self, identifier: str) -> None:
        payout = payout_find(identifier=identifier)
        if payout is None:
            raise CommandError(f"no payout with id or internal reference {identifier!r}")
        try:
            result = payout_requery_now(payout=payout, actor=self.actor())
        except ApplicationError as error:
            raise CommandError(error.message) from error
        self.report(lines=result.summary(), data=result.as_dict())
