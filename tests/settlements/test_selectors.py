"""Settlement reads (``settlements.selectors``): the list and its filters, one settlement, its
transactions with their shares, and the day figures; generated settlements add up exactly."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.dates import local_day_start
from core.exceptions import NotFoundError
from merchants.models import Mode
from settlements.models import Settlement
from settlements.selectors import (
    SettlementListFilters,
    settlement_day_figures,
    settlement_get,
    settlement_list,
    settlement_transactions,
)
from tests.merchants.factories import MerchantFactory
from tests.payment_items.factories import SubaccountFactory
from tests.settlements.factories_api import SettlementFactory, settled_collection

pytestmark = pytest.mark.django_db

DAY = date(2026, 3, 10)


def at(day: date, hour: int, minute: int = 0):
    return local_day_start(day) + timedelta(hours=hour, minutes=minute)


def test_the_list_is_one_merchants_one_mode_newest_first() -> None:
    merchant = MerchantFactory()
    first = SettlementFactory(merchant=merchant)
    second = SettlementFactory(merchant=merchant)
    SettlementFactory(merchant=merchant, mode=Mode.LIVE)
    SettlementFactory(mode=Mode.TEST)
    assert list(settlement_list(merchant=merchant, mode=Mode.TEST)) == [second, first]


def test_the_settled_range_is_inclusive_at_both_ends() -> None:
    merchant = MerchantFactory()
    start, end = at(DAY, 0), at(DAY, 23, 59)
    inside = [
        SettlementFactory(merchant=merchant, settled_at=start),
        SettlementFactory(merchant=merchant, settled_at=end),
    ]
    SettlementFactory(merchant=merchant, settled_at=start - timedelta(microseconds=1))
    SettlementFactory(merchant=merchant, settled_at=end + timedelta(minutes=1))
    found = settlement_list(
        merchant=merchant,
        mode=Mode.TEST,
        filters=SettlementListFilters(settled_from=start, settled_to=end),
    )
    assert set(found) == set(inside)


def test_get_is_404_for_anything_but_the_merchants_own_in_its_mode() -> None:
    settlement = SettlementFactory()
    assert (
        settlement_get(
            merchant=settlement.merchant, mode=Mode.TEST, settlement_id=settlement.settlement_id
        )
        == settlement
    )
    for merchant, mode, settlement_id in (
        (settlement.merchant, Mode.LIVE, settlement.settlement_id),
        (MerchantFactory(), Mode.TEST, settlement.settlement_id),
        (settlement.merchant, Mode.TEST, ""),
        (settlement.merchant, Mode.TEST, settlement.settlement_id + "0"),
    ):
        with pytest.raises(NotFoundError):
            settlement_get(merchant=merchant, mode=mode, settlement_id=settlement_id)


def test_each_transaction_carries_its_split_shares_total() -> None:
    settlement = SettlementFactory(transaction_count=2)
    chika = SubaccountFactory(merchant=settlement.merchant)
    dayo = SubaccountFactory(merchant=settlement.merchant)
    split = settled_collection(
        settlement=settlement,
        paid_at=at(DAY, 9),
        shares=((chika, Decimal("1000.01")), (dayo, Decimal("0.99"))),
    )
    plain = settled_collection(settlement=settlement, paid_at=at(DAY, 10))
    rows = list(settlement_transactions(settlement=settlement))
    assert [(row.pk, row.subaccount_share_total) for row in rows] == [
        (split.pk, Decimal("1001.00")),
        (plain.pk, Decimal("0.00")),
    ]


def test_day_figures_cover_every_asked_day_and_mode_with_zeros() -> None:
    figures = settlement_day_figures(days=[DAY], modes=[Mode.LIVE, Mode.TEST])
    assert set(figures) == {(DAY, Mode.LIVE), (DAY, Mode.TEST)}
    assert figures[(DAY, Mode.LIVE)].count == 0
    assert figures[(DAY, Mode.LIVE)].net == Decimal("0.00")


kobo = st.integers(min_value=0, max_value=10_000_000).map(lambda k: Decimal(k).scaleb(-2))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    settlements=st.lists(
        st.tuples(
            st.sampled_from([Mode.LIVE, Mode.TEST]),
            st.integers(min_value=-1, max_value=1),  # day offset from DAY
            st.integers(min_value=0, max_value=24 * 60 - 1),  # Lagos minute of the day
            kobo,
            kobo,
            kobo,
            kobo,
        ),
        max_size=8,
    )
)
def test_day_figures_add_up_each_days_settlements_to_the_kobo(settlements) -> None:
    """Against a recount in Python of every settlement stored (earlier examples' included: the
    database is not reset between generated cases)."""
    merchant = MerchantFactory()
    for mode, offset, minute, net, fees, shares, refunds in settlements:
        SettlementFactory(
            merchant=merchant,
            mode=mode,
            settled_at=local_day_start(DAY + timedelta(days=offset)) + timedelta(minutes=minute),
            gross=net + fees + shares + refunds,
            fees=fees,
            subaccount_shares=shares,
            refunds_deducted=refunds,
        )
    days = [DAY + timedelta(days=offset) for offset in (-1, 0, 1)]
    figures = settlement_day_figures(days=days, modes=[Mode.LIVE, Mode.TEST])
    for (day, mode), found in figures.items():
        start, end = local_day_start(day), local_day_start(day + timedelta(days=1))
        on_day = [
            each for each in Settlement.objects.filter(mode=mode) if start <= each.settled_at < end
        ]
        zero = Decimal("0.00")
        assert found.count == len(on_day)
        assert found.transaction_count == sum(each.transaction_count for each in on_day)
        for name in ("gross", "fees", "subaccount_shares", "refunds_deducted", "net"):
            assert getattr(found, name) == sum((getattr(each, name) for each in on_day), zero)
        assert (
            found.net == found.gross - found.fees - found.subaccount_shares - found.refunds_deducted
        )
