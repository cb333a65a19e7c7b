"""The statement route (JSON and CSV, errors, modes, schema) and its back-office page."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from decimal import Decimal
from unittest import mock

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from core.dates import local_day_start, local_today
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import act_records, assert_admin_forbidden, client_for
from tests.wallets.writers import wallet_capture, wallet_release, wallet_reserve
from wallets.models import Wallet
from wallets.services import (
    wallet_fund,
    wallet_lock,
)
from wallets.statements import STATEMENT_CSV_HEADER

pytestmark = pytest.mark.django_db

STATEMENT_URL = "/api/v1/transactions/in/merchant-wallet/statement"
DAY = date(2026, 3, 10)
NEXT_DAY = DAY + timedelta(days=1)


@contextmanager
def _at(instant: datetime) -> Iterator[None]:
    with mock.patch("django.utils.timezone.now", return_value=instant):
        yield


def _lagos(day: date, hour: int) -> datetime:
    return local_day_start(day) + timedelta(hours=hour)


def _activity(wallet: Wallet, day: date, *, reference: str = "STMT-API") -> None:
    """Fund 1000, pay out 290 + 10 fee, reserve and release 200, all on the Lagos ``day``."""
    with _at(_lagos(day, 8)):
        wallet_fund(wallet_id=wallet.pk, amount=Decimal("1000.00"), reference=f"{reference}-F")
    for hour, amount in ((9, "300.00"), (11, "200.00")):
        with _at(_lagos(day, hour)), transaction.atomic():
            locked = wallet_lock(wallet_id=wallet.pk)
            wallet_reserve(wallet=locked, amount=Decimal(amount), reference=f"{reference}-{hour}")
    with _at(_lagos(day, 10)):
        wallet_capture(
            wallet_id=wallet.pk,
            amount=Decimal("290.00"),
            fee_amount=Decimal("10.00"),
            reference=f"{reference}-9",
        )
    with _at(_lagos(day, 12)):
        wallet_release(wallet_id=wallet.pk, amount=Decimal("200.00"), reference=f"{reference}-11")


def _error(response, status: int) -> str:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert (body["status"], body["data"], body["statusCode"]) == (False, None, status)
    return body["message"]


def _csv_rows(response) -> list[list[str]]:
    text = response.content.decode("utf-8")
    assert text.startswith("\ufeff")
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))


ZERO_BALANCES = {"available": "0.00", "reserved": "0.00", "total": "0.00"}
# Settlements, refunds and their reversals, the platform's subaccount shares: none here.
COLLECTION_MOVEMENTS = {
    "settlements": {"count": 0, "amount": "0.00"},
    "refunds": {"count": 0, "amount": "0.00"},
    "refund_reversals": {"count": 0, "amount": "0.00"},
    "subaccount_shares": {"count": 0, "amount": "0.00"},
}
NO_MOVEMENTS = {
    "fundings": {"count": 0, "amount": "0.00"},
    "payouts_reserved": {"count": 0, "amount": "0.00"},
    "payouts_captured": {"count": 0, "amount": "0.00", "fee_amount": "0.00"},
    "releases": {"count": 0, "amount": "0.00"},
    "returns": {"count": 0, "amount": "0.00", "fee_amount": "0.00"},
    **COLLECTION_MOVEMENTS,
}
DAY_MOVEMENTS = {
    "fundings": {"count": 1, "amount": "1000.00"},
    "payouts_reserved": {"count": 2, "amount": "500.00"},
    "payouts_captured": {"count": 1, "amount": "290.00", "fee_amount": "10.00"},
    "releases": {"count": 1, "amount": "200.00"},
    "returns": {"count": 0, "amount": "0.00", "fee_amount": "0.00"},
    **COLLECTION_MOVEMENTS,
}
DAY_CLOSING = {"available": "700.00", "reserved": "0.00", "total": "700.00"}


# --- JSON --------------------------------------------------------------------------------------


def test_the_statement_in_json_has_balances_and_movements_per_day(test_client, test_wallet) -> None:
    _activity(test_wallet, DAY)
    response = test_client.get(
        STATEMENT_URL, {"from_date": DAY.isoformat(), "to_date": NEXT_DAY.isoformat()}
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["statusCode"]) == (True, 200)
    assert body["message"] == "Statement retrieved successfully"
    assert body["data"] == {
        "wallet_id": test_wallet.pk,
        "mode": "test",
        "currency": "NGN",
        "timezone": "Africa/Lagos",
        "utc_offset": "+01:00",
        "from_date": "2026-03-10",
        "to_date": "2026-03-11",
        "opening": ZERO_BALANCES,
        "closing": DAY_CLOSING,
        "totals": DAY_MOVEMENTS,
        "days": [
            {
                "date": "2026-03-10",
                "opening": ZERO_BALANCES,
                "closing": DAY_CLOSING,
                "totals": DAY_MOVEMENTS,
            },
            {
                "date": "2026-03-11",
                "opening": DAY_CLOSING,
                "closing": DAY_CLOSING,
                "totals": NO_MOVEMENTS,
            },
        ],
    }


def test_to_date_defaults_to_from_date(test_client, test_wallet) -> None:
    _activity(test_wallet, DAY)
    data = test_client.get(STATEMENT_URL, {"from_date": DAY.isoformat()}).json()["data"]
    assert (data["from_date"], data["to_date"]) == ("2026-03-10", "2026-03-10")
    assert [day["date"] for day in data["days"]] == ["2026-03-10"]
    assert data["closing"] == DAY_CLOSING


def test_a_test_key_never_sees_the_live_wallets_movements(
    test_client, live_client, test_wallet, live_wallet
) -> None:
    _activity(live_wallet, DAY, reference="LIVE")
    params = {"from_date": DAY.isoformat()}
    test_data = test_client.get(STATEMENT_URL, params).json()["data"]
    assert (test_data["wallet_id"], test_data["mode"]) == (test_wallet.pk, "test")
    assert test_data["totals"] == NO_MOVEMENTS
    assert test_data["closing"] == ZERO_BALANCES
    live_data = live_client.get(STATEMENT_URL, params).json()["data"]
    assert (live_data["wallet_id"], live_data["mode"]) == (live_wallet.pk, "live")
    assert live_data["totals"] == DAY_MOVEMENTS
    test_csv = test_client.get(STATEMENT_URL, {**params, "format": "csv"})
    assert _csv_rows(test_csv)[-1][STATEMENT_CSV_HEADER.index("fundings_count")] == "0"


# --- CSV ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["accept", "format"])
def test_the_statement_in_csv_has_a_row_per_day_and_a_totals_row(
    test_client, test_wallet, how: str
) -> None:
    _activity(test_wallet, DAY)
    params = {"from_date": DAY.isoformat(), "to_date": (DAY + timedelta(days=2)).isoformat()}
    if how == "accept":
        response = test_client.get(STATEMENT_URL, params, HTTP_ACCEPT="text/csv")
    else:
        response = test_client.get(STATEMENT_URL, {**params, "format": "csv"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == (
        'attachment; filename="statement-test-2026-03-10-2026-03-12.csv"'
    )
    header, *days, totals = _csv_rows(response)
    assert header == list(STATEMENT_CSV_HEADER)
    assert [row[0] for row in days] == ["2026-03-10", "2026-03-11", "2026-03-12"]
    first = dict(zip(header, days[0], strict=True))
    assert first == {
        "date": "2026-03-10",
        "opening_available": "0.00",
        "opening_reserved": "0.00",
        "opening_total": "0.00",
        "fundings_count": "1",
        "fundings_amount": "1000.00",
        "payouts_reserved_count": "2",
        "payouts_reserved_amount": "500.00",
        "payouts_captured_count": "1",
        "payouts_captured_amount": "290.00",
        "payouts_captured_fee_amount": "10.00",
        "releases_count": "1",
        "releases_amount": "200.00",
        "returns_count": "0",
        "returns_amount": "0.00",
        "returns_fee_amount": "0.00",
        "settlements_count": "0",
        "settlements_amount": "0.00",
        "refunds_count": "0",
        "refunds_amount": "0.00",
        "refund_reversals_count": "0",
        "refund_reversals_amount": "0.00",
        "subaccount_shares_count": "0",
        "subaccount_shares_amount": "0.00",
        "closing_available": "700.00",
        "closing_reserved": "0.00",
        "closing_total": "700.00",
    }
    assert totals[0] == "total"
    # One day with movements: the range's totals are that day's.
    assert dict(zip(header[1:], totals[1:], strict=True)) == {
        name: value for name, value in first.items() if name != "date"
    }


# --- Errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field_name"),
    [
        ({}, "from_date"),
        ({"from_date": "2026-3-10"}, "from_date"),
        ({"from_date": "2026-02-30"}, "from_date"),
        ({"from_date": "yesterday"}, "from_date"),
        ({"from_date": "２０２６-03-10"}, "from_date"),
        ({"from_date": "2026-03-10", "to_date": "2026-03-10T00:00:00"}, "to_date"),
        ({"from_date": "2026-03-10", "to_date": "2026-03-09"}, "to_date"),
        ({"from_date": "2026-01-01", "to_date": "2026-04-03"}, "to_date"),  # 93 days
        ({"from_date": "2026-03-10", "format": "xml"}, "format"),
    ],
)
@pytest.mark.parametrize("accept", ["application/json", "text/csv"])
def test_bad_parameters_are_a_400_in_the_envelope_naming_the_field(
    test_client, params: dict[str, str], field_name: str, accept: str
) -> None:
    response = test_client.get(STATEMENT_URL, params, HTTP_ACCEPT=accept)
    assert _error(response, 400).startswith(f"{field_name}: ")


@pytest.mark.parametrize("param", ["from_date", "to_date"])
def test_a_day_after_today_is_a_400_naming_the_field(test_client, param: str) -> None:
    today = local_today()
    tomorrow = (today + timedelta(days=1)).isoformat()
    params = {"from_date": today.isoformat(), param: tomorrow}
    if param == "from_date":
        params["to_date"] = tomorrow
    message = _error(test_client.get(STATEMENT_URL, {**params, "format": "csv"}), 400)
    assert message.startswith(f"{param}: must not be after today")


def test_ninety_two_days_are_allowed(test_client) -> None:
    response = test_client.get(STATEMENT_URL, {"from_date": "2026-01-01", "to_date": "2026-04-02"})
    assert response.status_code == 200
    assert len(response.json()["data"]["days"]) == 92


@pytest.mark.parametrize("to_date", ["2026-01-01", "2026-04-02"])
def test_one_day_or_ninety_two_take_the_same_four_queries(
    test_client, test_wallet, to_date: str, django_assert_num_queries
) -> None:
    _activity(test_wallet, DAY)
    with django_assert_num_queries(4):  # the key, the wallet, the opening, the day aggregates
        response = test_client.get(STATEMENT_URL, {"from_date": "2026-01-01", "to_date": to_date})
    assert response.status_code == 200


@pytest.mark.parametrize("accept", ["application/json", "text/csv"])
def test_a_request_without_a_key_is_a_401_in_the_envelope(merchant_account, accept: str) -> None:
    response = APIClient().get(STATEMENT_URL, {"from_date": "2026-03-10"}, HTTP_ACCEPT=accept)
    assert _error(response, 401) == "Unauthorized: invalid or missing secret key"


def test_the_route_is_in_the_openapi_schema_with_json_and_csv(api_client) -> None:
    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/v1/transactions/in/merchant-wallet/statement"]["get"]
    assert operation["operationId"] == "merchant_wallet_statement_retrieve"
    assert set(operation["responses"]["200"]["content"]) == {"application/json", "text/csv"}
    parameters = {parameter["name"]: parameter for parameter in operation["parameters"]}
    assert {"from_date", "to_date", "format"} <= set(parameters)
    assert parameters["from_date"]["required"] is True
    assert {"400", "401", "404"} <= set(operation["responses"])


# --- Back office -------------------------------------------------------------------------------


def _statement_page(wallet: Wallet) -> str:
    return f"/admin/wallets/wallet/{wallet.pk}/statement/"


def test_a_finance_viewer_sees_yesterdays_statement_by_default(test_wallet) -> None:
    yesterday = local_today() - timedelta(days=1)
    _activity(test_wallet, yesterday)
    client = client_for(StaffUserFactory(roles=["finance_viewer"]))
    response = client.get(_statement_page(test_wallet))
    assert response.status_code == 200
    assert "admin/wallets/wallet/statement.html" in [t.name for t in response.templates]
    page = response.content.decode()
    assert "Africa/Lagos (UTC+01:00)" in page
    assert yesterday.isoformat() in page
    assert '<span class="money">₦1,000.00</span>' in page
    assert '<span class="money">₦700.00</span>' in page
    assert "Download CSV" in page
    assert response.context["statement"].first_day == yesterday


def test_the_statement_page_shows_the_chosen_days_and_refuses_a_bad_range(test_wallet) -> None:
    _activity(test_wallet, DAY)
    client = client_for(
        StaffUserFactory(permissions=["wallets.view_wallet", "wallets.view_ledgerentry"])
    )
    page = client.get(
        _statement_page(test_wallet), {"from_date": "2026-03-09", "to_date": "2026-03-11"}
    )
    assert page.status_code == 200
    assert [row["label"] for row in page.context["rows"]] == [
        "2026-03-09",
        "2026-03-10",
        "2026-03-11",
        "Total",
    ]
    refused = client.get(
        _statement_page(test_wallet), {"from_date": "2026-03-10", "to_date": "2026-03-09"}
    )
    assert refused.status_code == 200
    assert refused.context["statement"] is None
    assert refused.context["form"].errors == {"to_date": ["must not be earlier than from_date"]}


def test_the_wallet_page_links_to_its_statement(test_wallet) -> None:
    client = client_for(StaffUserFactory(roles=["finance_viewer"]))
    page = client.get(f"/admin/wallets/wallet/{test_wallet.pk}/change/").content.decode()
    assert f'href="{_statement_page(test_wallet)}"' in page


def test_the_csv_download_is_the_apis_csv_and_is_audited(test_client, test_wallet) -> None:
    _activity(test_wallet, DAY)
    viewer = StaffUserFactory(roles=["finance_viewer"])
    response = client_for(viewer).post(
        _statement_page(test_wallet), {"from_date": "2026-03-10", "to_date": "2026-03-11"}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    api = test_client.get(
        STATEMENT_URL, {"from_date": "2026-03-10", "to_date": "2026-03-11", "format": "csv"}
    )
    assert response.content == api.content
    assert response["Content-Disposition"] == api["Content-Disposition"]
    [record] = act_records()
    assert record.action == "wallets.wallet.statement_export"
    assert record.actor == viewer
    assert record.object_id == str(test_wallet.pk)
    assert record.after == {
        "mode": "test",
        "from_date": "2026-03-10",
        "to_date": "2026-03-11",
        "days": 2,
    }


def test_staff_without_the_wallet_permission_get_403(test_wallet) -> None:
    client = client_for(StaffUserFactory(permissions=["payouts.view_payout"]))
    assert_admin_forbidden(client.get(_statement_page(test_wallet)))
    response = client.post(_statement_page(test_wallet), {"from_date": "2026-03-10"})
    assert_admin_forbidden(response)
    assert not act_records().exists()
