"""Requeries the ambiguous and long-dispatched payouts that are due, or one payout now
(``--id``); says how many wait and when the next is due. Output and exit status as every ops
command (``core.commands``)."""

from __future__ import annotations

from typing import Any

from payouts.management.commands._one_or_sweep import OneOrSweepCommand
from payouts.models import Payout
from payouts.services import payout_requery_now, payouts_requery_due


class Command(OneOrSweepCommand):
    help = (
        "Requery dispatched and ambiguous payouts whose next requery time has come "
        "(PAYOUT_REQUERY_SCHEDULE: 60-90 s after sending, then ~3, 10, 30 min, then hourly), "
        "counting those unresolved past PAYOUT_REQUERY_ESCALATE_AFTER as overdue, "
        "or with --id one dispatched/ambiguous payout now, whatever its next requery time "
        "(recorded in the audit trail). Prints what it considered, what it did and what waits; "
        "exits 1 if any requery failed."
    )
    verb, verb_s, verb_ing, verb_plural = "requery", "requeries", "requerying", "requery(ies)"

    def sweep(self, options: dict[str, Any]) -> Any:
        return payouts_requery_due(
            limit=options["limit"],
            enqueue=options["enqueue"],
            progress=self.progress("requery", unit="payouts"),
        )

    def act_now(self, payout: Payout) -> Any:
        return payout_requery_now(payout=payout, actor=self.actor())
