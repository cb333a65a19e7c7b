"""The finance dashboard: figures per Lagos day and status, today beside the chosen day, the
14-day series and its SVG chart, the oldest waiting payouts, the exceptions to work, and every
link on the page listing exactly the payouts it counts."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from core.dates import local_day_start, local_now, local_today
from merchants.models import Mode
from merchants.services import MerchantCreated
from payouts.models import Payout, PayoutStatus
from reconciliation.dashboard import SERIES_DAYS, age_text, finance_dashboard
from reconciliation.dashboard_chart import daily_series_svg
from reconciliation.dashboard_views import payout_list_url
from reconciliation.models import MatchCategory
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import assert_admin_forbidden, client_for
from tests.payouts.factories import PayoutFactory
from tests.reconciliation.factories import ReconciliationItemFactory
from wallets.models import Wallet
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db

DASHBOARD = "/admin/reconciliation/reconciliationrun/dashboard/"
PAYOUT_CHANGELIST = "/admin/payouts/payout/"
SVG = "{http://www.w3.org/2000/svg}"


# --- Factories and helpers -------------------------------------------------------------------


def payout_at(
    wallet: Wallet,
    status: str,
    created_at: datetime,
    amount: str = "1000.00",
    fee: str = "10.00",
    **fields: object,
) -> Payout:
    payout = PayoutFactory(
        wallet=wallet, status=status, amount=Decimal(amount), fee_amount=Decimal(fee)
    )
    Payout.objects.filter(pk=payout.pk).update(created_at=created_at, **fields)
    payout.refresh_from_db()
    return payout


def at(day: date, hours: int = 0, minutes: int = 0) -> datetime:
    """An instant on the Lagos ``day`` (aware)."""
    return local_day_start(day) + timedelta(hours=hours, minutes=minutes)


class LinkParser(HTMLParser):
    """Every ``<a>`` of a page (those inside the inline SVG too): its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.append({name: value or "" for name, value in attrs})


def dashboard_markup(response) -> str:
    """The dashboard's own content, without the admin's header, navigation and footer."""
    page = response.content.decode()
    start = page.index('data-testid="finance-dashboard"')
    return page[start : page.index("<footer", start)]


def page_links(response) -> list[dict[str, str]]:
    parser = LinkParser()
    parser.feed(dashboard_markup(response))
    return parser.links


def payout_list_links(response) -> list[dict[str, str]]:
    """The links to the payout list (not to one payout's change page)."""
    return [
        link for link in page_links(response) if link["href"].startswith(f"{PAYOUT_CHANGELIST}?")
    ]


def chart_of(response) -> ET.Element:
    page = dashboard_markup(response)
    start = page.index('<svg xmlns="http://www.w3.org/2000/svg" class="dash-chart"')
    end = page.index("</svg>", start) + len("</svg>")
    return ET.fromstring(page[start:end])  # noqa: S314 - our own markup


def listed(client: Client, url: str) -> tuple[int, set[int]]:
    """Follow a payout list link: (the result count, the primary keys on the page)."""
    response = client.get(url)
    assert response.status_code == 200, url
    changelist = response.context["cl"]
    return changelist.result_count, {payout.pk for payout in changelist.result_list}


# --- Fixtures --------------------------------------------------------------------------------


@pytest.fixture
def live_wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.LIVE)


@pytest.fixture
def test_wallet(merchant_account: MerchantCreated) -> Wallet:
    return wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)


@pytest.fixture
def viewer() -> User:
    return StaffUserFactory(roles=["finance_viewer"])


@pytest.fixture
def viewer_client(viewer: User) -> Client:
    return client_for(viewer)


@pytest.fixture
def day() -> date:
    """The chosen day: three Lagos days ago, so today is another column."""
    return local_today() - timedelta(days=3)


