"""The payout list as a finance clerk reads it: naira amounts with separators, Lagos times with
their offset, filters by Lagos day (created and completed), search by NIP session id, and a CSV
that opens in Excel with the same days and the leading zeros kept."""

from __future__ import annotations

import codecs
import csv
import io
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.test import Client

from payouts.models import Payout, PayoutStatus
from tests.payouts.factories import PayoutFactory
from wallets.models import Wallet

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/payouts/payout/"
# 00:30 in Lagos on 23 November 2026 is 23:30 UTC on the 22nd.
LAGOS_0030 = datetime(2026, 11, 22, 23, 30, tzinfo=UTC)
# 23:30 in Lagos on 22 November 2026 (22:30 UTC): the evening before.
LAGOS_2330_DAY_BEFORE = datetime(2026, 11, 22, 22, 30, tzinfo=UTC)


def at(payout: Payout, **times: datetime) -> Payout:
    """Sets ``created_at``/``completed_at`` (``auto_now_add`` ignores a value given to create)."""
    Payout.objects.filter(pk=payout.pk).update(**times)
    return Payout.objects.get(pk=payout.pk)


def listed(response) -> set[str]:
    page = response.content.decode()
    return {p.internal_reference for p in Payout.objects.all() if p.internal_reference in page}


def export(client: Client, *payouts: Payout) -> list[dict[str, str]]:
    response = client.post(
        CHANGELIST, {"action": "export_csv", "_selected_action": [p.pk for p in payouts]}
    )
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]


@pytest.fixture
def midnight_payout(test_wallet: Wallet) -> Payout:
    """A successful payout made at 00:30 Lagos time and completed at 00:45."""
    payout = PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.SUCCESSFUL,
        amount=Decimal("1234567.89"),
        fee_amount=Decimal("53.75"),
        account_number="0012345678",
        account_name="ADAEZE OKAFOR",
        nip_session_id="000058251123003012345678901234",
        provider_reference="TRF_1q2w3e4r",
    )
    return at(
        payout,
        created_at=LAGOS_0030,
        completed_at=datetime(2026, 11, 22, 23, 45, tzinfo=UTC),
    )


@pytest.fixture
def evening_payout(test_wallet: Wallet) -> Payout:
    """A pending payout made at 23:30 Lagos time the evening before."""
    return at(PayoutFactory(wallet=test_wallet), created_at=LAGOS_2330_DAY_BEFORE)


# --- The list ---------------------------------------------------------------------------------


def test_amounts_are_naira_with_thousands_separators_in_money_cells(
    admin_client: Client, midnight_payout: Payout
) -> None:
    page = admin_client.get(CHANGELIST).content.decode()
    assert '<span class="money">₦1,234,567.89</span>' in page
    assert '<span class="money">₦53.75</span>' in page
    assert "1234567.89" not in page


def test_times_are_lagos_time_with_the_offset(
    admin_client: Client, midnight_payout: Payout
) -> None:
    page = admin_client.get(CHANGELIST).content.decode()
    assert '<time class="when" datetime="2026-11-23T00:30:00+01:00">2026-11-23<br>00:30 +0100' in (
        page
    )
    assert "00:45 +0100" in page  # completed
    assert "23:30" not in page  # never the UTC clock


def test_the_list_shows_the_chosen_columns(admin_client: Client, midnight_payout: Payout) -> None:
    response = admin_client.get(CHANGELIST)
    page = response.content.decode()
    headers = [header["text"] for header in response.context["result_headers"]]
    assert headers[1:] == [  # [0]: the select-all checkbox
        "created",
        "internal reference",
        "merchant",
        "status",
        "amount",
        "fee",
        "beneficiary",
        "completed",
    ]
    assert '<span class="status-badge status-successful">Successful</span>' in page
    assert 'ADAEZE OKAFOR <span class="quiet">· Guaranty Trust Bank · 0012345678</span>' in page


