"""The finance dashboard's settlements: today's (and a chosen day's) settlements per mode, added
up, each row linking to the settlement list of that day and mode."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest

from core.dates import local_day_bounds, local_day_start, local_today
from merchants.models import Mode
from reconciliation.dashboard import finance_dashboard
from reconciliation.dashboard_views import settlement_list_url
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import client_for
from tests.settlements.factories_api import SettlementFactory

pytestmark = pytest.mark.django_db

DASHBOARD = "/admin/reconciliation/reconciliationrun/dashboard/"


def _today_at(hour: int):
    return local_day_start(local_today()) + timedelta(hours=hour)


def _settlements_table(page: str) -> str:
    return page.split('data-testid="dashboard-settlements"')[1].split("</table>")[0]


def test_todays_settlements_are_added_up_per_mode() -> None:
    today = local_today()
    SettlementFactory(mode=Mode.LIVE, settled_at=_today_at(0), transaction_count=2)
    SettlementFactory(
        mode=Mode.LIVE,
        settled_at=_today_at(0) + timedelta(minutes=30),
        transaction_count=1,
        gross=Decimal("14410.00"),
        fees=Decimal("410.00"),
        subaccount_shares=Decimal("1500.00"),
        refunds_deducted=Decimal("2000.00"),
    )
    SettlementFactory(mode=Mode.TEST, settled_at=_today_at(0))
    SettlementFactory(mode=Mode.LIVE, settled_at=_today_at(0) - timedelta(minutes=1))  # yesterday
    board = finance_dashboard(day=today, mode=Mode.LIVE, with_settlements=True)
    live, test = board.settlements
    assert (live.day, live.mode, live.count, live.transaction_count) == (today, Mode.LIVE, 2, 3)
    assert (live.gross, live.fees, live.subaccount_shares, live.refunds_deducted, live.net) == (
        Decimal("21615.00"),
        Decimal("615.00"),
        Decimal("1500.00"),
        Decimal("2000.00"),
        Decimal("17500.00"),
    )
    assert (test.mode, test.count, test.net) == (Mode.TEST, 1, Decimal("7000.00"))


def test_a_chosen_day_shows_its_settlements_beside_todays() -> None:
    earlier = local_today() - timedelta(days=3)
    SettlementFactory(mode=Mode.LIVE, settled_at=local_day_start(earlier) + timedelta(hours=9))
    board = finance_dashboard(day=earlier, mode=Mode.LIVE, with_settlements=True)
    assert [(figures.day, figures.mode, figures.count) for figures in board.settlements] == [
        (earlier, Mode.LIVE, 1),
        (earlier, Mode.TEST, 0),
        (local_today(), Mode.LIVE, 0),
        (local_today(), Mode.TEST, 0),
    ]


def test_the_page_shows_the_settlements_with_links_to_the_list() -> None:
    SettlementFactory(mode=Mode.LIVE, settled_at=_today_at(1))
    response = client_for(StaffUserFactory(roles=["finance_viewer"])).get(DASHBOARD)
    assert response.status_code == 200
    table = _settlements_table(response.content.decode())
    assert "₦7,205.00" in table and "₦7,000.00" in table
    url = settlement_list_url(mode=Mode.LIVE, day=local_today())
    assert f'href="{url.replace("&", "&amp;")}" data-count="1"' in table
    query = parse_qs(urlsplit(url).query)
    start, end = local_day_bounds(local_today())
    assert query == {
        "mode__exact": ["live"],
        "settled_at__gte": [start.isoformat(sep=" ")],
        "settled_at__lt": [end.isoformat(sep=" ")],
    }
    listed = client_for(StaffUserFactory(roles=["finance_viewer"])).get(url)
    assert listed.status_code == 200
    assert listed.context["cl"].result_count == 1


def test_without_the_settlement_permission_the_section_is_left_out() -> None:
    client = client_for(StaffUserFactory(permissions=["payouts.view_payout"]))
    response = client.get(DASHBOARD)
    assert response.status_code == 200
    assert 'data-testid="dashboard-settlements"' not in response.content.decode()
    assert response.context["board"].settlements == ()