@pytest.fixture
def spread(live_wallet: Wallet, test_wallet: Wallet, day: date) -> dict[str, Payout]:
    """Live payouts on ``day`` in every status, around its Lagos edges, today, earlier in the
    14 days, and test-mode payouts the live figures must leave out."""
    today = local_today()
    return {
        "ok1": payout_at(live_wallet, PayoutStatus.SUCCESSFUL, at(day, 0, 30), "1000.00", "10.00"),
        "ok2": payout_at(live_wallet, PayoutStatus.SUCCESSFUL, at(day, 9), "2500.50", "25.00"),
        "ok3": payout_at(live_wallet, PayoutStatus.SUCCESSFUL, at(day, 23, 59), "300.00", "5.00"),
        "failed": payout_at(live_wallet, PayoutStatus.FAILED, at(day, 12), "700.00", "10.00"),
        "reserved": payout_at(live_wallet, PayoutStatus.RESERVED, at(day, 13), "50.00", "1.00"),
        "processing": payout_at(live_wallet, PayoutStatus.PROCESSING, at(day, 14)),
        "ambiguous": payout_at(
            live_wallet, PayoutStatus.AMBIGUOUS, at(day, 15), ambiguous_since=at(day, 16)
        ),
        "day_before_late": payout_at(
            live_wallet, PayoutStatus.SUCCESSFUL, at(day, -1), "9999.00", "99.00"
        ),
        "day_after_midnight": payout_at(
            live_wallet, PayoutStatus.FAILED, at(day + timedelta(days=1)), "8888.00"
        ),
        "week_before": payout_at(
            live_wallet, PayoutStatus.SUCCESSFUL, at(day - timedelta(days=7), 10), "123.45"
        ),
        "today": payout_at(live_wallet, PayoutStatus.SUCCESSFUL, at(today), "4000.00", "40.00"),
        "today_failed": payout_at(live_wallet, PayoutStatus.FAILED, at(today)),
        "test_mode": payout_at(test_wallet, PayoutStatus.SUCCESSFUL, at(day, 10), "777.00"),
        "test_failed": payout_at(test_wallet, PayoutStatus.FAILED, at(day, 11)),
    }


# --- Selectors ------------------------------------------------------------------------------


def test_day_figures_by_status_and_success_rate(spread, day) -> None:
    board = finance_dashboard(day=day, mode=Mode.LIVE)
    figures = {row.status: (row.count, row.amount, row.fees) for row in board.chosen.by_status}
    assert figures == {
        PayoutStatus.RESERVED: (1, Decimal("50.00"), Decimal("1.00")),
        PayoutStatus.PROCESSING: (1, Decimal("1000.00"), Decimal("10.00")),
        PayoutStatus.DISPATCHED: (0, Decimal("0.00"), Decimal("0.00")),
        PayoutStatus.AMBIGUOUS: (1, Decimal("1000.00"), Decimal("10.00")),
        PayoutStatus.SUCCESSFUL: (3, Decimal("3800.50"), Decimal("40.00")),
        PayoutStatus.FAILED: (1, Decimal("700.00"), Decimal("10.00")),
    }
    assert (board.chosen.count, board.chosen.amount, board.chosen.fees) == (
        7,
        Decimal("6550.50"),
        Decimal("71.00"),
    )
    assert board.chosen.success_rate == Decimal("75.0")
    assert all(isinstance(row.amount, Decimal) for row in board.chosen.by_status)


def test_success_rate_is_none_when_no_payout_is_final(live_wallet, day) -> None:
    payout_at(live_wallet, PayoutStatus.RESERVED, at(day, 10))
    board = finance_dashboard(day=day, mode=Mode.LIVE)
    assert board.chosen.count == 1
    assert board.chosen.success_rate is None


def test_payout_at_half_past_midnight_lagos_counts_on_its_lagos_day(live_wallet, day) -> None:
    payout = payout_at(live_wallet, PayoutStatus.SUCCESSFUL, at(day, 0, 30))
    assert payout.created_at.astimezone(UTC).date() == day - timedelta(days=1)
    board = finance_dashboard(day=day, mode=Mode.LIVE)
    assert board.chosen.status_count(PayoutStatus.SUCCESSFUL) == 1
    assert [point.successful_count for point in board.series[-2:]] == [0, 1]


