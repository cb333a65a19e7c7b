"""The raw provider exchanges kept on a payout never hold the Paystack secret key: the client
sends it only in the ``Authorization`` header, which is never recorded, and redacts it wherever
Paystack echoes it back, so the stored row (read past the ORM) holds no key even when the
answer quotes the header."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
import responses
from django.db import connection

from integrations.paystack.client import REDACTED
from merchants.models import Mode
from payouts.models import Payout, PayoutStatus
from payouts.services import payout_dispatch
from tests.payouts.conftest import PAYSTACK_BASE, PAYSTACK_SECRET

pytestmark = pytest.mark.django_db

RECIPIENT = {"status": True, "message": "ok", "data": {"recipient_code": "RCP_echo_1"}}


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


def _stored_row(payout: Payout) -> str:
    """Every column of the payout's row as the database holds it."""
    table = connection.ops.quote_name(Payout._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table} WHERE id = %s", [payout.pk])  # noqa: S608
        return repr(cursor.fetchone())


def test_a_refusal_quoting_the_authorization_header_is_stored_without_the_key(
    rsps, live_mode, create_payout
) -> None:
    payout = create_payout(mode=Mode.LIVE, amount=Decimal("1500.00")).payout
    rsps.post(
        f"{PAYSTACK_BASE}/transferrecipient",
        json={
            "status": False,
            "message": f"Invalid key: Bearer {PAYSTACK_SECRET}",
            "data": {"request": {"headers": {"Authorization": f"Bearer {PAYSTACK_SECRET}"}}},
        },
        status=400,
    )

    payout = payout_dispatch(payout_id=payout.pk)

    assert payout.status == PayoutStatus.FAILED
    assert rsps.calls[0].request.headers["Authorization"] == f"Bearer {PAYSTACK_SECRET}"
    stored = _stored_row(payout)
    assert PAYSTACK_SECRET not in stored
    assert REDACTED in stored


def test_an_error_page_echoing_the_request_is_stored_without_the_key(
    rsps, live_mode, create_payout
) -> None:
    payout = create_payout(mode=Mode.LIVE, amount=Decimal("1500.00")).payout
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(
        f"{PAYSTACK_BASE}/transfer",
        body=f"<html><pre>POST /transfer\nAuthorization: Bearer {PAYSTACK_SECRET}</pre></html>",
        status=502,
    )

    payout = payout_dispatch(payout_id=payout.pk)

    assert payout.status == PayoutStatus.AMBIGUOUS
    assert [exchange["operation"] for exchange in payout.provider_responses] == [
        "paystack.create_recipient",
        "paystack.initiate_transfer",
    ]
    stored = _stored_row(payout)
    assert PAYSTACK_SECRET not in stored
    assert f"Authorization: Bearer {REDACTED}" in stored
