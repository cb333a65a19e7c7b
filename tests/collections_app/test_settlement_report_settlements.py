"""The collections settlement report's settlements and refunds (``with_settlements``): what was
settled into each merchant's wallet and refunded per Lagos day, and its agreement to the kobo
with the wallet statement's settlements and refunds movements."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest

from collections_app.reports import SettlementRow, collection_settlement_report
from core.dates import local_day_start, local_today
from merchants.models import Merchant, Mode
from merchants.services import merchant_create
from refunds.models import RefundStatus
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import client_for
from tests.settlements.factories_api import (
    RefundRowFactory,
    SettlementFactory,
    refund_with_wallet_debit,
    settled_with_ledger_entry,
)
from wallets.models import Wallet
from wallets.selectors import wallet_get
from wallets.statements import wallet_statement

pytestmark = pytest.mark.django_db

DAY = date(2026, 3, 10)
NEXT_DAY = DAY + timedelta(days=1)
REPORT_URL = "/admin/collections_app/collectiontransaction/settlement-report/"


def at(day: date, hour: int, minute: int = 0):
    return local_day_start(day) + timedelta(hours=hour, minutes=minute)


@pytest.fixture
def ade() -> Merchant:
    return merchant_create(name="Ade Stores", email="ade@example.com").merchant


@pytest.fixture
def live_wallet(ade: Merchant) -> Wallet:
    return wallet_get(merchant=ade, mode=Mode.LIVE)


@pytest.fixture
def scene(ade: Merchant, live_wallet: Wallet) -> None:
    """Ade, live: two settlements on DAY (one at 00:30 Lagos, 23:30 UTC the day before), one on
    NEXT_DAY; refunds on both days (from the wallet, from the next settlement, and one that
    failed after its wallet debit); a test-mode settlement on DAY in rows of its own."""
    settled_with_ledger_entry(wallet=live_wallet, settled_at=at(DAY, 0, 30))  # net 7000.00
    settled_with_ledger_entry(
        wallet=live_wallet,
        settled_at=at(DAY, 15),
        gross=Decimal("14410.00"),
        fees=Decimal("410.00"),
        subaccount_shares=Decimal("1500.00"),
        refunds_deducted=Decimal("2000.00"),
    )  # net 10500.00
    settled_with_ledger_entry(
        wallet=live_wallet,
        settled_at=at(NEXT_DAY, 9),
        gross=Decimal("1015.00"),
        fees=Decimal("15.00"),
    )  # net 1000.00
    # DAY: 1500.00 from the wallet (processed); 2000.00 from the next settlement (pending).
    refund_with_wallet_debit(
        wallet=live_wallet, at=at(DAY, 16), debited_from_wallet=Decimal("1500.00")
    )
    refund_with_wallet_debit(
        wallet=live_wallet,
        at=at(DAY, 17),
        deducted_from_settlement=Decimal("2000.00"),
        debited_from_wallet=Decimal("0.00"),
        status=RefundStatus.PENDING,
    )
    # NEXT_DAY: 300.00 from the wallet, then failed: counted as taken from the wallet that day.
    refund_with_wallet_debit(
        wallet=live_wallet,
        at=at(NEXT_DAY, 10),
        debited_from_wallet=Decimal("300.00"),
        status=RefundStatus.FAILED,
    )
    settled_with_ledger_entry(
        wallet=wallet_get(merchant=ade, mode=Mode.TEST), settled_at=at(DAY, 11)
    )


def _row(rows: tuple[SettlementRow, ...], day: date, mode: str) -> SettlementRow:
    (row,) = [row for row in rows if (row.day, row.mode) == (day, mode)]
    return row


def test_each_day_has_its_settled_nets_and_refunds(scene: None) -> None:
    report = collection_settlement_report(first_day=DAY, last_day=NEXT_DAY, with_settlements=True)
    day = _row(report.rows, DAY, Mode.LIVE)
    assert (day.transaction_count, day.gross) == (0, Decimal("0.00"))  # no paid collection
    assert (day.settlement_count, day.settled) == (2, Decimal("17500.00"))
    assert (day.refund_count, day.refunds, day.refunds_from_wallet) == (
        2,
        Decimal("3500.00"),
        Decimal("1500.00"),
    )
    next_day = _row(report.rows, NEXT_DAY, Mode.LIVE)
    assert (next_day.settlement_count, next_day.settled) == (1, Decimal("1000.00"))
    assert (next_day.refund_count, next_day.refunds, next_day.refunds_from_wallet) == (
        0,
        Decimal("0.00"),
        Decimal("300.00"),
    )
    test_day = _row(report.rows, DAY, Mode.TEST)
    assert (test_day.settlement_count, test_day.settled) == (1, Decimal("7000.00"))
    assert report.totals.settled == Decimal("25500.00")
    assert [(row.day, row.mode) for row in report.rows] == [
        (DAY, Mode.LIVE),
        (DAY, Mode.TEST),
        (NEXT_DAY, Mode.LIVE),
    ]


def test_the_report_agrees_with_the_wallet_statement_to_the_kobo(
    scene: None, live_wallet: Wallet
) -> None:
    report = collection_settlement_report(
        first_day=DAY, last_day=NEXT_DAY, mode=Mode.LIVE, with_settlements=True
    )
    statement = wallet_statement(wallet=live_wallet, first_day=DAY, last_day=NEXT_DAY)
    for statement_day in statement.days:
        row = _row(report.rows, statement_day.date, Mode.LIVE)
        assert statement_day.totals.settlements.amount == row.settled
        assert statement_day.totals.refunds.amount == row.refunds_from_wallet
        assert (row.statement_settlements, row.statement_refunds) == (
            row.settled,
            row.refunds_from_wallet,
        )
        assert row.agrees_with_statement
    assert statement.totals.settlements.amount == report.totals.settled == Decimal("18500.00")
    assert statement.totals.refunds.amount == report.totals.refunds_from_wallet
    assert report.totals.refunds_from_wallet == Decimal("1800.00")
    assert report.totals.agrees_with_statement


def test_a_settlement_without_its_ledger_entry_is_shown_to_disagree(
    ade: Merchant, live_wallet: Wallet
) -> None:
    settled_with_ledger_entry(wallet=live_wallet, settled_at=at(DAY, 9))
    SettlementFactory(merchant=ade, mode=Mode.LIVE, settled_at=at(DAY, 10))  # no wallet credit
    report = collection_settlement_report(
        first_day=DAY, last_day=DAY, mode=Mode.LIVE, with_settlements=True
    )
    (row,) = report.rows
    assert (row.settled, row.statement_settlements) == (Decimal("14000.00"), Decimal("7000.00"))
    assert not row.agrees_with_statement
    assert not report.totals.agrees_with_statement


def test_a_refund_of_another_merchant_stays_in_its_own_row(ade: Merchant) -> None:
    RefundRowFactory(mode=Mode.LIVE)
    report = collection_settlement_report(
        first_day=local_today() - timedelta(days=1),
        last_day=local_today() + timedelta(days=1),
        merchant_id=ade.pk,
        with_settlements=True,
    )
    assert report.rows == ()


def test_without_settlements_the_report_keeps_its_two_queries(
    scene: None, django_assert_num_queries
) -> None:
    with django_assert_num_queries(2):
        plain = collection_settlement_report(first_day=DAY, last_day=NEXT_DAY)
    assert plain.rows == ()
    with django_assert_num_queries(3):
        collection_settlement_report(first_day=DAY, last_day=NEXT_DAY, with_settlements=True)


def test_the_page_shows_the_settled_figures_and_the_agreement(scene: None) -> None:
    client = client_for(StaffUserFactory(roles=["finance_viewer"]))
    response = client.get(
        REPORT_URL,
        {"first_day": DAY.isoformat(), "last_day": NEXT_DAY.isoformat(), "mode": "live"},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "₦17,500.00" in page
    assert "Wallet statement: settlements" in page
    assert page.count('data-testid="settlement-agrees">yes') == 2