def test_modes_are_counted_apart(spread, day) -> None:
    live = finance_dashboard(day=day, mode=Mode.LIVE)
    test = finance_dashboard(day=day, mode=Mode.TEST)
    assert live.chosen.status_count(PayoutStatus.SUCCESSFUL) == 3
    assert (test.chosen.count, test.chosen.amount) == (2, Decimal("1777.00"))
    assert test.chosen.success_rate == Decimal("50.0")
    assert test.today_figures.count == 0


def test_today_is_counted_beside_another_chosen_day(spread, day) -> None:
    board = finance_dashboard(day=day, mode=Mode.LIVE)
    assert not board.is_today
    assert board.today_figures.day == local_today()
    assert (board.today_figures.count, board.today_figures.amount) == (2, Decimal("5000.00"))
    assert board.today_figures.success_rate == Decimal("50.0")
    assert board.chosen.count == 7


def test_series_has_fourteen_days_ending_at_the_chosen_day_zeros_filled(spread, day) -> None:
    series = finance_dashboard(day=day, mode=Mode.LIVE).series
    assert len(series) == SERIES_DAYS == 14
    assert [point.day for point in series] == [day - timedelta(days=n) for n in range(13, -1, -1)]
    by_day = {
        point.day: (
            point.successful_count,
            point.successful_amount,
            point.failed_count,
            point.pending_count,
        )
        for point in series
    }
    assert by_day[day] == (3, Decimal("3800.50"), 1, 3)
    assert by_day[day - timedelta(days=1)] == (1, Decimal("9999.00"), 0, 0)
    assert by_day[day - timedelta(days=7)] == (1, Decimal("123.45"), 0, 0)
    zero_days = set(by_day) - {day, day - timedelta(days=1), day - timedelta(days=7)}
    assert len(zero_days) == 11
    assert all(by_day[each] == (0, Decimal("0.00"), 0, 0) for each in zero_days)


def test_oldest_pending_and_ambiguous_oldest_first_with_their_age(live_wallet) -> None:
    now = local_now()
    old = payout_at(
        live_wallet, PayoutStatus.DISPATCHED, now - timedelta(days=2, hours=4, minutes=30)
    )
    recent = payout_at(
        live_wallet, PayoutStatus.RESERVED, now - timedelta(hours=3, minutes=12, seconds=30)
    )
    payout_at(live_wallet, PayoutStatus.SUCCESSFUL, now - timedelta(days=5))
    long_ambiguous = payout_at(
        live_wallet,
        PayoutStatus.AMBIGUOUS,
        now - timedelta(hours=2),
        ambiguous_since=now - timedelta(hours=1, minutes=5, seconds=30),
    )
    short_ambiguous = payout_at(
        live_wallet,
        PayoutStatus.AMBIGUOUS,
        now - timedelta(days=3),
        ambiguous_since=now - timedelta(minutes=7, seconds=30),
    )
    board = finance_dashboard(day=local_today(), mode=Mode.LIVE)
    assert [(item.payout.pk, item.age_text) for item in board.oldest_pending] == [
        (old.pk, "2 d 4 h"),
        (recent.pk, "3 h 12 min"),
    ]
    assert [(item.payout.pk, item.age_text) for item in board.oldest_ambiguous] == [
        (long_ambiguous.pk, "1 h 5 min"),
        (short_ambiguous.pk, "7 min"),
    ]
    assert (board.pending_total, board.ambiguous_total) == (2, 2)


def test_oldest_lists_stop_at_ten(live_wallet) -> None:
    for hours in range(12):
        payout_at(live_wallet, PayoutStatus.PROCESSING, local_now() - timedelta(hours=hours + 1))
    board = finance_dashboard(day=local_today(), mode=Mode.LIVE)
    assert len(board.oldest_pending) == 10
    assert board.pending_total == 12
    assert board.oldest_pending[0].age_text == "12 h 0 min"


