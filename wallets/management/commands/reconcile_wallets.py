"""Recomputes every wallet from its ledger; exits non-zero when anything disagrees."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.progress import ProgressBar
from wallets.selectors import ledger_snapshot_mismatch_count, wallet_reconciliation_list

PROGRESS_THRESHOLD = 50


class Command(BaseCommand):
    help = (
        "Check that each wallet's available and reserved balances equal the sums of its ledger "
        "deltas, and that every entry's balance-after snapshot matches the running sum."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        wallets = wallet_reconciliation_list()
        total = wallets.count()
        progress = None
        if not options["no_progress"] and total >= PROGRESS_THRESHOLD:
            progress = ProgressBar(self.stderr, label="reconcile", unit="wallets")
        step = max(1, total // (100 if self.stderr.isatty() else 10))
        mismatched = []
        for done, wallet in enumerate(wallets.iterator(chunk_size=500), start=1):
            if (
                wallet.available_balance != wallet.ledger_available
                or wallet.reserved_balance != wallet.ledger_reserved
            ):
                mismatched.append(wallet)
            if progress is not None and (done % step == 0 or done == total):
                progress(done, total)
        for wallet in mismatched:
            self.stderr.write(
                f"wallet {wallet.pk} ({wallet.mode}): available {wallet.available_balance} vs "
                f"ledger {wallet.ledger_available}; reserved {wallet.reserved_balance} vs "
                f"ledger {wallet.ledger_reserved}"
            )
        bad_snapshots = ledger_snapshot_mismatch_count()
        summary = (
            f"Reconciled {total} wallet(s): {total - len(mismatched)} match, "
            f"{len(mismatched)} mismatch; {bad_snapshots} ledger snapshot mismatch(es)."
        )
        if mismatched or bad_snapshots:
            raise CommandError(summary)
        self.stdout.write(self.style.SUCCESS(summary))
