"""Live payouts through Flutterwave (HTTP mocked with ``responses``): the whole lifecycle by
dispatch, requery and the ``transfer.completed`` webhook at ``POST /api/v1/webhooks/flutterwave``
(``verif-hash`` compared with ``FLUTTERWAVE_WEBHOOK_HASH``; applied only as Flutterwave's read by
reference confirms it), with Flutterwave seeing exactly one transfer per payout and the secret
never stored.

Shapes from https://developer.flutterwave.com/reference/endpoints/transfers/ and
https://developer.flutterwave.com/docs/integration-guides/webhooks (transfer.completed,
verif-hash).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import requests
import responses
from django.db import connection
from responses import matchers

from merchants.models import Mode
from payouts.models import Payout, PayoutStatus, ProviderTransferEventRecord
from payouts.services import payout_dispatch, payout_requery
from tests.payouts.helpers import assert_wallet_balanced, reload
from wallets.models import LedgerEntry, Wallet

pytestmark = pytest.mark.django_db

BASE = "https://api.flutterwave.test/v3"
SECRET = "FLWSECK_TEST-9f8e7d6c5b4a39281706f5e4d3c2b1a0-X"
WEBHOOK_HASH = "flw-dashboard-secret-hash-1"
TRANSFERS_URL = f"{BASE}/transfers"
WEBHOOK_URL = "/api/v1/webhooks/flutterwave"


def transfer_object(reference: str, status: str, message: str = "") -> dict[str, Any]:
    return {
        "id": 4975363,
        "account_number": "0123456789",
        "bank_code": "058",
        "full_name": "SALAMI NGOZI UCHE",
        "currency": "NGN",
        "debit_currency": "NGN",
        "amount": 2000,
        "fee": 26.875,
        "status": status,
        "reference": reference,
        "meta": None,
        "narration": "Invoice 42",
        "complete_message": message,
        "requires_approval": 0,
        "is_approved": 1,
        "bank_name": "GUARANTY TRUST BANK",
    }


def created(reference: str, status: str = "NEW") -> dict[str, Any]:
    return {
        "status": "success",
        "message": "Transfer Queued Successfully",
        "data": transfer_object(reference, status),
    }


def listed(*transfers: dict[str, Any]) -> dict[str, Any]:
    return {"status": "success", "message": "Transfers fetched", "data": list(transfers)}


def webhook_body(reference: str, status: str) -> bytes:
    return json.dumps(
        {
            "event": "transfer.completed",
            "event.type": "Transfer",
            "data": transfer_object(reference, status, "Successful"),
        }
    ).encode()


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def flutterwave_live(settings: Any, live_mode: Wallet) -> Wallet:
    """Live payouts carried by Flutterwave (name enquiry through the sandbox)."""
    settings.PAYOUT_PROVIDER_BY_MODE = {**settings.PAYOUT_PROVIDER_BY_MODE, "live": "flutterwave"}
    settings.FLUTTERWAVE_BASE_URL = BASE
    settings.FLUTTERWAVE_SECRET_KEY = SECRET
    settings.FLUTTERWAVE_WEBHOOK_HASH = WEBHOOK_HASH
    return live_mode


@pytest.fixture
def live_payout(flutterwave_live: Wallet, create_payout) -> Payout:
    payout = create_payout(mode=Mode.LIVE, amount=Decimal("2000.00")).payout
    assert payout.provider_name == "flutterwave"
    return payout


@pytest.fixture
def dispatched(rsps, live_payout: Payout) -> Payout:
    rsps.post(TRANSFERS_URL, json=created(live_payout.internal_reference, "NEW"))
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.DISPATCHED
    return payout


def add_verify(rsps: responses.RequestsMock, reference: str, body: dict[str, Any]) -> None:
    rsps.get(
        TRANSFERS_URL, json=body, match=[matchers.query_param_matcher({"reference": reference})]
    )


def transfer_posts(rsps: responses.RequestsMock) -> int:
    return sum(
        1
        for call in rsps.calls
        if call.request.method == "POST" and call.request.url == TRANSFERS_URL
    )


def post_webhook(api_client, body: bytes, verif_hash: str | None = WEBHOOK_HASH):  # type: ignore[no-untyped-def]
    headers = {} if verif_hash is None else {"HTTP_VERIF_HASH": verif_hash}
    return api_client.generic(
        "POST", WEBHOOK_URL, data=body, content_type="application/json", **headers
    )


def test_success_on_dispatch(rsps, flutterwave_live, live_payout) -> None:
    rsps.post(TRANSFERS_URL, json=created(live_payout.internal_reference, "SUCCESSFUL"))
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.provider_reference == "4975363"
    assert [answer["operation"] for answer in payout.provider_responses] == [
        "flutterwave.initiate_transfer"
    ]
    assert json.loads(rsps.calls[0].request.body)["amount"] == 2000
    assert_wallet_balanced(flutterwave_live)


def test_read_timeout_is_ambiguous_and_a_requery_settles_it(
    rsps, flutterwave_live, live_payout
) -> None:
    reference = live_payout.internal_reference
    rsps.post(TRANSFERS_URL, body=requests.ReadTimeout("read timed out"))
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.AMBIGUOUS
    add_verify(rsps, reference, listed(transfer_object(reference, "FAILED", "Insufficient funds")))
    payout = payout_requery(payout=reload(payout))
    assert payout.status == PayoutStatus.FAILED
    assert transfer_posts(rsps) == 1
    assert_wallet_balanced(flutterwave_live)


def test_a_duplicate_reference_settles_from_flutterwaves_record(
    rsps, flutterwave_live, live_payout
) -> None:
    reference = live_payout.internal_reference
    rsps.post(
        TRANSFERS_URL,
        json={"status": "error", "message": "DUPLICATE_REFERENCE", "data": None},
        status=400,
    )
    add_verify(rsps, reference, listed(transfer_object(reference, "SUCCESSFUL")))
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert transfer_posts(rsps) == 1
    assert_wallet_balanced(flutterwave_live)


def test_webhook_with_the_right_hash_settles_the_payout(
    rsps, api_client, flutterwave_live, dispatched
) -> None:
    reference = dispatched.internal_reference
    add_verify(rsps, reference, listed(transfer_object(reference, "SUCCESSFUL", "Successful")))
    response = post_webhook(api_client, webhook_body(reference, "SUCCESSFUL"))
    assert response.status_code == 200
    assert response.json()["message"] == "Transfer event applied"
    assert response.json()["data"] == {"reference": reference, "status": "successful"}
    payout = reload(dispatched)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.provider_responses[-1]["operation"] == "flutterwave.webhook.transfer.success"
    assert transfer_posts(rsps) == 1
    assert_wallet_balanced(flutterwave_live)


def test_webhook_not_confirmed_by_the_read_applies_nothing(rsps, api_client, dispatched) -> None:
    reference = dispatched.internal_reference
    add_verify(rsps, reference, listed(transfer_object(reference, "PENDING")))
    response = post_webhook(api_client, webhook_body(reference, "FAILED"))
    assert response.status_code == 200
    assert response.json()["message"] == "Event noted: not confirmed by Flutterwave yet"
    assert response.json()["data"]["status"] == "dispatched"
    assert reload(dispatched).status == PayoutStatus.DISPATCHED
    assert ProviderTransferEventRecord.objects.count() == 0


def test_webhook_whose_read_fails_applies_nothing(rsps, api_client, dispatched) -> None:
    reference = dispatched.internal_reference
    rsps.get(TRANSFERS_URL, body=requests.ReadTimeout())
    response = post_webhook(api_client, webhook_body(reference, "FAILED"))
    assert response.status_code == 200
    assert reload(dispatched).status == PayoutStatus.DISPATCHED


def test_a_forged_failure_the_read_contradicts_never_releases_the_money(
    rsps, api_client, flutterwave_live, dispatched
) -> None:
    reference = dispatched.internal_reference
    add_verify(rsps, reference, listed(transfer_object(reference, "SUCCESSFUL")))
    response = post_webhook(api_client, webhook_body(reference, "FAILED"))
    assert response.status_code == 200
    assert reload(dispatched).status == PayoutStatus.SUCCESSFUL
    assert_wallet_balanced(flutterwave_live)


def test_a_redelivered_webhook_is_a_duplicate_and_moves_nothing(
    rsps, api_client, flutterwave_live, dispatched
) -> None:
    reference = dispatched.internal_reference
    add_verify(rsps, reference, listed(transfer_object(reference, "SUCCESSFUL")))
    post_webhook(api_client, webhook_body(reference, "SUCCESSFUL"))
    entries = LedgerEntry.objects.count()
    response = post_webhook(api_client, webhook_body(reference, "SUCCESSFUL"))
    assert response.status_code == 200
    assert response.json()["message"] == "Transfer event duplicate"
    assert response.json()["data"]["status"] == "successful"
    assert LedgerEntry.objects.count() == entries
    assert ProviderTransferEventRecord.objects.count() == 1
    assert_wallet_balanced(flutterwave_live)


def test_an_amount_that_differs_from_the_payout_is_a_conflict(rsps, api_client, dispatched) -> None:
    reference = dispatched.internal_reference
    add_verify(rsps, reference, listed(transfer_object(reference, "SUCCESSFUL")))
    body = json.loads(webhook_body(reference, "SUCCESSFUL"))
    body["data"]["amount"] = 20000
    response = post_webhook(api_client, json.dumps(body).encode())
    assert response.status_code == 200
    assert response.json()["message"] == "Transfer event conflict"
    assert reload(dispatched).status == PayoutStatus.DISPATCHED


def test_a_status_that_is_not_final_is_ignored(rsps, api_client, dispatched) -> None:
    response = post_webhook(api_client, webhook_body(dispatched.internal_reference, "PENDING"))
    assert response.status_code == 200
    assert response.json()["message"] == "Event ignored"
    assert len(rsps.calls) == 1  # the dispatch only


@pytest.mark.parametrize("verif_hash", [None, "", "wrong-hash", WEBHOOK_HASH + "x"])
def test_webhook_with_a_bad_or_missing_hash_is_a_401_and_changes_nothing(
    rsps, api_client, dispatched, verif_hash: str | None
) -> None:
    calls = len(rsps.calls)
    response = post_webhook(
        api_client, webhook_body(dispatched.internal_reference, "SUCCESSFUL"), verif_hash
    )
    assert response.status_code == 401
    body = response.json()
    assert body["status"] is False
    assert body["data"] is None
    assert body["message"] == "Invalid or missing provider signature"
    assert reload(dispatched).status == PayoutStatus.DISPATCHED
    assert len(rsps.calls) == calls


def test_no_configured_hash_refuses_every_webhook(rsps, api_client, dispatched, settings) -> None:
    settings.FLUTTERWAVE_WEBHOOK_HASH = ""
    response = post_webhook(api_client, webhook_body(dispatched.internal_reference, "FAILED"), "")
    assert response.status_code == 401


@pytest.mark.parametrize("raw", [b"{not json", b"[]", b'{"data": {}}'])
def test_an_unreadable_body_is_a_400(rsps, api_client, dispatched, raw: bytes) -> None:
    response = post_webhook(api_client, raw)
    assert response.status_code == 400
    assert response.json()["status"] is False
    assert reload(dispatched).status == PayoutStatus.DISPATCHED


def test_other_events_and_unknown_references_are_acknowledged(
    rsps, api_client, flutterwave_live
) -> None:
    other = json.dumps({"event": "charge.completed", "data": {"id": 1}}).encode()
    assert post_webhook(api_client, other).json()["message"] == "Event ignored"
    unknown = post_webhook(api_client, webhook_body("po_not_ours", "SUCCESSFUL"))
    assert unknown.status_code == 200
    assert unknown.json()["data"] is None
    assert unknown.json()["message"] == "Transfer event unknown_reference"
    assert ProviderTransferEventRecord.objects.get().reference == "po_not_ours"
    assert len(rsps.calls) == 0


def test_a_paystack_payout_is_not_moved_by_a_flutterwave_webhook(
    rsps, api_client, flutterwave_live, create_payout, settings
) -> None:
    settings.PAYOUT_PROVIDER_BY_MODE = {**settings.PAYOUT_PROVIDER_BY_MODE, "live": "paystack"}
    payout = create_payout(mode=Mode.LIVE, amount=Decimal("100.00")).payout
    response = post_webhook(api_client, webhook_body(payout.internal_reference, "SUCCESSFUL"))
    assert response.status_code == 200
    assert response.json()["data"] is None
    assert reload(payout).status == PayoutStatus.RESERVED
    assert len(rsps.calls) == 0


def test_the_stored_exchange_never_holds_the_secret(rsps, flutterwave_live, live_payout) -> None:
    rsps.post(
        TRANSFERS_URL,
        json={"status": "error", "message": f"Invalid key Bearer {SECRET}", "data": None},
        status=400,
    )
    add_verify(rsps, live_payout.internal_reference, listed())
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.FAILED
    assert rsps.calls[0].request.headers["Authorization"] == f"Bearer {SECRET}"
    table = connection.ops.quote_name(Payout._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table} WHERE id = %s", [payout.pk])  # noqa: S608
        stored = repr(cursor.fetchone())
    assert SECRET not in stored
    assert "[redacted]" in stored


def test_a_confirmed_failure_after_success_is_a_return_once(
    rsps, api_client, flutterwave_live, dispatched
) -> None:
    reference = dispatched.internal_reference
    add_verify(rsps, reference, listed(transfer_object(reference, "SUCCESSFUL")))
    post_webhook(api_client, webhook_body(reference, "SUCCESSFUL"))
    rsps.replace(
        responses.GET,
        TRANSFERS_URL,
        json=listed(transfer_object(reference, "FAILED", "Reversed by the beneficiary bank")),
        match=[matchers.query_param_matcher({"reference": reference})],
    )
    first = post_webhook(api_client, webhook_body(reference, "FAILED"))
    again = post_webhook(api_client, webhook_body(reference, "FAILED"))
    assert first.json()["message"] == "Transfer event applied"
    assert again.json()["message"] == "Transfer event duplicate"
    payout = reload(dispatched)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.returned_at is not None
    assert_wallet_balanced(flutterwave_live)
