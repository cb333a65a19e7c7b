"""Beneficiary routes and payouts by ``beneficiary_id``: bodies, status codes, messages."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from beneficiaries.models import Beneficiary
from core.api.throttling import SecretKeyRateThrottle
from merchants.models import Mode
from payouts.models import Payout, PayoutStatus
from payouts.services import IDEMPOTENCY_CONFLICT_MESSAGE
from tests.beneficiaries.factories import BeneficiaryFactory
from tests.beneficiaries.helpers import (
    BENEFICIARIES_URL,
    GOOD_ACCOUNT,
    GTB_CODE,
    NAME_ENQUIRY_URL,
    OTHER_ACCOUNT,
    PAYOUTS_URL,
    beneficiary_url,
)
from tests.payouts.helpers import assert_wallet_balanced, fund_wallet, new_idempotency_key
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.providers.sandbox import (
    UNAVAILABLE_ACCOUNT_NUMBER,
    UNRESOLVABLE_ACCOUNT_NUMBER,
    sandbox_account_name,
)
from wallets.selectors import bank_get_by_code, wallet_get

pytestmark = pytest.mark.django_db

BENEFICIARY_KEYS = {
    "id",
    "account_number",
    "account_name",
    "bank_code",
    "bank_name",
    "nickname",
    "created_at",
}
UNAUTHORIZED = {
    "status": False,
    "message": "Unauthorized: invalid or missing secret key",
    "data": None,
    "statusCode": 401,
}


def error(response: Any, status_code: int, message: str) -> None:
    assert response.status_code == status_code, response.content
    assert response.json() == {
        "status": False,
        "message": message,
        "data": None,
        "statusCode": status_code,
    }


def post(client: APIClient, url: str, body: Any) -> Any:
    return client.post(url, json.dumps(body), content_type="application/json")


def save(client: APIClient, **overrides: Any) -> Any:
    body = {"account_number": GOOD_ACCOUNT, "bank_code": GTB_CODE}
    body.update(overrides)
    return post(client, BENEFICIARIES_URL, {k: v for k, v in body.items() if v is not ...})


def pay(client: APIClient, **overrides: Any) -> Any:
    body: dict[str, Any] = {
        "amount": "1000.00",
        "narration": "Invoice 42",
        "idempotency_key": new_idempotency_key(),
    }
    body.update(overrides)
    return post(client, PAYOUTS_URL, {k: v for k, v in body.items() if v is not ...})


@pytest.fixture
def merchant(merchant_account):
    return merchant_account.merchant


# --- Authentication ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", BENEFICIARIES_URL),
        ("get", BENEFICIARIES_URL),
        ("get", beneficiary_url(1)),
        ("delete", beneficiary_url(1)),
    ],
)
@pytest.mark.parametrize("authorization", [None, "Bearer sk_test_unknown", "Basic abc"])
def test_every_route_answers_401_without_a_valid_key(
    api_client, merchant_account, method, path, authorization
) -> None:
    if authorization:
        api_client.credentials(HTTP_AUTHORIZATION=authorization)
    response = getattr(api_client, method)(path)
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


# --- Save ----------------------------------------------------------------------------------------


def test_save_answers_201_with_the_resolved_name(test_client) -> None:
    response = save(test_client, nickname="Warehouse rent")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] is True
    assert body["statusCode"] == 201
    assert body["message"] == "Beneficiary saved"
    data = body["data"]
    assert set(data) == BENEFICIARY_KEYS
    assert data["account_number"] == GOOD_ACCOUNT
    assert data["account_name"] == sandbox_account_name(GOOD_ACCOUNT)
    assert data["bank_code"] == GTB_CODE
    assert data["bank_name"] == "Guaranty Trust Bank"
    assert data["nickname"] == "Warehouse rent"
    assert data["id"] == Beneficiary.objects.get().pk


def test_save_without_a_nickname_answers_null(test_client) -> None:
    assert save(test_client).json()["data"]["nickname"] is None
    assert (
        save(test_client, account_number=OTHER_ACCOUNT, nickname="  ").json()["data"]["nickname"]
        is None
    )


def test_saving_a_saved_account_answers_200_with_the_saved_one(test_client, name_enquiry) -> None:
    first = save(test_client, nickname="Rent").json()["data"]
    again = save(test_client, nickname="Something else")
    assert again.status_code == 200
    assert again.json()["message"] == "Beneficiary already saved"
    assert again.json()["data"] == first
    assert Beneficiary.objects.count() == 1
    assert name_enquiry.calls == [GOOD_ACCOUNT]


@pytest.mark.parametrize(
    "body",
    [
        {"account_number": UNRESOLVABLE_ACCOUNT_NUMBER, "bank_code": GTB_CODE},
        {"account_number": UNAVAILABLE_ACCOUNT_NUMBER, "bank_code": GTB_CODE},
        {"account_number": GOOD_ACCOUNT, "bank_code": "999"},
        {"account_number": GOOD_ACCOUNT, "bank_code": ""},
        {"account_number": "01234 6789", "bank_code": GTB_CODE},
        {"account_number": "١٢٣٤٥٦٧٨٩٠", "bank_code": GTB_CODE},
        {"account_number": "012345678", "bank_code": GTB_CODE},
        {"account_number": "", "bank_code": GTB_CODE},
        {"account_number": 123456789, "bank_code": GTB_CODE},
        {"bank_code": GTB_CODE},
    ],
    ids=[
        "unresolved",
        "unavailable",
        "unknown-bank",
        "blank-bank",
        "space",
        "arabic-digits",
        "nine-digits",
        "blank-account",
        "number",
        "missing-account",
    ],
)
def test_save_fails_exactly_as_name_enquiry_does(test_client, body) -> None:
    expected = post(test_client, NAME_ENQUIRY_URL, body)
    response = post(test_client, BENEFICIARIES_URL, body)
    assert expected.status_code in (400, 503)
    assert response.status_code == expected.status_code
    assert response.json() == expected.json()
    assert response.get("Retry-After") == expected.get("Retry-After")
    assert not Beneficiary.objects.exists()


def test_an_unavailable_name_enquiry_is_a_503_with_retry_after(test_client) -> None:
    response = save(test_client, account_number=UNAVAILABLE_ACCOUNT_NUMBER)
    error(response, 503, "Name enquiry temporarily unavailable, retry after a short delay")
    assert response["Retry-After"] == "5"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"account_name": "ADE"}, "account_name: is not an accepted field"),
        ({"bank_id": 1}, "bank_id: is not an accepted field"),
        ({"nickname": "x" * 101}, "nickname: Ensure this field has no more than 100 characters."),
        ({"nickname": 7}, "nickname: must be a string"),
        ({"bank_code": 58}, "bank_code: must be a string"),
    ],
)
def test_save_takes_strict_fields(test_client, overrides, message) -> None:
    error(save(test_client, **overrides), 400, message)
    assert not Beneficiary.objects.exists()


def test_save_refuses_a_body_that_is_not_an_object(test_client) -> None:
    error(
        post(test_client, BENEFICIARIES_URL, ["0123456789"]),
        400,
        "request body must be a JSON object",
    )


def test_saves_count_against_the_name_enquiry_limit_and_reads_do_not(
    test_client, monkeypatch
) -> None:
    monkeypatch.setattr(
        SecretKeyRateThrottle, "THROTTLE_RATES", {"name_enquiry": "2/min", "read": "100/min"}
    )
    assert (
        post(
            test_client, NAME_ENQUIRY_URL, {"account_number": GOOD_ACCOUNT, "bank_code": GTB_CODE}
        ).status_code
        == 200
    )
    assert save(test_client).status_code == 201
    refused = save(test_client, account_number=OTHER_ACCOUNT)
    assert refused.status_code == 429
    assert refused.json()["statusCode"] == 429
    assert "Retry-After" in refused
    assert test_client.get(BENEFICIARIES_URL).status_code == 200


# --- List ----------------------------------------------------------------------------------------


def test_list_is_paginated_newest_first(test_client, merchant) -> None:
    saved = [BeneficiaryFactory(merchant=merchant) for _ in range(5)]
    first = test_client.get(BENEFICIARIES_URL, {"limit": 2})
    assert first.status_code == 200
    body = first.json()
    assert body["message"] == "Beneficiaries retrieved successfully"
    assert [item["id"] for item in body["data"]["items"]] == [saved[4].pk, saved[3].pk]
    assert set(body["data"]["items"][0]) == BENEFICIARY_KEYS
    assert body["data"]["pagination"] == {
        "page": 1,
        "limit": 2,
        "total": 5,
        "total_pages": 3,
        "has_next_page": True,
        "has_previous_page": False,
    }
    last = test_client.get(BENEFICIARIES_URL, {"limit": 2, "page": 3}).json()["data"]
    assert [item["id"] for item in last["items"]] == [saved[0].pk]
    assert last["pagination"]["has_next_page"] is False
    assert last["pagination"]["has_previous_page"] is True


def test_list_defaults_to_page_1_of_50(test_client) -> None:
    pagination = test_client.get(BENEFICIARIES_URL).json()["data"]["pagination"]
    assert (pagination["page"], pagination["limit"], pagination["total"]) == (1, 50, 0)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"limit": 201}, "limit: Ensure this value is less than or equal to 200."),
        ({"page": 0}, "page: Ensure this value is greater than or equal to 1."),
        ({"account_number": "12345"}, "account_number: must be exactly 10 digits"),
    ],
)
def test_list_refuses_bad_parameters(test_client, params, message) -> None:
    error(test_client.get(BENEFICIARIES_URL, params), 400, message)


def test_list_filters_by_account_number(test_client, merchant) -> None:
    wanted = BeneficiaryFactory(merchant=merchant, account_number=GOOD_ACCOUNT)
    BeneficiaryFactory(merchant=merchant)
    items = test_client.get(BENEFICIARIES_URL, {"account_number": GOOD_ACCOUNT}).json()["data"]
    assert [item["id"] for item in items["items"]] == [wanted.pk]


def test_list_queries_do_not_grow_with_the_page(test_client, merchant) -> None:
    BeneficiaryFactory(merchant=merchant)
    with CaptureQueriesContext(connection) as one:
        test_client.get(BENEFICIARIES_URL)
    BeneficiaryFactory.create_batch(10, merchant=merchant)
    with CaptureQueriesContext(connection) as eleven:
        response = test_client.get(BENEFICIARIES_URL)
    assert len(response.json()["data"]["items"]) == 11
    assert len(eleven) == len(one)


# --- Scoping -------------------------------------------------------------------------------------


def test_a_test_key_never_sees_live_beneficiaries(test_client, live_client) -> None:
    live = save(live_client).json()["data"]
    assert test_client.get(BENEFICIARIES_URL).json()["data"]["items"] == []
    error(test_client.get(beneficiary_url(live["id"])), 404, "Beneficiary not found")
    error(test_client.delete(beneficiary_url(live["id"])), 404, "Beneficiary not found")
    # The same account saved with the test key is a beneficiary of its own.
    assert save(test_client).status_code == 201
    assert live_client.get(beneficiary_url(live["id"])).status_code == 200


def test_another_merchant_never_sees_them(test_client, other_client) -> None:
    mine = save(test_client).json()["data"]
    assert other_client.get(BENEFICIARIES_URL).json()["data"]["items"] == []
    error(other_client.get(beneficiary_url(mine["id"])), 404, "Beneficiary not found")
    error(other_client.delete(beneficiary_url(mine["id"])), 404, "Beneficiary not found")
    assert test_client.get(beneficiary_url(mine["id"])).status_code == 200


# --- Details and delete --------------------------------------------------------------------------


def test_details_answer_the_beneficiary(test_client) -> None:
    saved = save(test_client, nickname="Rent").json()["data"]
    response = test_client.get(beneficiary_url(saved["id"]))
    assert response.status_code == 200
    assert response.json()["message"] == "Beneficiary retrieved successfully"
    assert response.json()["data"] == saved


@pytest.mark.parametrize("beneficiary_id", ["0", "999999", str(2**63), "9" * 40])
def test_details_of_nothing_is_a_404(test_client, beneficiary_id) -> None:
    error(test_client.get(f"{BENEFICIARIES_URL}/{beneficiary_id}"), 404, "Beneficiary not found")


def test_delete_answers_200_with_the_deleted_beneficiary_then_404(test_client) -> None:
    saved = save(test_client).json()["data"]
    response = test_client.delete(beneficiary_url(saved["id"]))
    assert response.status_code == 200
    assert response.json() == {
        "status": True,
        "message": "Beneficiary deleted",
        "data": saved,
        "statusCode": 200,
    }
    error(test_client.get(beneficiary_url(saved["id"])), 404, "Beneficiary not found")
    error(test_client.delete(beneficiary_url(saved["id"])), 404, "Beneficiary not found")
    assert test_client.get(BENEFICIARIES_URL).json()["data"]["items"] == []


def test_a_deleted_account_can_be_saved_again(test_client) -> None:
    first = save(test_client).json()["data"]
    test_client.delete(beneficiary_url(first["id"]))
    again = save(test_client)
    assert again.status_code == 201
    assert again.json()["data"]["id"] != first["id"]
    assert [item["id"] for item in test_client.get(BENEFICIARIES_URL).json()["data"]["items"]] == [
        again.json()["data"]["id"]
    ]


def test_details_take_a_constant_number_of_queries(test_client, merchant) -> None:
    saved = BeneficiaryFactory(merchant=merchant)
    with CaptureQueriesContext(connection) as queries:
        assert test_client.get(beneficiary_url(saved.pk)).status_code == 200
    # The key (with its merchant), the beneficiary.
    assert len(queries) <= 3, [query["sql"] for query in queries]


# --- Paying a beneficiary ------------------------------------------------------------------------


def test_a_payout_to_a_beneficiary_reserves_and_copies_the_account(
    test_client, funded_wallet
) -> None:
    saved = save(test_client).json()["data"]
    response = pay(test_client, beneficiary_id=saved["id"], amount="2500.50")
    assert response.status_code == 202, response.content
    assert response.json()["message"] == "Payout accepted for processing"
    assert response.json()["data"]["duplicate"] is False
    payout = response.json()["data"]["payout"]
    assert payout["status"] == "reserved"
    assert payout["total_debit_amount"] == "2510.50"
    assert payout["beneficiary"] == {
        "account_number": saved["account_number"],
        "account_name": saved["account_name"],
        "bank_code": saved["bank_code"],
        "bank_name": saved["bank_name"],
    }
    stored = Payout.objects.get(pk=payout["id"])
    assert stored.bank_id == bank_get_by_code(bank_code=GTB_CODE).pk
    funded_wallet.refresh_from_db()
    assert funded_wallet.available_balance == Decimal("97489.50")
    assert funded_wallet.reserved_balance == Decimal("2510.50")
    assert LedgerEntry.objects.filter(entry_type=LedgerEntryType.PAYOUT_RESERVE).count() == 1
    assert_wallet_balanced(funded_wallet)


def test_the_payout_resolves_the_name_again(test_client, funded_wallet, name_enquiry) -> None:
    """The saved name is for display: the payout takes the name name enquiry gives now."""
    saved = save(test_client).json()["data"]
    name_enquiry.renamed[GOOD_ACCOUNT] = "ADEYEMI TUNDE"
    payout = pay(test_client, beneficiary_id=saved["id"]).json()["data"]["payout"]
    assert payout["beneficiary"]["account_name"] == "ADEYEMI TUNDE"
    assert name_enquiry.calls == [GOOD_ACCOUNT, GOOD_ACCOUNT]
    assert Beneficiary.objects.get(pk=saved["id"]).account_name == saved["account_name"]


def test_a_payout_to_a_beneficiary_whose_account_no_longer_resolves_is_refused(
    test_client, funded_wallet, merchant
) -> None:
    saved = BeneficiaryFactory(merchant=merchant, account_number=UNRESOLVABLE_ACCOUNT_NUMBER)
    error(
        pay(test_client, beneficiary_id=saved.pk),
        400,
        "Beneficiary account name could not be resolved",
    )
    assert not Payout.objects.exists()


def test_a_payout_survives_the_deletion_of_its_beneficiary(test_client, funded_wallet) -> None:
    saved = save(test_client).json()["data"]
    payout = pay(test_client, beneficiary_id=saved["id"]).json()["data"]["payout"]
    test_client.delete(beneficiary_url(saved["id"]))
    details = test_client.get(f"{PAYOUTS_URL}/{payout['id']}").json()["data"]
    assert details["beneficiary"]["account_number"] == GOOD_ACCOUNT
    assert details["status"] == PayoutStatus.RESERVED


@pytest.mark.parametrize(
    ("account_fields", "named"),
    [
        ({"account_number": GOOD_ACCOUNT, "bank_code": GTB_CODE}, "account_number, bank_code"),
        ({"account_number": GOOD_ACCOUNT}, "account_number"),
        ({"bank_code": GTB_CODE}, "bank_code"),
        ({"bank_id": 1}, "bank_id"),
    ],
)
def test_a_beneficiary_id_with_an_account_is_a_400_naming_beneficiary_id(
    test_client, funded_wallet, account_fields, named
) -> None:
    saved = save(test_client).json()["data"]
    response = pay(test_client, beneficiary_id=saved["id"], **account_fields)
    error(response, 400, f"beneficiary_id: must not be sent with {named}")
    assert not Payout.objects.exists()


def test_neither_a_beneficiary_id_nor_an_account_is_a_400_naming_account_number(
    test_client, funded_wallet
) -> None:
    error(
        pay(test_client),
        400,
        "account_number: This field is required.; bank_code: This field is required.",
    )
    error(pay(test_client, bank_code=GTB_CODE), 400, "account_number: This field is required.")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1", "beneficiary_id: must be a positive integer"),
        (0, "beneficiary_id: must be a positive integer"),
        (-3, "beneficiary_id: must be a positive integer"),
        (1.5, "beneficiary_id: must be a positive integer"),
        (True, "beneficiary_id: must be a positive integer"),
        (None, "beneficiary_id: This field may not be null."),
    ],
)
def test_a_malformed_beneficiary_id_is_a_400(test_client, funded_wallet, value, message) -> None:
    error(pay(test_client, beneficiary_id=value), 400, message)


@pytest.mark.parametrize("beneficiary_id", [987654, 2**63, 10**30])
def test_paying_an_unknown_beneficiary_is_a_404(test_client, funded_wallet, beneficiary_id) -> None:
    error(pay(test_client, beneficiary_id=beneficiary_id), 404, "Beneficiary not found")


def test_paying_a_deleted_beneficiary_is_a_404_and_reserves_nothing(
    test_client, funded_wallet
) -> None:
    saved = save(test_client).json()["data"]
    test_client.delete(beneficiary_url(saved["id"]))
    error(pay(test_client, beneficiary_id=saved["id"]), 404, "Beneficiary not found")
    assert not Payout.objects.exists()
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("0.00")


def test_paying_another_modes_or_merchants_beneficiary_is_a_404(
    test_client, live_client, other_client, funded_wallet
) -> None:
    live = save(live_client).json()["data"]
    error(pay(test_client, beneficiary_id=live["id"]), 404, "Beneficiary not found")
    theirs = save(other_client, account_number=OTHER_ACCOUNT).json()["data"]
    error(pay(test_client, beneficiary_id=theirs["id"]), 404, "Beneficiary not found")
    assert not Payout.objects.exists()


def test_a_replay_with_the_same_beneficiary_is_a_duplicate(
    test_client, funded_wallet, name_enquiry
) -> None:
    saved = save(test_client).json()["data"]
    first = pay(test_client, beneficiary_id=saved["id"], idempotency_key="inv-77")
    replay = pay(test_client, beneficiary_id=saved["id"], idempotency_key="inv-77")
    assert replay.status_code == 202
    assert replay.json()["message"] == "Payout request already accepted"
    assert replay.json()["data"]["duplicate"] is True
    assert replay.json()["data"]["payout"]["id"] == first.json()["data"]["payout"]["id"]
    assert Payout.objects.count() == 1
    assert LedgerEntry.objects.filter(entry_type=LedgerEntryType.PAYOUT_RESERVE).count() == 1
    assert name_enquiry.calls == [GOOD_ACCOUNT, GOOD_ACCOUNT]  # save, first payout; no replay
    assert_wallet_balanced(funded_wallet)


def test_the_same_key_with_another_beneficiary_is_a_409(test_client, funded_wallet) -> None:
    one = save(test_client).json()["data"]
    other = save(test_client, account_number=OTHER_ACCOUNT).json()["data"]
    pay(test_client, beneficiary_id=one["id"], idempotency_key="inv-78")
    error(
        pay(test_client, beneficiary_id=other["id"], idempotency_key="inv-78"),
        409,
        IDEMPOTENCY_CONFLICT_MESSAGE,
    )
    assert Payout.objects.count() == 1


def test_a_key_used_by_account_then_by_beneficiary_id_is_a_409(test_client, funded_wallet) -> None:
    """A payout by beneficiary_id carries the bank_id saved with it: it matches a request by
    account only if that request sent the same bank_id."""
    saved = save(test_client).json()["data"]
    pay(test_client, account_number=GOOD_ACCOUNT, bank_code=GTB_CODE, idempotency_key="inv-79")
    error(
        pay(test_client, beneficiary_id=saved["id"], idempotency_key="inv-79"),
        409,
        IDEMPOTENCY_CONFLICT_MESSAGE,
    )
    bank_id = bank_get_by_code(bank_code=GTB_CODE).pk
    pay(
        test_client,
        account_number=GOOD_ACCOUNT,
        bank_code=GTB_CODE,
        bank_id=bank_id,
        idempotency_key="inv-80",
    )
    replay = pay(test_client, beneficiary_id=saved["id"], idempotency_key="inv-80")
    assert replay.status_code == 202
    assert replay.json()["data"]["duplicate"] is True


def test_a_payout_by_beneficiary_id_in_live_mode_uses_the_live_wallet(
    live_client, merchant
) -> None:
    live_wallet = fund_wallet(wallet_get(merchant=merchant, mode=Mode.LIVE), "5000.00")
    saved = save(live_client).json()["data"]
    response = pay(live_client, beneficiary_id=saved["id"])
    assert response.status_code == 202, response.content
    assert Payout.objects.get().wallet_id == live_wallet.pk
