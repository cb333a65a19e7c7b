"""Wallet events: ``wallet.balance_low``, recorded when the wallets app announces that a
wallet's available balance fell below the merchant's low-balance threshold
(``wallets.signals.wallet_balance_low``), inside the transaction that made the change. The
wallets app sits below webhooks and never imports it, so the payload is built here.

Payload ``data``::

    {
      "wallet_id": 12, "mode": "live", "currency": "NGN",
      "available_balance": "3500.00", "reserved_balance": "1510.00",
      "low_balance_threshold": "5000.00",
      "trigger": "balance_change",           # or "threshold_set" (no ledger entry)
      "ledger_entry": {"id": 345, "entry_type": "payout_reserve",
                       "reference": "PYT_…", "amount": "1510.00"},   # null for threshold_set
      "occurred_at": "2025-06-01T09:30:00.123456+01:00"
    }
"""

from __future__ import annotations

import logging
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from core.money import format_amount
from webhooks.events import event_record, event_timestamp
from webhooks.models import Event, EventType

if TYPE_CHECKING:
    from wallets.models import LedgerEntry, Wallet

logger = logging.getLogger(__name__)

TRIGGER_BALANCE_CHANGE = "balance_change"
TRIGGER_THRESHOLD_SET = "threshold_set"


def wallet_balance_low_data(
    *,
    wallet: Wallet,
    available_balance: Decimal,
    low_balance_threshold: Decimal,
    ledger_entry: LedgerEntry | None,
    occurred_at: datetime,
) -> dict[str, Any]:
    return {
        "wallet_id": wallet.pk,
        "mode": wallet.mode,
        "currency": wallet.currency,
        "available_balance": format_amount(available_balance),
        "reserved_balance": format_amount(wallet.reserved_balance),
        "low_balance_threshold": format_amount(low_balance_threshold),
        "trigger": TRIGGER_THRESHOLD_SET if ledger_entry is None else TRIGGER_BALANCE_CHANGE,
        "ledger_entry": None
        if ledger_entry is None
        else {
            "id": ledger_entry.pk,
            "entry_type": ledger_entry.entry_type,
            "reference": ledger_entry.reference,
            "amount": format_amount(ledger_entry.amount),
        },
        "occurred_at": event_timestamp(occurred_at),
    }


def wallet_balance_low_record(
    *,
    wallet: Wallet,
    available_balance: Decimal,
    low_balance_threshold: Decimal,
    ledger_entry: LedgerEntry | None,
) -> Event:
    """Records ``wallet.balance_low`` for the wallet's merchant and mode, delivered to the
    merchant's webhook URL for that mode when the surrounding transaction commits. The event's
    ``reference`` is the wallet's static account number (the ledger entry's reference, up to
    100 characters, is in the payload)."""
    occurred_at = ledger_entry.created_at if ledger_entry is not None else timezone.now()
    event = event_record(
        merchant_id=wallet.merchant_id,
        mode=wallet.mode,
        event_type=EventType.WALLET_BALANCE_LOW,
        reference=wallet.static_account_number,
        data=wallet_balance_low_data(
            wallet=wallet,
            available_balance=available_balance,
            low_balance_threshold=low_balance_threshold,
            ledger_entry=ledger_entry,
            occurred_at=occurred_at,
        ),
    )
    logger.info(
        "event %s wallet.balance_low recorded for wallet %s (available %s < %s)",
        event.event_id,
        wallet.pk,
        available_balance,
        low_balance_threshold,
    )
    return event