@pytest.mark.parametrize(
    ("age", "text"),
    [
        (timedelta(seconds=-5), "0 min"),
        (timedelta(seconds=59), "0 min"),
        (timedelta(minutes=42), "42 min"),
        (timedelta(hours=3, minutes=12, seconds=59), "3 h 12 min"),
        (timedelta(hours=23, minutes=59), "23 h 59 min"),
        (timedelta(days=2, hours=4, minutes=59), "2 d 4 h"),
        (timedelta(days=31), "31 d 0 h"),
    ],
)
def test_age_text(age: timedelta, text: str) -> None:
    assert age_text(age) == text


def test_exceptions_are_counted_by_state(live_wallet) -> None:
    ReconciliationItemFactory.create_batch(2)
    ReconciliationItemFactory(category=MatchCategory.MATCHED)
    assert finance_dashboard(day=local_today(), mode=Mode.LIVE).exceptions == {
        "open": 2,
        "proposed": 0,
    }


# --- The page -------------------------------------------------------------------------------


def test_page_shows_both_days_and_the_zone(viewer_client, spread, day) -> None:
    response = viewer_client.get(DASHBOARD, {"day": day.isoformat()})
    assert response.status_code == 200
    page = response.content.decode()
    assert f"Today, {local_today().isoformat()}" in page
    assert f">{day.isoformat()}</th>" in page
    assert "Africa/Lagos (UTC+01:00)" in page
    assert "75.0%" in page
    assert "₦3,800.50" in page
    assert 'class="money"' in page


def test_page_defaults_to_today_in_live_mode(viewer_client, spread) -> None:
    response = viewer_client.get(DASHBOARD)
    assert response.status_code == 200
    board = response.context["board"]
    assert (board.day, board.mode, board.is_today) == (local_today(), Mode.LIVE, True)
    assert response.context["day_table"]["headings"] == [
        f"Yesterday, {(local_today() - timedelta(days=1)).isoformat()}",
        f"Today, {local_today().isoformat()}",
    ]
    page = dashboard_markup(response)
    assert '<option value="live" selected>' in page
    assert f'value="{local_today().isoformat()}"' in page


@pytest.mark.slow
def test_every_payout_list_link_lists_exactly_the_counted_payouts(
    viewer_client, spread, day
) -> None:
    response = viewer_client.get(DASHBOARD, {"day": day.isoformat()})
    links = {link["href"]: link for link in payout_list_links(response)}
    assert len(links) > 14 * 3
    assert all("data-count" in link for link in links.values())
    for href, link in links.items():
        count, _pks = listed(viewer_client, href)
        assert count == int(link["data-count"]), href


def test_day_status_links_list_those_very_payouts(viewer_client, spread, day) -> None:
    response = viewer_client.get(DASHBOARD, {"day": day.isoformat()})
    hrefs = {link["href"] for link in payout_list_links(response)}
    successful = payout_list_url(mode=Mode.LIVE, day=day, statuses=(PayoutStatus.SUCCESSFUL,))
    whole_day = payout_list_url(mode=Mode.LIVE, day=day)
    assert {successful, whole_day} <= hrefs
    assert listed(viewer_client, successful)[1] == {
        spread[name].pk for name in ("ok1", "ok2", "ok3")
    }
    assert listed(viewer_client, whole_day)[1] == {
        spread[name].pk
        for name in ("ok1", "ok2", "ok3", "failed", "reserved", "processing", "ambiguous")
    }


