"""Checks the payout list's per-day counts against the payouts themselves, naming each
(wallet, status, day) that disagrees; ``--fold`` folds the pending count changes in now (beat
does it every ``PAYOUT_COUNTS_FOLD_SECONDS``); ``--rebuild`` recounts them all while payout
writes wait, and is recorded in the audit trail. Output and exit status as every ops command
(``core.commands``): a check that finds a mismatch exits 1; a fold or a rebuild exits 0."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from core.commands import OpsCommand
from payouts.selectors import PayoutCountMismatch, payout_counts_mismatches
from payouts.services import payout_counts_fold, payout_counts_rebuild

MISMATCHES_SHOWN = 20


def _mismatch_lines(mismatches: list[PayoutCountMismatch]) -> list[str]:
    lines = [
        f"Mismatch: wallet {m.wallet_id}, {m.status}, {m.day.isoformat()}: "
        f"stored {m.stored}, counted {m.counted}"
        for m in mismatches[:MISMATCHES_SHOWN]
    ]
    if len(mismatches) > MISMATCHES_SHOWN:
        lines.append(f"… and {len(mismatches) - MISMATCHES_SHOWN} more")
    return lines


class Command(OpsCommand):
    help = (
        "Check the payout list's per-(wallet, status, day) counts against the payouts; "
        "--fold folds pending count changes in; --rebuild recounts them (payout writes wait "
        "meanwhile)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        action = parser.add_mutually_exclusive_group()
        action.add_argument(
            "--fold",
            action="store_true",
            help="fold the count changes the triggers appended into the counts now",
        )
        action.add_argument(
            "--rebuild",
            action="store_true",
            help="recount every count from the payouts and write them afresh (audited)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["fold"]:
            folded = payout_counts_fold()
            self.report(
                lines=f"Folded {folded} payout count change(s) into the per-day counts.",
                data={"folded": folded},
            )
            return
        if options["rebuild"]:
            rebuilt = payout_counts_rebuild(actor=self.actor())
            self.report(
                lines=[
                    *_mismatch_lines(rebuilt.mismatches),
                    f"Rebuilt the payout counts: {rebuilt.rows_written} (wallet, status, day) "
                    f"row(s); {len(rebuilt.mismatches)} mismatch(es) mended.",
                ],
                data={
                    "rebuilt": True,
                    "rows": rebuilt.rows_written,
                    "mismatches": [m.as_dict() for m in rebuilt.mismatches],
                },
            )
            return
        mismatches = payout_counts_mismatches()
        self.report(
            lines=[
                *_mismatch_lines(mismatches),
                f"Checked the payout counts: {len(mismatches)} mismatch(es)."
                + (" Run payout_counts --rebuild to recount them." if mismatches else ""),
            ],
            data={"rebuilt": False, "mismatches": [m.as_dict() for m in mismatches]},
            failure="payout counts disagree with the payouts" if mismatches else "",
        )
