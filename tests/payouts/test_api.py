"""Payout routes, to the letter of the interface specification (docs/spec.md): bodies, status
codes, messages."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from core.api import pagination
from core.money import AMOUNT_RULE
from merchants.models import Mode
from merchants.services import merchant_create, secret_key_rotate
from payouts import tasks as payout_tasks
from payouts.api.serializers import PayoutCreateOutputSerializer
from payouts.models import Payout, PayoutStatus
from payouts.services import PayoutCreateResult, payout_dispatch
from tests.payouts.factories import PayoutFactory
from tests.payouts.helpers import (
    PAYOUTS_URL,
    assert_wallet_balanced,
    detail_url,
    fund_wallet,
    reload,
    requery_url,
)
from wallets.models import LedgerEntry, LedgerEntryType, WalletStatus
from wallets.providers.sandbox import sandbox_account_name
from wallets.selectors import bank_get_by_code, wallet_get
from wallets.services import wallet_status_set

pytestmark = pytest.mark.django_db

ALL_STATUSES = "reserved, processing, dispatched, ambiguous, successful, failed"

UNAUTHORIZED = {
    "status": False,
    "message": "Unauthorized: invalid or missing secret key",
    "data": None,
    "statusCode": 401,
}
PAYOUT_KEYS = {
    "id",
    "internal_reference",
    "beneficiary",
    "currency",
    "amount",
    "fee_amount",
    "total_debit_amount",
    "status",
    "narration",
    "error_message",
    "created_at",
    "completed_at",
    "updated_at",
    # Extensions beside the fields of "2.1 Payout" in docs/spec.md: the NIP session id once the
    # provider reports it, and a return by the beneficiary's bank after success.
    "nip_session_id",
    "returned_at",
    "return_reason",
    # The merchant's own idempotency_key, echoed so a payout ties back to the merchant's record.
    "idempotency_key",
    # The merchant's controls: a second key's approval, and a scheduled time.
    "approval",
    "scheduled_for",
}


def error(response: Any, status_code: int, message: str) -> None:
    assert response.status_code == status_code, response.content
    assert response.json() == {
        "status": False,
        "message": message,
        "data": None,
        "statusCode": status_code,
    }


def post_create(client: APIClient, body: dict[str, Any]) -> Any:
    # json.dumps escapes non-ASCII, so even lone surrogates reach the server as JSON does.
    return client.post(PAYOUTS_URL, json.dumps(body), content_type="application/json")


# --- Create ------------------------------------------------------------------------------------


def test_create_answers_202_with_the_payout(test_client, funded_wallet, payload) -> None:
    body_sent = payload(amount="2500.50")
    response = post_create(test_client, body_sent)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] is True
    assert body["statusCode"] == 202
    assert body["message"] == "Payout accepted for processing"
    assert body["data"]["duplicate"] is False
    payout = body["data"]["payout"]
    assert set(payout) == PAYOUT_KEYS
    assert payout["status"] == "reserved"
    assert payout["amount"] == "2500.50"
    assert payout["fee_amount"] == "10.00"
    assert payout["total_debit_amount"] == "2510.50"
    assert payout["currency"] == "NGN"
    assert payout["beneficiary"] == {
        "account_number": "0123456789",
        "account_name": sandbox_account_name("0123456789"),
        "bank_code": "058",
        "bank_name": "Guaranty Trust Bank",
    }
    assert payout["narration"] == "Invoice 42"
    assert payout["error_message"] is None
    assert payout["completed_at"] is None
    assert payout["internal_reference"].startswith("po_")
    assert payout["idempotency_key"] == body_sent["idempotency_key"]
    funded_wallet.refresh_from_db()
    assert funded_wallet.available_balance == Decimal("97489.50")
    assert funded_wallet.reserved_balance == Decimal("2510.50")
    assert_wallet_balanced(funded_wallet)


def test_create_answers_what_its_output_serializer_writes_in_the_same_order(
    test_client, funded_wallet, payload
) -> None:
    response = post_create(test_client, payload())
    assert response.status_code == 202
    data = json.loads(response.content)["data"]
    payout = Payout.objects.get(pk=data["payout"]["id"])
    expected = PayoutCreateOutputSerializer(PayoutCreateResult(payout=payout, duplicate=False)).data
    assert json.dumps(data) == json.dumps(expected)


def test_create_without_a_wallet_of_the_keys_mode_is_404(
    test_client, merchant_account, payload
) -> None:
    wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST).delete()
    error(post_create(test_client, payload()), 404, "Merchant wallet not found")
    assert not Payout.objects.exists()


def test_create_wakes_the_batch_dispatcher_on_commit(
    test_client, funded_wallet, payload, django_capture_on_commit_callbacks, monkeypatch
) -> None:
    published: list[dict[str, Any]] = []
    monkeypatch.setattr(
        payout_tasks.payouts_dispatch_round_task,
        "apply_async",
        lambda *args, **options: published.append(options),
    )
    with django_capture_on_commit_callbacks() as callbacks:
        post_create(test_client, payload())
    assert callbacks == [payout_tasks.payout_dispatch_wake]
    assert published == []  # nothing before the commit
    callbacks[0]()
    assert len(published) == 1
    assert published[0]["countdown"] == pytest.approx(
        payout_tasks.dispatch_wake_interval() + payout_tasks.WAKE_START_MARGIN_SECONDS
    )


def test_create_answers_202_when_the_broker_is_down(
    test_client, funded_wallet, payload, django_capture_on_commit_callbacks, monkeypatch
) -> None:
    def unreachable(*args: Any, **options: Any) -> None:
        raise OSError("broker unreachable")

    monkeypatch.setattr(payout_tasks.payouts_dispatch_round_task, "apply_async", unreachable)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_create(test_client, payload())
    assert response.status_code == 202
    assert Payout.objects.get().status == PayoutStatus.RESERVED


def test_optional_fields_may_be_left_out(test_client, funded_wallet, payload) -> None:
    response = post_create(test_client, payload(narration=..., currency=...))
    assert response.status_code == 202
    assert response.json()["data"]["payout"]["narration"] is None


def test_matching_bank_id_and_explicit_ngn(test_client, funded_wallet, payload) -> None:
    bank_id = bank_get_by_code(bank_code="058").pk
    response = post_create(test_client, payload(bank_id=bank_id, currency="NGN"))
    assert response.status_code == 202


def test_replay_answers_duplicate_with_the_original(test_client, funded_wallet, payload) -> None:
    body = payload(idempotency_key="inv-42")
    first = post_create(test_client, body).json()["data"]["payout"]
    replay = post_create(test_client, {**body, "amount": "1000"})
    assert replay.status_code == 202
    assert replay.json()["message"] == "Payout request already accepted"
    assert replay.json()["data"]["duplicate"] is True
    assert replay.json()["data"]["payout"]["id"] == first["id"]
    assert replay.json()["data"]["payout"]["internal_reference"] == first["internal_reference"]
    assert Payout.objects.count() == 1
    assert LedgerEntry.objects.filter(entry_type=LedgerEntryType.PAYOUT_RESERVE).count() == 1
    assert_wallet_balanced(funded_wallet)


def test_replay_after_completion_shows_current_status(test_client, funded_wallet, payload) -> None:
    body = payload(idempotency_key="inv-43")
    payout_id = post_create(test_client, body).json()["data"]["payout"]["id"]
    payout_dispatch(payout_id=payout_id)
    replay = post_create(test_client, body).json()["data"]
    assert replay["duplicate"] is True
    assert replay["payout"]["status"] == "successful"


def test_same_key_different_request_is_409(test_client, funded_wallet, payload) -> None:
    body = payload(idempotency_key="inv-44")
    post_create(test_client, body)
    response = post_create(test_client, {**body, "account_number": "0123456780"})
    error(response, 409, "Idempotency key already used for a different payout request")
    assert Payout.objects.count() == 1


def test_insufficient_balance(test_client, test_wallet, payload) -> None:
    fund_wallet(test_wallet, "100.00")
    response = post_create(test_client, payload(amount="95.00"))
    error(response, 400, "insufficient available wallet balance")
    assert not Payout.objects.exists()
    assert_wallet_balanced(test_wallet)


def test_inactive_wallet(test_client, funded_wallet, payload) -> None:
    wallet_status_set(wallet_id=funded_wallet.pk, status=WalletStatus.INACTIVE)
    error(post_create(test_client, payload()), 400, "merchant wallet is not active")


def test_only_ngn(test_client, funded_wallet, payload) -> None:
    error(post_create(test_client, payload(currency="USD")), 400, "Only NGN payouts are supported")


@pytest.mark.parametrize("bank_code", ["000", "9" * 40, ""])
def test_unknown_bank(test_client, funded_wallet, payload, bank_code: str) -> None:
    error(
        post_create(test_client, payload(bank_code=bank_code)),
        400,
        "Beneficiary bank could not be resolved",
    )


def test_bank_id_disagreeing_with_bank_code(test_client, funded_wallet, payload) -> None:
    other = bank_get_by_code(bank_code="044").pk
    error(
        post_create(test_client, payload(bank_id=other)), 400, "bank_id: does not match bank_code"
    )


def test_unresolvable_account_name(test_client, funded_wallet, payload) -> None:
    error(
        post_create(test_client, payload(account_number="0000000000")),
        400,
        "Beneficiary account name could not be resolved",
    )


def test_name_enquiry_unavailable_is_503_with_retry_after(
    test_client, funded_wallet, payload
) -> None:
    response = post_create(test_client, payload(account_number="0000000009"))
    assert response.status_code == 503
    assert response["Retry-After"]
    assert not Payout.objects.exists()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"account_name": "JOHN DOE"}, "account_name: is not an accepted field"),
        ({"account_number": "012345678"}, "account_number: must be exactly 10 digits"),
        ({"account_number": "01234567890"}, "account_number: must be exactly 10 digits"),
        ({"account_number": "01234S6789"}, "account_number: must be exactly 10 digits"),
        ({"account_number": "０１２３４５６７８９"}, "account_number: must be exactly 10 digits"),
        ({"account_number": 123456789}, "account_number: must be a string"),
        ({"account_number": ...}, "account_number: This field is required."),
        ({"bank_code": ...}, "bank_code: This field is required."),
        ({"bank_code": 58}, "bank_code: must be a string"),
        ({"bank_id": 0}, "bank_id: must be a positive integer"),
        ({"bank_id": -3}, "bank_id: must be a positive integer"),
        ({"bank_id": "5"}, "bank_id: must be a positive integer"),
        ({"bank_id": True}, "bank_id: must be a positive integer"),
        ({"bank_id": 1.5}, "bank_id: must be a positive integer"),
        ({"amount": ...}, "amount: This field is required."),
        (
            {"amount": 100},
            f"amount: {AMOUNT_RULE}, given as a JSON string",
        ),
        (
            {"amount": "10.001"},
            f"amount: {AMOUNT_RULE}",
        ),
        (
            {"amount": "0"},
            f"amount: {AMOUNT_RULE} (greater than zero)",
        ),
        (
            {"amount": "-5"},
            f"amount: {AMOUNT_RULE}",
        ),
        (
            {"amount": "1e3"},
            f"amount: {AMOUNT_RULE}",
        ),
        (
            {"amount": "NaN"},
            f"amount: {AMOUNT_RULE}",
        ),
        ({"amount": "1000000000000.01"}, "amount: must not exceed 1000000000000.00"),
        ({"amount": "9999999999999999.99"}, "amount: must not exceed 1000000000000.00"),
        ({"narration": "x" * 256}, "narration: Ensure this field has no more than 255 characters."),
        ({"idempotency_key": ...}, "idempotency_key: This field is required."),
        ({"idempotency_key": ""}, "idempotency_key: This field may not be blank."),
        (
            {"idempotency_key": "k" * 176},
            "idempotency_key: Ensure this field has no more than 175 characters.",
        ),
        ({"idempotency_key": 42}, "idempotency_key: must be a string"),
        ({"currency": 566}, "currency: must be a string"),
        ({"narration": "bad \ud800 text"}, "narration: must be valid Unicode text"),
        ({"idempotency_key": "\ud83d"}, "idempotency_key: must be valid Unicode text"),
        ({"narration": "nul\x00byte"}, "narration: Null characters are not allowed."),
    ],
)
def test_invalid_request_is_400_naming_the_field(
    test_client, funded_wallet, payload, overrides: dict, message: str
) -> None:
    error(post_create(test_client, payload(**overrides)), 400, message)
    assert not Payout.objects.exists()
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")


def test_longest_allowed_values(test_client, funded_wallet, payload) -> None:
    response = post_create(test_client, payload(narration="n" * 255, idempotency_key="k" * 175))
    assert response.status_code == 202


@pytest.mark.parametrize("body", ["[]", '"text"', "{bad json"])
def test_body_must_be_a_json_object(test_client, funded_wallet, body: str) -> None:
    response = test_client.post(PAYOUTS_URL, body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["status"] is False


def test_live_key_uses_the_live_wallet(live_client, funded_wallet, live_mode, payload) -> None:
    response = post_create(live_client, payload())
    assert response.status_code == 202
    payout = Payout.objects.get(pk=response.json()["data"]["payout"]["id"])
    assert payout.mode == Mode.LIVE
    assert payout.wallet_id == live_mode.pk
    assert payout.provider_name == "paystack"
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")


# --- List --------------------------------------------------------------------------------------


@pytest.fixture
def listed(test_wallet) -> list[Payout]:
    """Five payouts with distinct creation times, oldest first."""
    now = timezone.now()
    payouts = []
    for index, (status, account, name) in enumerate(
        [
            (PayoutStatus.SUCCESSFUL, "1111111111", "ADA OKAFOR"),
            (PayoutStatus.FAILED, "2222222222", "BAYO ADEYEMI"),
            (PayoutStatus.AMBIGUOUS, "3333333333", "CHIOMA EZE"),
            (PayoutStatus.RESERVED, "4444444444", "DANJUMA MUSA"),
            (PayoutStatus.SUCCESSFUL, "5555555555", "EMEKA NWOSU"),
        ]
    ):
        payout = PayoutFactory(
            wallet=test_wallet, status=status, account_number=account, account_name=name
        )
        Payout.objects.filter(pk=payout.pk).update(created_at=now - timedelta(days=10 - index * 2))
        payouts.append(reload(payout))
    return payouts


def list_ids(response: Any) -> list[int]:
    return [item["id"] for item in response.json()["data"]["items"]]


def test_list_newest_first_with_exact_shape(test_client, listed, django_assert_num_queries) -> None:
    with django_assert_num_queries(3):  # key lookup, count, page
        response = test_client.get(PAYOUTS_URL)
    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Payouts retrieved successfully"
    assert set(body["data"]) == {"items", "pagination"}
    assert list_ids(response) == [p.pk for p in reversed(listed)]
    assert set(body["data"]["items"][0]) == PAYOUT_KEYS
    assert body["data"]["pagination"] == {
        "page": 1,
        "limit": 50,
        "total": 5,
        "total_pages": 1,
        "has_next_page": False,
        "has_previous_page": False,
    }


def test_list_query_count_does_not_grow_with_the_page(
    test_client, test_wallet, django_assert_num_queries
) -> None:
    PayoutFactory.create_batch(60, wallet=test_wallet)
    with django_assert_num_queries(3):
        response = test_client.get(PAYOUTS_URL, {"limit": 200})
    assert len(response.json()["data"]["items"]) == 60


def test_deep_list_page_reads_keys_then_rows(
    test_client, listed, monkeypatch, django_assert_num_queries
) -> None:
    monkeypatch.setattr(pagination, "DEFERRED_JOIN_MIN_OFFSET", 1)
    with django_assert_num_queries(4):  # key lookup, count, the page's ids, their rows
        response = test_client.get(PAYOUTS_URL, {"page": 2, "limit": 2})
    assert list_ids(response) == [listed[2].pk, listed[1].pk]
    assert set(response.json()["data"]["items"][0]) == PAYOUT_KEYS
    assert response.json()["data"]["pagination"]["total"] == 5
    with django_assert_num_queries(4):
        response = test_client.get(PAYOUTS_URL, {"page": 2, "limit": 1, "status": "successful"})
    assert list_ids(response) == [listed[0].pk]
    assert response.json()["data"]["pagination"]["total"] == 2


def test_list_pages(test_client, listed) -> None:
    response = test_client.get(PAYOUTS_URL, {"page": 2, "limit": 2})
    assert list_ids(response) == [listed[2].pk, listed[1].pk]
    assert response.json()["data"]["pagination"] == {
        "page": 2,
        "limit": 2,
        "total": 5,
        "total_pages": 3,
        "has_next_page": True,
        "has_previous_page": True,
    }


def test_page_beyond_the_end_is_empty(test_client, listed) -> None:
    response = test_client.get(PAYOUTS_URL, {"page": 9, "limit": 2})
    assert response.status_code == 200
    assert list_ids(response) == []
    assert response.json()["data"]["pagination"]["total"] == 5


def test_same_timestamp_ties_break_by_id(test_client, test_wallet) -> None:
    payouts = PayoutFactory.create_batch(3, wallet=test_wallet)
    Payout.objects.update(created_at=timezone.now())
    assert list_ids(test_client.get(PAYOUTS_URL)) == sorted((p.pk for p in payouts), reverse=True)


def test_filter_by_status(test_client, listed) -> None:
    response = test_client.get(PAYOUTS_URL, {"status": "successful"})
    assert list_ids(response) == [listed[4].pk, listed[0].pk]
    assert response.json()["data"]["pagination"]["total"] == 2


def test_filter_by_dates(test_client, listed) -> None:
    start = listed[1].created_at - timedelta(seconds=1)
    end = listed[3].created_at + timedelta(seconds=1)
    response = test_client.get(
        PAYOUTS_URL, {"from_date": start.isoformat(), "to_date": end.isoformat()}
    )
    assert list_ids(response) == [listed[3].pk, listed[2].pk, listed[1].pk]


def test_bare_dates_cover_whole_days(test_client, listed) -> None:
    day = timezone.localtime(listed[2].created_at).date().isoformat()
    response = test_client.get(PAYOUTS_URL, {"from_date": day, "to_date": day})
    assert list_ids(response) == [listed[2].pk]


def test_filters_combine(test_client, listed) -> None:
    start = listed[1].created_at.isoformat()
    response = test_client.get(PAYOUTS_URL, {"status": "successful", "from_date": start})
    assert list_ids(response) == [listed[4].pk]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("reference", "po_20250101_does_not_matter"),
        ("reference", "3333333333"),
        ("reference", "chioma"),
    ],
)
def test_filter_by_reference(test_client, listed, field: str, value: str) -> None:
    if value.startswith("po_"):
        value = listed[2].internal_reference
    assert list_ids(test_client.get(PAYOUTS_URL, {field: value})) == [listed[2].pk]


def test_filter_by_reference_finds_the_merchants_idempotency_key(test_client, listed) -> None:
    response = test_client.get(PAYOUTS_URL, {"reference": listed[3].idempotency_key})
    assert list_ids(response) == [listed[3].pk]
    assert response.json()["data"]["items"][0]["idempotency_key"] == listed[3].idempotency_key
    assert response.json()["data"]["pagination"]["total"] == 1


def test_currency_ngn_is_accepted(test_client, listed) -> None:
    assert len(list_ids(test_client.get(PAYOUTS_URL, {"currency": "NGN"}))) == 5


@pytest.mark.parametrize(
    ("params", "listed_count"),
    [
        ({"to_date": "9999-12-31"}, 5),
        ({"from_date": "0001-01-01"}, 5),
        ({"from_date": "0001-01-01", "to_date": "9999-12-31"}, 5),
        ({"to_date": "9999-12-31T23:59:59+14:00"}, 5),
        ({"to_date": "9999-12-31T23:59:59-14:00"}, 5),
        ({"to_date": "9999-12-31T23:59:59.999999-23:59"}, 5),
        ({"from_date": "0001-01-01T00:00:00+14:00"}, 5),
        ({"from_date": "0001-01-01T00:00:00-14:00"}, 5),
        ({"from_date": "9999-12-31"}, 0),
        ({"from_date": "9999-12-31T23:59:59-14:00"}, 0),
        ({"to_date": "0001-01-01"}, 0),
        ({"to_date": "0001-01-01T00:00:00+14:00"}, 0),
        ({"page": "9" * 30}, 0),
        ({"page": str(2**63)}, 0),
    ],
)
def test_extreme_dates_and_pages_list_like_any_other(
    test_client, listed, params: dict, listed_count: int
) -> None:
    """``to_date=9999-12-31`` overflowed computing the end of its day (a 500): now the earliest
    and latest dates bound the list like any other date."""
    response = test_client.get(PAYOUTS_URL, params)
    assert response.status_code == 200, response.content
    assert len(list_ids(response)) == listed_count


@pytest.mark.parametrize(
    "value", ["10000-01-01", "10000-01-01T00:00:00Z", "99999-12-31", "-0001-01-01", "0000-01-01"]
)
def test_dates_beyond_year_9999_or_before_year_1_are_400(test_client, listed, value) -> None:
    for name in ("from_date", "to_date"):
        error(
            test_client.get(PAYOUTS_URL, {name: value}),
            400,
            f"{name}: must be an ISO 8601 date or date-time",
        )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"status": "paid"},
            f"status: must be one of {ALL_STATUSES}",
        ),
        ({"from_date": "yesterday"}, "from_date: must be an ISO 8601 date or date-time"),
        ({"from_date": "2025-13-01"}, "from_date: must be an ISO 8601 date or date-time"),
        ({"to_date": "2025-02-30T10:00:00"}, "to_date: must be an ISO 8601 date or date-time"),
        (
            {"from_date": "2025-02-02", "to_date": "2025-02-01"},
            "to_date: must not be earlier than from_date",
        ),
        ({"page": "0"}, "page: Ensure this value is greater than or equal to 1."),
        ({"page": "x"}, "page: A valid integer is required."),
        ({"limit": "0"}, "limit: Ensure this value is greater than or equal to 1."),
        ({"limit": "201"}, "limit: Ensure this value is less than or equal to 200."),
        ({"currency": "USD"}, "Only NGN payouts are supported"),
    ],
)
def test_bad_list_parameters_are_400(test_client, listed, params: dict, message: str) -> None:
    error(test_client.get(PAYOUTS_URL, params), 400, message)


def test_list_shows_only_this_merchant_and_mode(test_client, listed, live_wallet) -> None:
    other = merchant_create(name="Other", email="other@example.com").merchant
    PayoutFactory(wallet=wallet_get(merchant=other, mode=Mode.TEST))
    PayoutFactory(wallet=live_wallet)
    assert sorted(list_ids(test_client.get(PAYOUTS_URL))) == sorted(p.pk for p in listed)


def test_list_with_live_key_shows_live_payouts(live_client, listed, live_wallet) -> None:
    live_payout = PayoutFactory(wallet=live_wallet)
    assert list_ids(live_client.get(PAYOUTS_URL)) == [live_payout.pk]


# --- Details -----------------------------------------------------------------------------------


def test_details(test_client, listed, django_assert_num_queries) -> None:
    payout = listed[2]
    with django_assert_num_queries(3):  # key lookup, payout, its attempts
        response = test_client.get(detail_url(payout.pk))
    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Payout retrieved successfully"
    assert body["data"]["id"] == payout.pk
    assert body["data"]["status"] == "ambiguous"
    # One payout's routes add its sends to providers (extension): the list leaves them out.
    assert set(body["data"]) == PAYOUT_KEYS | {"attempts"}


def test_details_of_another_merchants_payout_is_404(test_client, db) -> None:
    other = merchant_create(name="Other", email="other@example.com").merchant
    payout = PayoutFactory(wallet=wallet_get(merchant=other, mode=Mode.TEST))
    error(test_client.get(detail_url(payout.pk)), 404, "Payout not found")


def test_details_of_the_other_mode_is_404(test_client, live_wallet) -> None:
    payout = PayoutFactory(wallet=live_wallet)
    error(test_client.get(detail_url(payout.pk)), 404, "Payout not found")


def test_details_of_unknown_payout_is_404(test_client) -> None:
    error(test_client.get(detail_url(999999)), 404, "Payout not found")


def test_non_numeric_id_is_404(test_client) -> None:
    response = test_client.get(f"{PAYOUTS_URL}/abc")
    assert response.status_code == 404
    assert response.json()["status"] is False


# --- Requery -----------------------------------------------------------------------------------


def create_and_dispatch(client: APIClient, body: dict[str, Any]) -> int:
    payout_id = post_create(client, body).json()["data"]["payout"]["id"]
    payout_dispatch(payout_id=payout_id)
    return payout_id


def test_requery_resolves_to_successful_200(test_client, funded_wallet, payload) -> None:
    payout_id = create_and_dispatch(test_client, payload(account_number="1000000002"))
    assert test_client.get(detail_url(payout_id)).json()["data"]["status"] == "ambiguous"
    response = test_client.post(requery_url(payout_id))
    assert response.status_code == 200
    assert response.json()["message"] == "Payout completed successfully"
    data = response.json()["data"]
    assert data["status"] == "successful"
    assert data["completed_at"] is not None
    assert set(data) == PAYOUT_KEYS | {"attempts"}
    assert_wallet_balanced(funded_wallet)


def test_requery_inconclusive_is_202_ambiguous(test_client, funded_wallet, payload) -> None:
    payout_id = create_and_dispatch(test_client, payload(account_number="1000000003"))
    for _ in range(2):
        response = test_client.post(requery_url(payout_id))
        assert response.status_code == 202
        assert response.json()["data"]["status"] == "ambiguous"
        assert response.json()["message"] == (
            "Payout status is not yet conclusive; funds remain reserved"
        )
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("1010.00")
    assert_wallet_balanced(funded_wallet)


def test_requery_of_reserved_payout_is_202_pending(
    test_client, funded_wallet, payload, django_capture_on_commit_callbacks
) -> None:
    payout_id = post_create(test_client, payload()).json()["data"]["payout"]["id"]
    with django_capture_on_commit_callbacks() as callbacks:
        response = test_client.post(requery_url(payout_id))
    assert response.status_code == 202
    assert response.json()["data"]["status"] == "reserved"
    assert response.json()["message"] == "Payout is still being processed; funds remain reserved"
    assert len(callbacks) == 1  # the dispatch is queued again


@pytest.mark.parametrize("account_number", ["0123456789", "1000000001"])
def test_requery_of_final_payout_is_409(
    test_client, funded_wallet, payload, account_number: str
) -> None:
    payout_id = create_and_dispatch(test_client, payload(account_number=account_number))
    error(
        test_client.post(requery_url(payout_id)), 409, "Payout is not eligible for status requery"
    )


def test_requery_of_unknown_payout_is_404(test_client) -> None:
    error(test_client.post(requery_url(424242)), 404, "Payout not found")


def test_requery_of_other_mode_is_404(test_client, live_wallet) -> None:
    payout = PayoutFactory(wallet=live_wallet, status=PayoutStatus.AMBIGUOUS)
    error(test_client.post(requery_url(payout.pk)), 404, "Payout not found")
    assert reload(payout).requery_count == 0


def test_requery_answering_failed_is_200_failed(
    test_client, funded_wallet, payload, live_client, live_mode
) -> None:
    """A definitive failure found by requery: 200, status failed, funds back."""
    import responses as responses_lib

    from tests.payouts.conftest import PAYSTACK_BASE

    with responses_lib.RequestsMock() as rsps:
        rsps.post(
            f"{PAYSTACK_BASE}/transferrecipient",
            json={"status": True, "data": {"recipient_code": "RCP_1"}},
        )
        rsps.post(f"{PAYSTACK_BASE}/transfer", status=500)
        payout_id = create_and_dispatch(live_client, payload())
        reference = Payout.objects.get(pk=payout_id).internal_reference
        rsps.get(
            f"{PAYSTACK_BASE}/transfer/verify/{reference}",
            json={"status": True, "data": {"status": "failed", "reference": reference}},
        )
        response = live_client.post(requery_url(payout_id))
    assert response.status_code == 200
    assert response.json()["message"] == "Payout failed"
    assert response.json()["data"]["status"] == "failed"
    assert_wallet_balanced(live_mode)


# --- Authentication ----------------------------------------------------------------------------


ROUTES = [
    ("post", PAYOUTS_URL),
    ("get", PAYOUTS_URL),
    ("get", f"{PAYOUTS_URL}/1"),
    ("post", f"{PAYOUTS_URL}/1/requery"),
]


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_missing_header_is_401(api_client: APIClient, db, method: str, url: str) -> None:
    response = getattr(api_client, method)(url)
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_wrong_scheme_is_401(api_client, merchant_account, method: str, url: str) -> None:
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {merchant_account.test_key.plaintext}")
    response = getattr(api_client, method)(url)
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_unknown_key_is_401(client_for, db, method: str, url: str) -> None:
    response = getattr(client_for("sk_test_" + "z" * 43), method)(url)
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_revoked_key_is_401(client_for, merchant_account, method: str, url: str) -> None:
    old_key = merchant_account.test_key.plaintext
    secret_key_rotate(merchant=merchant_account.merchant, mode=Mode.TEST)
    response = getattr(client_for(old_key), method)(url)
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


def test_unauthenticated_create_changes_nothing(api_client, funded_wallet, payload) -> None:
    api_client.post(PAYOUTS_URL, payload(), format="json")
    assert not Payout.objects.exists()
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")


# --- Broker outage --------------------------------------------------------------------------


@pytest.fixture
def broker_down() -> Any:
    from config.celery_app import app as celery_app
    from tests.payouts.helpers import celery_client_reset

    previous = celery_app.conf.broker_url
    celery_app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens there
    celery_client_reset()
    yield
    celery_app.conf.broker_url = previous
    celery_client_reset()


def test_create_is_accepted_while_the_broker_is_down_and_swept_later(
    test_client, funded_wallet, payload, broker_down, django_capture_on_commit_callbacks
) -> None:
    from payouts.services import payouts_dispatch_stuck

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = post_create(test_client, payload())
    assert len(callbacks) == 1  # the enqueue ran, failed, and was logged
    assert response.status_code == 202
    payout = Payout.objects.get(pk=response.json()["data"]["payout"]["id"])
    assert payout.status == PayoutStatus.RESERVED
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("1010.00")

    report = payouts_dispatch_stuck(older_than=timedelta(0))
    assert report.outcomes == {"successful": 1}
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert_wallet_balanced(funded_wallet)
