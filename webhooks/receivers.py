"""Receivers of the signals lower apps send (connected in ``WebhooksConfig.ready``)."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from webhooks.wallet_events import wallet_balance_low_record

if TYPE_CHECKING:
    from wallets.models import LedgerEntry, Wallet


def wallet_balance_low_receive(
    sender: Any,
    *,
    wallet: Wallet,
    available_balance: Decimal,
    low_balance_threshold: Decimal,
    ledger_entry: LedgerEntry | None,
    **kwargs: Any,
) -> None:
    """``wallets.signals.wallet_balance_low``: records ``wallet.balance_low`` in the sender's
    transaction (a failure rolls the balance change back with it, as for payout events)."""
    wallet_balance_low_record(
        wallet=wallet,
        available_balance=available_balance,
        low_balance_threshold=low_balance_threshold,
        ledger_entry=ledger_entry,
    )