def test_the_list_is_sorted_by_amount(admin_client: Client, test_wallet: Wallet) -> None:
    small = PayoutFactory(wallet=test_wallet, amount=Decimal("500.00"))
    large = PayoutFactory(wallet=test_wallet, amount=Decimal("90000.00"))
    amount_column = 5  # checkbox, created, reference, merchant, status, amount
    page = admin_client.get(CHANGELIST, {"o": f"{amount_column}"}).content.decode()
    assert page.index(small.internal_reference) < page.index(large.internal_reference)
    page = admin_client.get(CHANGELIST, {"o": f"-{amount_column}"}).content.decode()
    assert page.index(large.internal_reference) < page.index(small.internal_reference)


def test_the_list_makes_no_query_per_row(
    admin_client: Client, test_wallet: Wallet, django_assert_max_num_queries
) -> None:
    PayoutFactory(wallet=test_wallet)
    with django_assert_max_num_queries(20) as one_row:
        admin_client.get(CHANGELIST)
    PayoutFactory.create_batch(10, wallet=test_wallet)
    with django_assert_max_num_queries(len(one_row.captured_queries)):
        assert admin_client.get(CHANGELIST).status_code == 200


# --- Filters by Lagos day ---------------------------------------------------------------------


def test_the_range_filter_puts_a_0030_payout_on_its_lagos_day(
    admin_client: Client, midnight_payout: Payout, evening_payout: Payout
) -> None:
    on_the_23rd = admin_client.get(
        CHANGELIST, {"created_at__local_from": "2026-11-23", "created_at__local_to": "2026-11-23"}
    )
    assert listed(on_the_23rd) == {midnight_payout.internal_reference}
    on_the_22nd = admin_client.get(
        CHANGELIST, {"created_at__local_from": "2026-11-22", "created_at__local_to": "2026-11-22"}
    )
    assert listed(on_the_22nd) == {evening_payout.internal_reference}


def test_the_range_filter_takes_open_ends(
    admin_client: Client, midnight_payout: Payout, evening_payout: Payout
) -> None:
    since = admin_client.get(CHANGELIST, {"created_at__local_from": "2026-11-23"})
    assert listed(since) == {midnight_payout.internal_reference}
    until = admin_client.get(CHANGELIST, {"created_at__local_to": "2026-11-22"})
    assert listed(until) == {evening_payout.internal_reference}
    both_days = admin_client.get(
        CHANGELIST, {"created_at__local_from": "2026-11-22", "created_at__local_to": "2026-11-23"}
    )
    assert listed(both_days) == {
        midnight_payout.internal_reference,
        evening_payout.internal_reference,
    }


def test_the_completed_date_filter_works_in_lagos_days(
    admin_client: Client, midnight_payout: Payout, evening_payout: Payout
) -> None:
    completed_23rd = admin_client.get(
        CHANGELIST,
        {"completed_at__local_from": "2026-11-23", "completed_at__local_to": "2026-11-23"},
    )
    assert listed(completed_23rd) == {midnight_payout.internal_reference}
    completed_22nd = admin_client.get(CHANGELIST, {"completed_at__local_to": "2026-11-22"})
    assert listed(completed_22nd) == set()
    not_completed = admin_client.get(CHANGELIST, {"completed_at__isnull": "True"})
    assert listed(not_completed) == {evening_payout.internal_reference}


def test_the_range_filter_keeps_the_other_filters(
    admin_client: Client, midnight_payout: Payout, test_wallet: Wallet
) -> None:
    at(
        PayoutFactory(wallet=test_wallet, status=PayoutStatus.FAILED),
        created_at=LAGOS_0030,
    )
    response = admin_client.get(
        CHANGELIST,
        {
            "status__exact": "successful",
            "created_at__local_from": "2026-11-23",
            "created_at__local_to": "2026-11-23",
        },
    )
    assert listed(response) == {midnight_payout.internal_reference}
    page = response.content.decode()
    # The from/to form shows the range and carries the status filter along.
    assert 'name="created_at__local_from" value="2026-11-23"' in page
    assert '<input type="hidden" name="status__exact" value="successful">' in page
    assert "Days in Africa/Lagos (UTC+01:00), both included" in page


def test_a_malformed_day_is_refused_like_any_bad_filter(
    admin_client: Client, midnight_payout: Payout
) -> None:
    response = admin_client.get(CHANGELIST, {"created_at__local_from": "2026-13-01"})
    assert response.status_code == 302
    assert response["Location"].endswith("?e=1")


