"""``wallet_reserve_each``: a bulk payout's reservations, each with its own ``payout_reserve``
entry as ``wallet_reserve`` writes it, in two statements for the lot."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from tests.wallets.writers import wallet_reserve
from wallets.exceptions import WalletInactiveError
from wallets.models import LedgerEntry, LedgerEntryType, Wallet, WalletStatus
from wallets.selectors import wallet_totals
from wallets.services import (
    WalletReservation,
    wallet_alerts_set,
    wallet_fund,
    wallet_lock,
    wallet_reserve_each,
    wallet_status_set,
)
from webhooks.models import Event, EventType

pytestmark = pytest.mark.django_db


def _funded(wallet: Wallet, amount: str) -> Wallet:
    wallet_fund(wallet_id=wallet.pk, amount=Decimal(amount), reference=f"EACH-{amount}")
    wallet.refresh_from_db()
    return wallet


def _reserve_each(wallet: Wallet, amounts: list[str]) -> list[LedgerEntry | None]:
    with transaction.atomic():
        locked = wallet_lock(wallet_id=wallet.pk)
        return wallet_reserve_each(
            wallet=locked,
            reservations=[
                WalletReservation(amount=Decimal(amount), reference=f"po_each_{n}", payout_id=n)
                for n, amount in enumerate(amounts, start=1)
            ],
        )


def test_reserves_in_order_and_skips_what_the_balance_no_longer_covers(
    test_wallet: Wallet,
) -> None:
    wallet = _funded(test_wallet, "3000.00")
    answers = _reserve_each(wallet, ["1000.00", "1500.00", "600.00", "500.00"])

    assert [entry is not None for entry in answers] == [True, True, False, True]
    entries = list(
        LedgerEntry.objects.filter(wallet=wallet, payout_id__isnull=False).order_by("id")
    )
    assert [entry.pk for entry in entries] == [entry.pk for entry in answers if entry]
    assert [(e.entry_type, e.amount, e.available_delta, e.reserved_delta) for e in entries] == [
        (LedgerEntryType.PAYOUT_RESERVE, Decimal(a), -Decimal(a), Decimal(a))
        for a in ("1000.00", "1500.00", "500.00")
    ]
    assert [(e.available_balance_after, e.reserved_balance_after) for e in entries] == [
        (Decimal("2000.00"), Decimal("1000.00")),
        (Decimal("500.00"), Decimal("2500.00")),
        (Decimal("0.00"), Decimal("3000.00")),
    ]
    assert [(e.reference, e.payout_id) for e in entries] == [
        ("po_each_1", 1),
        ("po_each_2", 2),
        ("po_each_4", 4),
    ]
    wallet.refresh_from_db()
    assert (wallet.available_balance, wallet.reserved_balance) == (Decimal("0"), Decimal("3000"))
    assert wallet_totals(wallet=wallet).balanced


def test_writes_what_wallet_reserve_writes(test_wallet: Wallet, live_wallet: Wallet) -> None:
    one_by_one = _funded(test_wallet, "5000.00")
    at_once = _funded(live_wallet, "5000.00")
    with transaction.atomic():
        locked = wallet_lock(wallet_id=one_by_one.pk)
        for n, amount in enumerate(["700.00", "1200.50"], start=1):
            wallet_reserve(
                wallet=locked, amount=Decimal(amount), reference=f"po_each_{n}", payout_id=n
            )
    _reserve_each(at_once, ["700.00", "1200.50"])

    def written(wallet: Wallet) -> list[tuple]:
        return list(
            LedgerEntry.objects.filter(wallet=wallet, payout_id__isnull=False)
            .order_by("id")
            .values_list(
                "entry_type",
                "amount",
                "fee_amount",
                "available_delta",
                "reserved_delta",
                "available_balance_after",
                "reserved_balance_after",
                "reference",
                "payout_id",
                "description",
            )
        )

    assert written(one_by_one) == written(at_once)


def test_two_statements_for_any_number(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "100000.00")
    with transaction.atomic():
        locked = wallet_lock(wallet_id=wallet.pk)
        with CaptureQueriesContext(connection) as queries:
            wallet_reserve_each(
                wallet=locked,
                reservations=[
                    WalletReservation(amount=Decimal("10.00"), reference=f"po_{n}", payout_id=n)
                    for n in range(200)
                ],
            )
    statements = [query["sql"].split(" ")[0:3] for query in queries.captured_queries]
    assert statements == [
        ["UPDATE", '"wallets_wallet"', "SET"],
        ["INSERT", "INTO", '"wallets_ledgerentry"'],
    ]


def test_a_crossing_of_the_low_balance_threshold_is_alerted_once(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "10000.00")
    wallet_alerts_set(wallet_id=wallet.pk, low_balance_threshold=Decimal("5000.00"))
    answers = _reserve_each(wallet, ["3000.00", "3000.00", "1000.00"])

    event = Event.objects.get(event_type=EventType.WALLET_BALANCE_LOW)
    data = json.loads(event.body)["data"]
    assert data["available_balance"] == "4000.00"
    assert data["ledger_entry"]["id"] == answers[1].pk
    wallet.refresh_from_db()
    assert wallet.low_balance_alerted is True


def test_an_inactive_wallet_refuses_them_all(test_wallet: Wallet) -> None:
    wallet = _funded(test_wallet, "1000.00")
    wallet_status_set(wallet_id=wallet.pk, status=WalletStatus.INACTIVE)
    with pytest.raises(WalletInactiveError):
        _reserve_each(wallet, ["10.00"])
    assert not LedgerEntry.objects.filter(entry_type=LedgerEntryType.PAYOUT_RESERVE).exists()


def test_needs_the_callers_transaction(test_wallet: Wallet) -> None:
    with pytest.raises(RuntimeError):
        wallet_reserve_each(
            wallet=test_wallet,
            reservations=[WalletReservation(amount=Decimal("1.00"), reference="po_x")],
        )
