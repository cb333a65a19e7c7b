"""The shape of the payout ops commands that sweep the due payouts or act on one payout now
(``dispatch_stuck``, ``requery_ambiguous``): ``--limit`` and ``--enqueue`` for the sweep, ``--id``
for one payout (found by numeric id or internal reference, recorded in the audit trail), the
output and exit status of every ops command (``core.commands``). Not a command itself (Django
skips modules whose name starts with ``_``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.commands import OpsCommand
from core.exceptions import ApplicationError
from payouts.models import Payout
from payouts.selectors import payout_find
from payouts.services import DEFAULT_SWEEP_LIMIT


class OneOrSweepCommand(OpsCommand):
    # The action's words: "dispatch", "dispatches", "dispatching", "dispatch(es)".
    verb: str
    verb_s: str
    verb_ing: str
    verb_plural: str

    def add_sweep_arguments(self, parser: CommandParser) -> None:
        """The sweep's own arguments, listed first."""

    def sweep(self, options: dict[str, Any]) -> Any:
        """Runs the sweep; answers its report (``summary``, ``as_dict``, ``errors``)."""
        raise NotImplementedError

    def act_now(self, payout: Payout) -> Any:
        """Acts on one payout now; answers its result (``summary``, ``as_dict``)."""
        raise NotImplementedError

    def now_failure(self, result: Any) -> str:
        """What makes acting on one payout a failure (exit 1); ``""`` if nothing."""
        return ""

    def add_arguments(self, parser: CommandParser) -> None:
        self.add_sweep_arguments(parser)
        parser.add_argument("--limit", type=int, default=DEFAULT_SWEEP_LIMIT)
        parser.add_argument(
            "--enqueue",
            action="store_true",
            help=f"hand each payout to the Celery workers instead of {self.verb_ing} here",
        )
        parser.add_argument(
            "--id",
            dest="payout",
            metavar="ID",
            help=f"{self.verb} this payout now (numeric id or internal reference)",
        )

    def check_options(self, options: dict[str, Any]) -> None:
        """Refuses the sweep's own arguments when they are out of range (``CommandError``)."""

    def handle(self, *args: Any, **options: Any) -> None:
        if options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        self.check_options(options)
        if options["payout"] is None:
            report = self.sweep(options)
            self.report(
                lines=report.summary(),
                data=report.as_dict(),
                failure=f"{report.errors} payout {self.verb_plural} failed; see the log"
                if report.errors
                else "",
            )
            return
        if options["enqueue"]:
            raise CommandError(f"--id {self.verb_s} here; leave out --enqueue")
        identifier = options["payout"]
        payout = payout_find(identifier=identifier)
        if payout is None:
            raise CommandError(f"no payout with id or internal reference {identifier!r}")
        try:
            result = self.act_now(payout)
        except ApplicationError as error:
            raise CommandError(error.message) from error
        self.report(lines=result.summary(), data=result.as_dict(), failure=self.now_failure(result))