def test_chart_is_xml_with_fourteen_bars_linking_to_each_days_list(
    viewer_client, spread, day
) -> None:
    response = viewer_client.get(DASHBOARD, {"day": day.isoformat()})
    svg = chart_of(response)
    assert svg.tag == f"{SVG}svg"
    bars = [a for a in svg.iter(f"{SVG}a") if a.get("class") == "dash-bar-link"]
    assert len(bars) == 14
    days = [day - timedelta(days=n) for n in range(13, -1, -1)]
    assert [bar.get("href") for bar in bars] == [
        payout_list_url(mode=Mode.LIVE, day=each, statuses=(PayoutStatus.SUCCESSFUL,))
        for each in days
    ]
    assert [bar.get("data-count") for bar in bars][-8:] == ["1", "0", "0", "0", "0", "0", "1", "3"]
    assert all(bar.find(f"{SVG}title") is not None for bar in bars)
    assert all(bar.find(f"{SVG}rect[@class='dash-bar']") is not None for bar in bars)
    tallest = bars[-2].find(f"{SVG}rect[@class='dash-bar']")
    assert tallest.get("height") == "160"
    failed = [a for a in svg.iter(f"{SVG}a") if a.get("class") == "dash-failed-link"]
    assert [a.get("href") for a in failed] == [
        payout_list_url(mode=Mode.LIVE, day=day, statuses=(PayoutStatus.FAILED,))
    ]
    day_labels = [a for a in svg.iter(f"{SVG}a") if a.get("class") == "dash-day-link"]
    assert [a.get("href") for a in day_labels] == [
        payout_list_url(mode=Mode.LIVE, day=each) for each in days
    ]
    texts = [text.text for text in day_labels[-1].iter(f"{SVG}text")]
    assert texts == [f"{day:%a}", f"{day.day} {day:%b}"]


def test_chart_escapes_every_text(day) -> None:
    from reconciliation.dashboard import SeriesPoint

    points = [SeriesPoint(day, 1, Decimal("10.00"), 2, 0)]
    svg = daily_series_svg(
        points,
        day_url=lambda each, statuses: '/x?a=1&b="2"<script>',
        zone="<b>Lagos & co</b>",
    )
    root = ET.fromstring(str(svg))  # noqa: S314 - our own markup
    assert "<script>" not in str(svg)
    assert root.find(f"{SVG}title").text.endswith("marks failed payouts")
    assert "<b>Lagos & co</b>" in root.find(f"{SVG}title").text
    assert {a.get("href") for a in root.iter(f"{SVG}a")} == {'/x?a=1&b="2"<script>'}


def test_day_payout_links_use_the_lagos_day_bounds(day) -> None:
    query = parse_qs(urlsplit(payout_list_url(mode=Mode.TEST, day=day, statuses=("failed",))).query)
    assert query == {
        "status__exact": ["failed"],
        "mode__exact": ["test"],
        "created_at__gte": [f"{day.isoformat()} 00:00:00+01:00"],
        "created_at__lt": [f"{(day + timedelta(days=1)).isoformat()} 00:00:00+01:00"],
    }


def test_test_mode_page_counts_only_test_payouts(viewer_client, spread, day) -> None:
    response = viewer_client.get(DASHBOARD, {"day": day.isoformat(), "mode": "test"})
    assert response.status_code == 200
    assert response.context["board"].chosen.count == 2
    for link in payout_list_links(response):
        assert parse_qs(urlsplit(link["href"]).query)["mode__exact"] == ["test"]


def test_oldest_payouts_link_to_their_change_page(viewer_client, live_wallet) -> None:
    payout = payout_at(
        live_wallet,
        PayoutStatus.PROCESSING,
        local_now() - timedelta(hours=3, minutes=12, seconds=30),
    )
    response = viewer_client.get(DASHBOARD)
    hrefs = {link["href"] for link in page_links(response)}
    assert f"{PAYOUT_CHANGELIST}{payout.pk}/change/" in hrefs
    assert "3 h 12 min" in response.content.decode()
    assert viewer_client.get(f"{PAYOUT_CHANGELIST}{payout.pk}/change/").status_code == 200


def test_exception_figures_of_the_mode_link_to_the_items_by_state(live_wallet) -> None:
    ReconciliationItemFactory.create_batch(3)
    ReconciliationItemFactory(run__mode="test")
    client = client_for(User.objects.create_superuser("lead", "lead@example.com", "pw-lead-123"))
    response = client.get(DASHBOARD, {"mode": "live"})
    hrefs = {link["href"] for link in page_links(response)}
    items = "/admin/reconciliation/reconciliationitem/"
    open_url = f"{items}?state=open&amp;run__mode__exact=live"
    assert {
        f"{items}?state=open&run__mode__exact=live",
        f"{items}?state=proposed&run__mode__exact=live",
    } <= hrefs
    table = response.content.decode().split('data-testid="dashboard-exceptions"')[1]
    assert f'<a href="{open_url}">3</a>' in table
    listed = client.get(f"{items}?state=open&run__mode__exact=live")
    assert listed.status_code == 200
    assert len(listed.context["cl"].result_list) == 3