def test_djangos_today_links_still_work(admin_client: Client, test_wallet: Wallet) -> None:
    today = PayoutFactory(wallet=test_wallet)
    response = admin_client.get(CHANGELIST)
    today_link = next(
        choice
        for spec in response.context["cl"].filter_specs
        if getattr(spec, "field_path", None) == "created_at"
        for choice in spec.choices(response.context["cl"])
        if choice["display"] == "Today"
    )
    assert listed(admin_client.get(CHANGELIST + today_link["query_string"])) == {
        today.internal_reference
    }


# --- Search -----------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["nip_session_id", "provider_reference"])
def test_search_by_nip_session_id_or_provider_reference(
    admin_client: Client, midnight_payout: Payout, evening_payout: Payout, field: str
) -> None:
    response = admin_client.get(CHANGELIST, {"q": getattr(midnight_payout, field)})
    assert listed(response) == {midnight_payout.internal_reference}
    assert "NIP session id or provider reference (exact)" in response.content.decode()


def test_search_by_nip_session_id_is_exact(admin_client: Client, midnight_payout: Payout) -> None:
    response = admin_client.get(CHANGELIST, {"q": midnight_payout.nip_session_id[:12]})
    assert listed(response) == set()


# --- The change page --------------------------------------------------------------------------


def test_the_change_page_shows_the_nip_session_id_and_naira_amounts(
    admin_client: Client, midnight_payout: Payout
) -> None:
    response = admin_client.get(f"{CHANGELIST}{midnight_payout.pk}/change/")
    page = response.content.decode()
    assert response.status_code == 200
    assert "NIP session id" in page
    assert midnight_payout.nip_session_id in page
    assert '<span class="money">₦1,234,567.89</span>' in page  # amount
    assert '<span class="money">₦53.75</span>' in page  # fee
    assert '<span class="money">₦1,234,621.64</span>' in page  # total debit
    assert "2026-11-23 00:30 +0100" in page


# --- CSV --------------------------------------------------------------------------------------


def test_the_csv_has_a_bom_and_lagos_times_with_their_offset(
    admin_client: Client, midnight_payout: Payout
) -> None:
    response = admin_client.post(
        CHANGELIST, {"action": "export_csv", "_selected_action": [midnight_payout.pk]}
    )
    assert response.content.startswith(codecs.BOM_UTF8)
    (record,) = export(admin_client, midnight_payout)
    assert record["created_at"] == "2026-11-23T00:30:00+01:00"
    assert record["created_at"].startswith("2026-11-23")
    assert record["created_at"].endswith("+01:00")
    assert record["completed_at"] == "2026-11-23T00:45:00+01:00"


def test_the_csv_keeps_numbers_as_text_and_amounts_plain(
    admin_client: Client, midnight_payout: Payout
) -> None:
    (record,) = export(admin_client, midnight_payout)
    assert record["account_number"] == '="0012345678"'
    assert record["bank_code"] == '="058"'
    assert record["nip_session_id"] == '="000058251123003012345678901234"'
    assert record["provider_reference"] == "TRF_1q2w3e4r"  # not only digits: plain text
    assert record["internal_reference"] == midnight_payout.internal_reference
    assert (record["amount"], record["fee_amount"], record["total_debit_amount"]) == (
        "1234567.89",
        "53.75",
        "1234621.64",
    )


def test_the_csv_leaves_missing_values_empty(admin_client: Client, evening_payout: Payout) -> None:
    (record,) = export(admin_client, evening_payout)
    assert (record["nip_session_id"], record["provider_reference"], record["completed_at"]) == (
        "",
        "",
        "",
    )
    assert record["created_at"] == "2026-11-22T23:30:00+01:00"


def test_the_csv_rows_of_a_lagos_day_match_the_filter(
    admin_client: Client, midnight_payout: Payout, evening_payout: Payout
) -> None:
    """Filter by a Lagos day, export what is listed: every row's created_at is that day."""
    response = admin_client.get(
        CHANGELIST, {"created_at__local_from": "2026-11-23", "created_at__local_to": "2026-11-23"}
    )
    shown = list(response.context["cl"].result_list)
    records = export(admin_client, *shown)
    assert [r["internal_reference"] for r in records] == [midnight_payout.internal_reference]
    assert all(r["created_at"].startswith("2026-11-23") for r in records)
