"""Recomputes every wallet from its ledger and names each wallet that disagrees (merchant, mode,
the differences); exits 1 when anything disagrees. Output and exit status as every ops command
(``core.commands``)."""

from __future__ import annotations

from typing import Any

from core.commands import OpsCommand
from wallets.selectors import wallet_reconciliation


class Command(OpsCommand):
    help = (
        "Check that each wallet's available and reserved balances equal the sums of its ledger "
        "deltas, and that every entry's balance-after snapshot matches the running sum."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        result = wallet_reconciliation(progress=self.progress("reconcile", unit="wallets"))
        self.report(
            lines=result.lines(),
            data=result.as_dict(),
            failure="" if result.balanced else "wallet reconciliation found mismatches",
        )