@pytest.mark.parametrize(
    "bad_day", ["not-a-date", "2026-13-45", "2026-02-30", "20261123", "0001-01-01", "9999-12-31"]
)
def test_bad_day_falls_back_to_today_with_an_error(viewer_client, bad_day: str) -> None:
    response = viewer_client.get(DASHBOARD, {"day": bad_day})
    assert response.status_code == 200
    assert response.context["board"].day == local_today()
    page = response.content.decode()
    assert 'data-testid="dashboard-day-error"' in page
    assert f"Showing today, {local_today().isoformat()}, instead." in page


def test_future_day_falls_back_to_today(viewer_client) -> None:
    tomorrow = local_today() + timedelta(days=1)
    response = viewer_client.get(DASHBOARD, {"day": tomorrow.isoformat(), "mode": "test"})
    assert response.status_code == 200
    assert (response.context["board"].day, response.context["board"].mode) == (
        local_today(),
        Mode.TEST,
    )
    assert "has not happened yet" in response.content.decode()


def test_bad_mode_falls_back_to_the_mode_with_data(viewer_client, live_wallet, day) -> None:
    payout_at(live_wallet, PayoutStatus.SUCCESSFUL, at(day, 10))
    response = viewer_client.get(DASHBOARD, {"day": day.isoformat(), "mode": "prod"})
    assert response.status_code == 200
    assert (response.context["board"].day, response.context["board"].mode) == (day, Mode.LIVE)
    assert 'data-testid="dashboard-mode-error"' in response.content.decode()


def test_staff_without_view_payout_gets_403() -> None:
    response = client_for(StaffUserFactory(roles=["ops"])).get(DASHBOARD)
    assert_admin_forbidden(response)


def test_index_links_to_the_dashboard_for_a_finance_viewer(viewer_client) -> None:
    response = viewer_client.get("/admin/")
    assert response.status_code == 200
    assert f'href="{DASHBOARD}"' in response.content.decode()


def test_index_has_no_dashboard_link_without_view_payout() -> None:
    response = client_for(StaffUserFactory(roles=["ops"])).get("/admin/")
    assert response.status_code == 200
    assert DASHBOARD not in response.content.decode()


def test_page_queries_are_few_and_do_not_grow_with_the_data(
    viewer_client, live_wallet, day, django_assert_max_num_queries
) -> None:
    payout_at(live_wallet, PayoutStatus.SUCCESSFUL, at(day, 10))
    with CaptureQueriesContext(connection) as few:
        viewer_client.get(DASHBOARD, {"day": day.isoformat()})
    for offset in range(14):
        for status in PayoutStatus.values:
            payout_at(live_wallet, status, at(day - timedelta(days=offset), offset))
    ReconciliationItemFactory.create_batch(3)
    # session, user, user and group permissions; the mode to open on (none asked for); the
    # day×status figures, the pending totals, the oldest pending, the oldest ambiguous, the
    # oldest held for fraud, the oldest escalated, the provider events in conflict, the
    # unresolved exceptions, the settlements of the day and today
    with django_assert_max_num_queries(14), CaptureQueriesContext(connection) as many:
        response = viewer_client.get(DASHBOARD, {"day": day.isoformat()})
    assert response.status_code == 200
    assert len(many) == len(few)


def test_page_opens_on_yesterday_and_today(viewer_client, live_wallet) -> None:
    yesterday = local_today() - timedelta(days=1)
    payout_at(live_wallet, PayoutStatus.SUCCESSFUL, at(yesterday, 11), "1200.00", "10.00")

    response = viewer_client.get(DASHBOARD)

    board = response.context["board"]
    assert board.yesterday_figures.count == 1
    assert board.today_figures.count == 0
    day_table = dashboard_markup(response)
    assert "₦1,200.00" in day_table


