"""One-payout wallet writes for tests that build ledger states, each through the writer
production code calls: a reservation through ``wallet_reserve_each`` (the bulk create's) on a
locked wallet, a capture or a release through ``wallet_reservations_settle`` (every settling
path's) in a transaction of its own."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.db import transaction

from wallets.exceptions import InsufficientBalanceError
from wallets.models import LedgerEntry, Wallet
from wallets.services import (
    ReservationSettlement,
    ReservationSettlementKind,
    WalletReservation,
    wallet_reservations_settle,
    wallet_reserve_each,
)


def wallet_reserve(
    *, wallet: Wallet, amount: Decimal, reference: str, payout_id: int | None = None
) -> LedgerEntry:
    """Moves ``amount`` from available to reserved on ``wallet`` (locked with ``wallet_lock``
    in the current transaction); ``InsufficientBalanceError`` when it is not covered."""
    [entry] = wallet_reserve_each(
        wallet=wallet,
        reservations=[WalletReservation(amount=amount, reference=reference, payout_id=payout_id)],
    )
    if entry is None:
        raise InsufficientBalanceError()
    return entry


@transaction.atomic
def wallet_capture(
    *,
    wallet_id: int,
    amount: Decimal,
    fee_amount: Decimal,
    reference: str,
    payout_id: int | None = None,
) -> LedgerEntry:
    """Captures a successful payout's reservation: reserved -= amount + fee (``payout_debit``)."""
    [entry] = wallet_reservations_settle(
        settlements=[
            ReservationSettlement(
                kind=ReservationSettlementKind.CAPTURE,
                wallet_id=wallet_id,
                amount=amount,
                fee_amount=fee_amount,
                reference=reference,
                payout_id=payout_id,
            )
        ]
    )
    return entry


@transaction.atomic
def wallet_release(
    *, wallet_id: int, amount: Decimal, reference: str, payout_id: int | None = None
) -> LedgerEntry:
    """Returns a failed payout's total debit from reserved to available (``payout_reversal``)."""
    [entry] = wallet_reservations_settle(
        settlements=[
            ReservationSettlement(
                kind=ReservationSettlementKind.RELEASE,
                wallet_id=wallet_id,
                amount=amount,
                reference=reference,
                payout_id=payout_id,
            )
        ]
    )
    return entry


def wallet_settle_each(
    *, wallet_id: int, settlements: Sequence[ReservationSettlement]
) -> list[LedgerEntry]:
    """``wallet_reservations_settle`` for settlements of one wallet."""
    if any(settlement.wallet_id != wallet_id for settlement in settlements):
        raise ValueError(f"wallet_settle_each: a settlement is not of wallet {wallet_id}")
    return wallet_reservations_settle(settlements=settlements)
