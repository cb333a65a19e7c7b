"""Returned payouts in the back office: a "Returned" badge beside the status, a list filter,
``returned_at`` and ``return_reason`` in the CSV export and on the change page."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from payouts.models import Payout, PayoutStatus
from tests.payouts.factories import PayoutFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/payouts/payout/"
REASON = "Beneficiary account closed"


@pytest.fixture
def admin_client() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("lead", "lead@example.com", "pw-lead-1"))
    return client


@pytest.fixture
def returned(funded_wallet) -> Payout:
    return PayoutFactory(
        wallet=funded_wallet,
        status=PayoutStatus.SUCCESSFUL,
        completed_at=timezone.now(),
        returned_at=timezone.now(),
        return_reason=REASON,
    )


@pytest.fixture
def paid(funded_wallet) -> Payout:
    return PayoutFactory(
        wallet=funded_wallet, status=PayoutStatus.SUCCESSFUL, completed_at=timezone.now()
    )


def _rows(page: str) -> list[str]:
    return [row for row in page.split("<tr") if "po_20250101_" in row]


def test_the_list_shows_a_returned_badge_only_on_returned_payouts(
    admin_client, returned, paid
) -> None:
    rows = _rows(admin_client.get(CHANGELIST).content.decode())

    returned_row = next(row for row in rows if returned.internal_reference in row)
    paid_row = next(row for row in rows if paid.internal_reference in row)
    assert 'class="status-badge status-returned"' in returned_row
    assert REASON in returned_row
    assert "status-returned" not in paid_row


def test_the_returned_filter(admin_client, returned, paid) -> None:
    yes = admin_client.get(CHANGELIST, {"returned": "yes"}).content.decode()
    no = admin_client.get(CHANGELIST, {"returned": "no"}).content.decode()

    assert returned.internal_reference in yes and paid.internal_reference not in yes
    assert paid.internal_reference in no and returned.internal_reference not in no


def test_the_csv_has_the_return(admin_client, returned, paid) -> None:
    response = admin_client.post(
        CHANGELIST, {"action": "export_csv", "_selected_action": [returned.pk, paid.pk]}
    )

    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    by_reference = {row["internal_reference"]: row for row in rows}
    assert by_reference[returned.internal_reference]["return_reason"] == REASON
    assert by_reference[returned.internal_reference]["returned_at"].startswith(
        timezone.localdate(returned.returned_at).isoformat()
    )
    assert by_reference[paid.internal_reference]["returned_at"] == ""


def test_the_change_page_shows_the_return(admin_client, returned) -> None:
    page = admin_client.get(f"{CHANGELIST}{returned.pk}/change/").content.decode()

    assert "Returned by the bank" in page
    assert REASON in page