def test_page_opens_on_test_mode_when_there_is_no_live_payout(viewer_client, test_wallet) -> None:
    payout_at(test_wallet, PayoutStatus.SUCCESSFUL, at(local_today(), 9), "500.00", "10.00")

    response = viewer_client.get(DASHBOARD)

    assert response.context["board"].mode == Mode.TEST
    assert response.context["board"].today_figures.count == 1
    banner = response.content.decode().split('data-testid="dashboard-mode-banner"')[1][:200]
    assert "TEST MODE" in banner


def test_page_opens_on_live_mode_once_there_is_a_live_payout(
    viewer_client, live_wallet, test_wallet
) -> None:
    payout_at(test_wallet, PayoutStatus.SUCCESSFUL, at(local_today(), 9), "500.00", "10.00")
    payout_at(live_wallet, PayoutStatus.FAILED, at(local_today(), 9), "700.00", "10.00")

    response = viewer_client.get(DASHBOARD)

    assert response.context["board"].mode == Mode.LIVE
    banner = response.content.decode().split('data-testid="dashboard-mode-banner"')[1][:200]
    assert "LIVE MODE" in banner


def test_payouts_held_for_fraud_and_escalated_have_their_own_sections(
    viewer_client, live_wallet
) -> None:
    now = local_now()
    held = payout_at(
        live_wallet,
        PayoutStatus.AMBIGUOUS,
        now - timedelta(hours=2),
        fraud_flagged_at=now - timedelta(hours=1),
        fraud_nip_code="34",
    )
    escalated = payout_at(
        live_wallet,
        PayoutStatus.DISPATCHED,
        now - timedelta(days=2),
        dispatched_at=now - timedelta(days=2),
        requery_escalated_at=now - timedelta(hours=20),
    )
    payout_at(live_wallet, PayoutStatus.AMBIGUOUS, now - timedelta(hours=1))
    payout_at(  # settled since: no longer escalated
        live_wallet, PayoutStatus.SUCCESSFUL, now - timedelta(days=3), requery_escalated_at=now
    )

    board = finance_dashboard(day=local_today(), mode=Mode.LIVE)
    assert [item.payout.pk for item in board.oldest_held] == [held.pk]
    assert [item.payout.pk for item in board.oldest_escalated] == [escalated.pk]
    assert (board.held_total, board.escalated_total) == (1, 1)

    response = viewer_client.get(DASHBOARD, {"mode": Mode.LIVE})
    page = dashboard_markup(response)
    assert 'data-testid="dashboard-held-for-fraud"' in page
    assert 'data-testid="dashboard-escalated"' in page
    hrefs = {link["href"] for link in page_links(response)}
    for href in (
        payout_list_url(mode=Mode.LIVE, attention="held"),
        payout_list_url(mode=Mode.LIVE, attention="escalated"),
    ):
        assert href in hrefs
        listed = viewer_client.get(href)
        assert listed.status_code == 200
        assert listed.context["cl"].result_count == 1


def test_provider_events_in_conflict_are_counted_for_finance(viewer_client, live_wallet) -> None:
    from payouts.models import ProviderTransferEventRecord

    payout = payout_at(live_wallet, PayoutStatus.FAILED, local_now() - timedelta(hours=1))
    ProviderTransferEventRecord.objects.create(
        provider="paystack",
        event_id="transfer.success:1",
        kind="success",
        reference=payout.internal_reference,
        result="conflict",
        payout=payout,
    )
    board = finance_dashboard(day=local_today(), mode=Mode.LIVE)
    assert board.transfer_event_conflicts == 1
    assert finance_dashboard(day=local_today(), mode=Mode.TEST).transfer_event_conflicts == 0
    response = viewer_client.get(DASHBOARD, {"mode": Mode.LIVE})
    assert "Provider transfer events contradicting a final payout" in dashboard_markup(response)
