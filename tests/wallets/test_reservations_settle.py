"""``wallet_settle_each``: a dispatch batch's captures and releases on one wallet, each with its
own entry as ``wallet_capture`` and ``wallet_release`` write it, in one balance update and one
ledger insert for the lot; ``wallet_reservations_settle`` groups them by wallet."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from tests.wallets.writers import wallet_capture, wallet_release, wallet_settle_each
from wallets.exceptions import InsufficientReservedBalanceError
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from wallets.selectors import wallet_totals
from wallets.services import (
    ReservationSettlement,
    ReservationSettlementKind,
    WalletReservation,
    wallet_fund,
    wallet_lock,
    wallet_reservations_settle,
    wallet_reserve_each,
)
from wallets.signals import wallet_balance_low

pytestmark = pytest.mark.django_db

CAPTURE, RELEASE = ReservationSettlementKind.CAPTURE, ReservationSettlementKind.RELEASE


def _reserved(wallet: Wallet, *, funded: str, reserved: list[str]) -> Wallet:
    """The wallet funded with ``funded``, then ``reserved`` reserved (payout ids 1, 2, …)."""
    wallet_fund(wallet_id=wallet.pk, amount=Decimal(funded), reference=f"SETTLE-{wallet.pk}")
    with transaction.atomic():
        wallet_reserve_each(
            wallet=wallet_lock(wallet_id=wallet.pk),
            reservations=[
                WalletReservation(amount=Decimal(amount), reference=f"po_s_{n}", payout_id=n)
                for n, amount in enumerate(reserved, start=1)
            ],
        )
    wallet.refresh_from_db()
    return wallet


def _settle_each(wallet: Wallet, settlements: list[ReservationSettlement]) -> list[LedgerEntry]:
    with transaction.atomic():
        return wallet_settle_each(wallet_id=wallet.pk, settlements=settlements)


def _settlement(
    wallet: Wallet, kind: ReservationSettlementKind, n: int, amount: str, fee: str = "0.00"
) -> ReservationSettlement:
    return ReservationSettlement(
        kind=kind,
        wallet_id=wallet.pk,
        amount=Decimal(amount),
        fee_amount=Decimal(fee),
        reference=f"po_s_{n}",
        payout_id=n,
    )


def test_captures_and_releases_in_order_with_running_snapshots(test_wallet: Wallet) -> None:
    wallet = _reserved(test_wallet, funded="5000.00", reserved=["1010.00", "520.00", "2025.00"])
    entries = _settle_each(
        wallet,
        [
            _settlement(wallet, CAPTURE, 1, "1000.00", "10.00"),
            _settlement(wallet, RELEASE, 2, "520.00"),
            _settlement(wallet, CAPTURE, 3, "2000.00", "25.00"),
        ],
    )

    stored = list(LedgerEntry.objects.filter(pk__in=[e.pk for e in entries]).order_by("id"))
    assert [(e.entry_type, e.amount, e.fee_amount) for e in stored] == [
        (LedgerEntryType.PAYOUT_DEBIT, Decimal("1000.00"), Decimal("10.00")),
        (LedgerEntryType.PAYOUT_REVERSAL, Decimal("520.00"), Decimal("0.00")),
        (LedgerEntryType.PAYOUT_DEBIT, Decimal("2000.00"), Decimal("25.00")),
    ]
    assert [(e.available_delta, e.reserved_delta) for e in stored] == [
        (Decimal("0.00"), Decimal("-1010.00")),
        (Decimal("520.00"), Decimal("-520.00")),
        (Decimal("0.00"), Decimal("-2025.00")),
    ]
    assert [(e.available_balance_after, e.reserved_balance_after) for e in stored] == [
        (Decimal("1445.00"), Decimal("2545.00")),
        (Decimal("1965.00"), Decimal("2025.00")),
        (Decimal("1965.00"), Decimal("0.00")),
    ]
    wallet.refresh_from_db()
    assert (wallet.available_balance, wallet.reserved_balance) == (
        Decimal("1965.00"),
        Decimal("0.00"),
    )
    totals = wallet_totals(wallet=wallet)
    assert totals.balanced
    assert totals.captured == Decimal("3035.00")


def test_writes_what_wallet_capture_and_wallet_release_write(
    test_wallet: Wallet, live_wallet: Wallet
) -> None:
    one_by_one = _reserved(test_wallet, funded="3000.00", reserved=["1010.00", "300.00"])
    at_once = _reserved(live_wallet, funded="3000.00", reserved=["1010.00", "300.00"])
    wallet_capture(
        wallet_id=one_by_one.pk,
        amount=Decimal("1000.00"),
        fee_amount=Decimal("10.00"),
        reference="po_s_1",
        payout_id=1,
    )
    wallet_release(
        wallet_id=one_by_one.pk, amount=Decimal("300.00"), reference="po_s_2", payout_id=2
    )
    _settle_each(
        at_once,
        [
            _settlement(at_once, CAPTURE, 1, "1000.00", "10.00"),
            _settlement(at_once, RELEASE, 2, "300.00"),
        ],
    )

    def written(wallet: Wallet) -> list[tuple[Any, ...]]:
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
            )
        )

    assert written(one_by_one) == written(at_once)


@pytest.mark.parametrize("count", [1, 40])
def test_one_update_and_one_insert_whatever_the_count(test_wallet: Wallet, count: int) -> None:
    wallet = _reserved(test_wallet, funded="100000.00", reserved=["10.00"] * count)
    settlements = [
        _settlement(wallet, CAPTURE if n % 2 else RELEASE, n, "10.00") for n in range(1, count + 1)
    ]
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        wallet_settle_each(wallet_id=wallet.pk, settlements=settlements)

    statements = [query["sql"].split(" ")[0:2] for query in queries.captured_queries]
    assert statements == [
        ["SELECT", '"wallets_wallet"."id",'],  # the lock
        ["UPDATE", '"wallets_wallet"'],
        ["INSERT", "INTO"],
    ]
    assert '"wallets_ledgerentry"' in queries.captured_queries[2]["sql"]


def test_a_reserved_balance_that_does_not_cover_them_refuses_them_all(
    test_wallet: Wallet,
) -> None:
    wallet = _reserved(test_wallet, funded="1000.00", reserved=["600.00"])
    with pytest.raises(InsufficientReservedBalanceError):
        _settle_each(
            wallet,
            [_settlement(wallet, CAPTURE, 1, "500.00"), _settlement(wallet, RELEASE, 2, "500.00")],
        )
    assert not LedgerEntry.objects.filter(
        entry_type__in=(LedgerEntryType.PAYOUT_DEBIT, LedgerEntryType.PAYOUT_REVERSAL)
    ).exists()
    wallet.refresh_from_db()
    assert wallet.reserved_balance == Decimal("600.00")


def test_a_settlement_of_another_wallet_is_refused(
    test_wallet: Wallet, live_wallet: Wallet
) -> None:
    wallet = _reserved(test_wallet, funded="1000.00", reserved=["100.00"])
    with pytest.raises(ValueError, match="not of wallet"):
        _settle_each(wallet, [_settlement(live_wallet, RELEASE, 1, "100.00")])


def test_a_crossing_of_the_low_balance_threshold_is_signalled_once(test_wallet: Wallet) -> None:
    wallet = _reserved(test_wallet, funded="1000.00", reserved=["100.00", "100.00", "100.00"])
    # Armed above a balance already below it: the next entries make the downward crossing.
    Wallet.objects.filter(pk=wallet.pk).update(
        low_balance_threshold=Decimal("900.00"), low_balance_alerted=False
    )
    received: list[dict[str, Any]] = []

    def receiver(**kwargs: Any) -> None:
        received.append(kwargs)

    wallet_balance_low.connect(receiver, dispatch_uid="test-settle-each")
    try:
        entries = _settle_each(
            wallet, [_settlement(wallet, CAPTURE, n, "100.00") for n in (1, 2, 3)]
        )
    finally:
        wallet_balance_low.disconnect(dispatch_uid="test-settle-each")

    assert len(received) == 1
    assert received[0]["ledger_entry"] == entries[0]
    assert received[0]["available_balance"] == Decimal("700.00")
    wallet.refresh_from_db()
    assert wallet.low_balance_alerted is True


def test_needs_the_callers_transaction(test_wallet: Wallet) -> None:
    with pytest.raises(RuntimeError):
        wallet_settle_each(
            wallet_id=test_wallet.pk, settlements=[_settlement(test_wallet, RELEASE, 1, "1.00")]
        )


def test_wallets_settle_locks_every_wallet_in_one_statement_in_ascending_id(
    test_wallet: Wallet, live_wallet: Wallet
) -> None:
    first, second = sorted([test_wallet, live_wallet], key=lambda wallet: wallet.pk)
    _reserved(first, funded="1000.00", reserved=["100.00", "100.00"])
    _reserved(second, funded="1000.00", reserved=["100.00"])
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        wallet_reservations_settle(
            settlements=[
                _settlement(second, CAPTURE, 1, "100.00"),
                _settlement(first, RELEASE, 1, "100.00"),
                _settlement(first, CAPTURE, 2, "100.00"),
            ]
        )

    statements = [q["sql"] for q in queries.captured_queries]
    assert len(statements) == 3
    assert re.search(
        rf'"id" IN \({first.pk}, {second.pk}\)|"id" IN \({second.pk}, {first.pk}\)', statements[0]
    ), statements[0]
    assert 'ORDER BY "wallets_wallet"."id" ASC' in statements[0]
    assert statements[0].endswith(" FOR UPDATE")
    for wallet in (first, second):
        wallet.refresh_from_db()
        assert wallet.reserved_balance == Decimal("0.00")
        assert wallet_totals(wallet=wallet).balanced
