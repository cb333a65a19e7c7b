from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from merchants.models import Mode
from merchants.services import merchant_create, secret_key_rotate
from tests.wallets.writers import wallet_capture, wallet_reserve
from wallets.models import Bank, FundingTransfer, LedgerEntry
from wallets.selectors import wallet_get
from wallets.services import (
    wallet_lock,
)

pytestmark = pytest.mark.django_db

WALLET_URL = "/api/v1/transactions/in/merchant-wallet"
LEDGER_URL = "/api/v1/transactions/in/merchant-wallet/ledger"
QUOTE_URL = "/api/v1/transactions/in/merchant-wallet/payouts/quote"
NAME_ENQUIRY_URL = "/api/v1/transactions/in/merchant-wallet/payouts/name-enquiry"
BANKS_URL = "/api/v1/transactions/bank"
FUND_URL = "/api/v1/test-helpers/wallet/fund"

UNAUTHORIZED = {
    "status": False,
    "message": "Unauthorized: invalid or missing secret key",
    "data": None,
    "statusCode": 401,
}


def _error(response, status: int) -> str:
    body = response.json()
    assert response.status_code == status, body
    assert body["status"] is False
    assert body["data"] is None
    assert body["statusCode"] == status
    return body["message"]


# --- Authentication ----------------------------------------------------------------------------

ROUTES = [
    ("get", WALLET_URL),
    ("get", LEDGER_URL),
    ("post", QUOTE_URL),
    ("get", BANKS_URL),
    ("post", NAME_ENQUIRY_URL),
    ("post", FUND_URL),
]


@pytest.mark.parametrize(("method", "url"), ROUTES)
@pytest.mark.parametrize("credential", ["missing", "wrong_scheme", "unknown", "revoked"])
def test_wallet_routes_answer_401_without_a_valid_key(
    method: str, url: str, credential: str, merchant_account
) -> None:
    client = APIClient()
    key = merchant_account.test_key.plaintext
    if credential == "wrong_scheme":
        client.credentials(HTTP_AUTHORIZATION=f"Basic {key}")
    elif credential == "unknown":
        client.credentials(HTTP_AUTHORIZATION="Bearer sk_test_" + "x" * 43)
    elif credential == "revoked":
        secret_key_rotate(merchant=merchant_account.merchant, mode=Mode.TEST)
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    response = getattr(client, method)(url, {"amount": "100.00"}, format="json")
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED
    assert not FundingTransfer.objects.exists()


# --- Wallet and ledger -------------------------------------------------------------------------


def test_wallet_detail_shows_balances_and_static_account(test_client, test_wallet, fund) -> None:
    fund(test_wallet, "2500.50")
    response = test_client.get(WALLET_URL)
    body = response.json()
    assert response.status_code == 200
    assert body["status"] is True
    assert body["statusCode"] == 200
    assert body["data"] == {
        "currency": "NGN",
        "status": "active",
        "available_balance": "2500.50",
        "reserved_balance": "0.00",
        "static_account": {
            "account_number": test_wallet.static_account_number,
            "bank_name": "Sandbox Test Bank",
            "account_name": "Ade Stores",
        },
    }


def test_wallet_detail_is_isolated_by_mode(
    test_client, live_client, test_wallet, live_wallet, fund
):
    fund(test_wallet, "10.00")
    fund(live_wallet, "99.00")
    test_data = test_client.get(WALLET_URL).json()["data"]
    live_data = live_client.get(WALLET_URL).json()["data"]
    assert test_data["available_balance"] == "10.00"
    assert test_data["static_account"]["account_number"] == test_wallet.static_account_number
    assert live_data["available_balance"] == "99.00"
    assert live_data["static_account"]["account_number"] == live_wallet.static_account_number
    assert live_data["static_account"]["bank_name"] == "Wema Bank"


def test_wallet_detail_uses_few_queries(test_client, django_assert_max_num_queries) -> None:
    with django_assert_max_num_queries(3):  # key lookup, wallet
        assert test_client.get(WALLET_URL).status_code == 200


def test_ledger_lists_entries_newest_first_with_pagination(test_client, test_wallet, fund) -> None:
    fund(test_wallet, "100.00", reference="PRV-A")
    with transaction.atomic():
        locked = wallet_lock(wallet_id=test_wallet.pk)
        wallet_reserve(wallet=locked, amount=Decimal("35.00"), reference="PAY-1", payout_id=7)
    wallet_capture(
        wallet_id=test_wallet.pk,
        amount=Decimal("25.00"),
        fee_amount=Decimal("10.00"),
        reference="PAY-1",
        payout_id=7,
    )
    response = test_client.get(LEDGER_URL, {"limit": 2})
    body = response.json()
    assert response.status_code == 200
    items = body["data"]["items"]
    assert [item["entry_type"] for item in items] == ["payout_debit", "payout_reserve"]
    assert items[0] == {
        "id": items[0]["id"],
        "entry_type": "payout_debit",
        "amount": "25.00",
        "fee_amount": "10.00",
        "available_delta": "0.00",
        "reserved_delta": "-35.00",
        "available_balance_after": "65.00",
        "reserved_balance_after": "0.00",
        "reference": "PAY-1",
        "payout_id": 7,
        "description": "",
        "created_at": items[0]["created_at"],
    }
    assert body["data"]["pagination"] == {
        "page": 1,
        "limit": 2,
        "total": 3,
        "total_pages": 2,
        "has_next_page": True,
        "has_previous_page": False,
    }
    page_two = test_client.get(LEDGER_URL, {"limit": 2, "page": 2}).json()["data"]
    assert [item["reference"] for item in page_two["items"]] == ["PRV-A"]
    assert page_two["pagination"]["has_previous_page"] is True


def test_ledger_is_isolated_by_mode(live_client, test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    data = live_client.get(LEDGER_URL).json()["data"]
    assert data["items"] == []
    assert data["pagination"]["total"] == 0


def test_ledger_shows_only_the_merchants_own_entries(test_client, fund) -> None:
    other = merchant_create(name="Other", email="other@example.com")
    other_wallet = other.merchant.wallets.get(mode=Mode.TEST)
    fund(other_wallet, "50.00")
    assert test_client.get(LEDGER_URL).json()["data"]["items"] == []


@pytest.mark.parametrize(
    ("params", "field"), [({"limit": 0}, "limit"), ({"limit": 201}, "limit"), ({"page": 0}, "page")]
)
def test_ledger_rejects_bad_page_parameters(test_client, params, field: str) -> None:
    assert _error(test_client.get(LEDGER_URL, params), 400).startswith(f"{field}:")


def test_ledger_query_count_does_not_grow_with_entries(
    test_client, test_wallet, fund, django_assert_num_queries
) -> None:
    for _ in range(5):
        fund(test_wallet, "1.00")
    with django_assert_num_queries(4):  # key, wallet, count, page
        response = test_client.get(LEDGER_URL)
    assert len(response.json()["data"]["items"]) == 5
    for _ in range(10):
        fund(test_wallet, "1.00")
    with django_assert_num_queries(4):
        response = test_client.get(LEDGER_URL)
    assert len(response.json()["data"]["items"]) == 15


# --- Quote -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "fee", "total"),
    [
        ("0.01", "10.00", "10.01"),
        ("5000", "10.00", "5010.00"),
        ("5000.00", "10.00", "5010.00"),
        ("5000.01", "25.00", "5025.01"),
        ("50000.00", "25.00", "50025.00"),
        ("50000.01", "50.00", "50050.01"),
        ("1000000", "50.00", "1000050.00"),
    ],
)
def test_quote_applies_the_fee_schedule(test_client, amount, fee, total) -> None:
    response = test_client.post(QUOTE_URL, {"amount": amount}, format="json")
    body = response.json()
    assert response.status_code == 200
    assert body["message"] == "Fee calculated successfully"
    assert body["data"] == {
        "amount": str(Decimal(amount).quantize(Decimal("0.01"))),
        "fee_amount": fee,
        "total_debit_amount": total,
        "currency": "NGN",
    }


def test_quote_accepts_explicit_ngn_and_reserves_nothing(test_client, test_wallet, fund) -> None:
    fund(test_wallet, "100.00")
    response = test_client.post(QUOTE_URL, {"amount": "50.00", "currency": "NGN"}, format="json")
    assert response.status_code == 200
    test_wallet.refresh_from_db()
    assert test_wallet.reserved_balance == Decimal("0.00")
    assert LedgerEntry.objects.filter(wallet=test_wallet).count() == 1


@pytest.mark.parametrize("currency", ["USD", "ngn", "", "NGN "])
def test_quote_refuses_other_currencies(test_client, currency: str) -> None:
    response = test_client.post(QUOTE_URL, {"amount": "50.00", "currency": currency}, format="json")
    assert _error(response, 400) == "Only NGN payouts are supported"


@pytest.mark.parametrize(
    "amount",
    [
        "0",
        "0.00",
        "-5",
        "1e3",
        "NaN",
        "Infinity",
        "10.001",
        " 10",
        "010",
        "١٠",
        100,
        10.5,
        None,
        "",
    ],
)
def test_quote_rejects_bad_amounts(test_client, amount) -> None:
    response = test_client.post(QUOTE_URL, {"amount": amount}, format="json")
    assert _error(response, 400).startswith("amount:")


def test_quote_requires_amount(test_client) -> None:
    assert _error(test_client.post(QUOTE_URL, {}, format="json"), 400).startswith("amount:")


def test_quote_rejects_unknown_fields(test_client) -> None:
    response = test_client.post(QUOTE_URL, {"amount": "5.00", "fee": "0"}, format="json")
    assert _error(response, 400) == "fee: is not an accepted field"


def test_quote_rejects_malformed_json(test_client) -> None:
    response = test_client.post(QUOTE_URL, data="{", content_type="application/json")
    assert _error(response, 400) == "Malformed JSON body"


# --- Banks -------------------------------------------------------------------------------------


def test_bank_list_returns_active_banks_with_codes(test_client) -> None:
    response = test_client.get(BANKS_URL)
    body = response.json()
    assert response.status_code == 200
    banks = {bank["bank_code"]: bank for bank in body["data"]}
    assert len(banks) >= 20
    assert set(banks["058"]) == {"id", "name", "bank_code", "institution_code"}
    assert banks["058"]["institution_code"] == "000013"
    assert banks["044"]["name"] == "Access Bank"
    assert "030" not in banks  # Heritage Bank: licence revoked, inactive


def test_bank_list_is_cached_and_refreshed_when_a_bank_changes(
    test_client, django_assert_num_queries
) -> None:
    test_client.get(BANKS_URL)
    with django_assert_num_queries(1):  # the key lookup only
        test_client.get(BANKS_URL)
    bank = Bank.objects.get(bank_code="058")
    bank.is_active = False
    bank.save()
    codes = {bank["bank_code"] for bank in test_client.get(BANKS_URL).json()["data"]}
    assert "058" not in codes


# --- Name enquiry ------------------------------------------------------------------------------


def test_name_enquiry_resolves_in_test_mode(test_client) -> None:
    response = test_client.post(
        NAME_ENQUIRY_URL, {"account_number": "0123456789", "bank_code": "058"}, format="json"
    )
    body = response.json()
    assert response.status_code == 200
    assert body["statusCode"] == 200
    data = body["data"]
    assert set(data) == {"account_name", "account_number", "bank_code", "reference"}
    assert data["account_number"] == "0123456789"
    assert data["bank_code"] == "058"
    assert data["account_name"]
    assert data["reference"].startswith("NE-")
    again = test_client.post(
        NAME_ENQUIRY_URL, {"account_number": "0123456789", "bank_code": "058"}, format="json"
    ).json()["data"]
    assert again["account_name"] == data["account_name"]
    assert again["reference"] != data["reference"]


@pytest.mark.parametrize(
    ("payload", "status", "message"),
    [
        (
            {"account_number": "01234abc89", "bank_code": "058"},
            400,
            "Account number must contain only digits",
        ),
        (
            {"account_number": "０１２３４５６７８９", "bank_code": "058"},
            400,
            "Account number must contain only digits",
        ),
        (
            {"account_number": "", "bank_code": "058"},
            400,
            "Account number must contain only digits",
        ),
        (
            {"account_number": "012345678", "bank_code": "058"},
            400,
            "account_number: must be exactly 10 digits",
        ),
        (
            {"account_number": "01234567890", "bank_code": "058"},
            400,
            "account_number: must be exactly 10 digits",
        ),
        (
            {"account_number": "0123456789", "bank_code": "999"},
            400,
            "Beneficiary bank could not be resolved",
        ),
        (
            {"account_number": "0123456789", "bank_code": "030"},
            400,
            "Beneficiary bank could not be resolved",
        ),
        (
            {"account_number": "0000000000", "bank_code": "058"},
            400,
            "Beneficiary account name could not be resolved",
        ),
        (
            {"account_number": "0000000009", "bank_code": "058"},
            503,
            "Name enquiry temporarily unavailable, retry after a short delay",
        ),
        (
            {"account_number": 123456789, "bank_code": "058"},
            400,
            "account_number: must be a string",
        ),
        ({"bank_code": "058"}, 400, "account_number: This field is required."),
        ({"account_number": "0123456789"}, 400, "bank_code: This field is required."),
        (
            {"account_number": "0123456789", "bank_code": "058", "account_name": "X"},
            400,
            "account_name: is not an accepted field",
        ),
    ],
)
def test_name_enquiry_errors(test_client, payload, status: int, message: str) -> None:
    response = test_client.post(NAME_ENQUIRY_URL, payload, format="json")
    assert _error(response, status) == message


def test_name_enquiry_unavailable_sets_retry_after(test_client) -> None:
    response = test_client.post(
        NAME_ENQUIRY_URL, {"account_number": "0000000009", "bank_code": "058"}, format="json"
    )
    assert response.status_code == 503
    assert response["Retry-After"] == "5"


# --- Test-mode funding helper ------------------------------------------------------------------


def test_fund_helper_credits_the_test_wallet(test_client, test_wallet) -> None:
    response = test_client.post(FUND_URL, {"amount": "2500.50"}, format="json")
    body = response.json()
    assert response.status_code == 200
    assert body["data"]["amount"] == "2500.50"
    assert body["data"]["available_balance"] == "2500.50"
    assert body["data"]["duplicate"] is False
    assert body["data"]["account_number"] == test_wallet.static_account_number
    test_wallet.refresh_from_db()
    assert test_wallet.available_balance == Decimal("2500.50")
    transfer = FundingTransfer.objects.get()
    assert transfer.source == "test_helper"
    assert transfer.provider_reference == body["data"]["reference"]


def test_fund_helper_replay_with_same_reference_credits_once(test_client, test_wallet) -> None:
    payload = {"amount": "10.00", "reference": "SIM-1"}
    first = test_client.post(FUND_URL, payload, format="json").json()["data"]
    second = test_client.post(FUND_URL, payload, format="json").json()["data"]
    assert (first["duplicate"], second["duplicate"]) == (False, True)
    test_wallet.refresh_from_db()
    assert test_wallet.available_balance == Decimal("10.00")


def test_fund_helper_is_not_found_with_a_live_key(live_client, live_wallet) -> None:
    response = live_client.post(FUND_URL, {"amount": "2500.50"}, format="json")
    assert _error(response, 404) == "Route not found"
    live_wallet.refresh_from_db()
    assert live_wallet.available_balance == Decimal("0.00")


@pytest.mark.parametrize("amount", ["0", "-1", "1e3", "1.001", 5])
def test_fund_helper_validates_amount(test_client, test_wallet, amount) -> None:
    response = test_client.post(FUND_URL, {"amount": amount}, format="json")
    assert _error(response, 400).startswith("amount:")
    assert not FundingTransfer.objects.exists()


# --- Provider funding notifications -------------------------------------------------------------


def _notification(wallet, **overrides):
    payload = {
        "reference": "PRV-TRF-0001",
        "account_number": wallet.static_account_number,
        "amount": "15000.00",
        "currency": "NGN",
        "sender_account_name": "CHIOMA OKAFOR",
        "sender_account_number": "0123456789",
        "sender_bank_name": "Guaranty Trust Bank",
        "narration": "Top up",
    }
    payload.update(overrides)
    return payload


def test_signed_notification_credits_the_receiving_wallet(post_funding, live_wallet) -> None:
    response = post_funding(_notification(live_wallet))
    body = response.json()
    assert response.status_code == 200, body
    assert body["message"] == "Funding credited"
    assert body["data"]["duplicate"] is False
    live_wallet.refresh_from_db()
    assert live_wallet.available_balance == Decimal("15000.00")
    transfer = FundingTransfer.objects.get()
    assert transfer.sender_account_name == "CHIOMA OKAFOR"
    assert transfer.raw_payload["narration"] == "Top up"


def test_replayed_notification_credits_once(post_funding, live_wallet) -> None:
    post_funding(_notification(live_wallet))
    replay = post_funding(_notification(live_wallet))
    assert replay.status_code == 200
    assert replay.json()["data"]["duplicate"] is True
    assert replay.json()["message"] == "Funding already credited"
    live_wallet.refresh_from_db()
    assert live_wallet.available_balance == Decimal("15000.00")
    assert LedgerEntry.objects.filter(wallet=live_wallet).count() == 1


@pytest.mark.parametrize("signature", ["", "0" * 128, "not-hex"])
def test_notification_with_bad_or_missing_signature_is_refused(
    post_funding, live_wallet, signature: str, caplog
) -> None:
    response = post_funding(_notification(live_wallet), signature=signature)
    assert _error(response, 401) == "Invalid or missing provider signature"
    assert not FundingTransfer.objects.exists()
    assert "funding notification refused" in caplog.text


def test_notification_signed_with_another_secret_is_refused(post_funding, live_wallet) -> None:
    import hashlib
    import hmac
    import json

    payload = _notification(live_wallet)
    forged = hmac.new(b"wrong", json.dumps(payload).encode(), hashlib.sha512).hexdigest()
    response = post_funding(payload, signature=forged)
    assert _error(response, 401) == "Invalid or missing provider signature"
    live_wallet.refresh_from_db()
    assert live_wallet.available_balance == Decimal("0.00")


def test_notification_body_changed_after_signing_is_refused(
    post_funding, live_wallet, webhook_secret
) -> None:
    import json

    from wallets.api.views import funding_signature_compute

    signed = json.dumps(_notification(live_wallet)).encode()
    tampered = json.dumps(_notification(live_wallet, amount="99999.00")).encode()
    signature = funding_signature_compute(signed, secret=webhook_secret)
    response = post_funding(tampered, signature=signature)
    assert response.status_code == 401
    assert not FundingTransfer.objects.exists()


def test_notification_is_refused_when_no_secret_is_configured(
    post_funding, live_wallet, settings
) -> None:
    settings.FUNDING_WEBHOOK_SECRET = ""
    response = post_funding(_notification(live_wallet, reference="PRV-X"), signature="abc")
    assert response.status_code == 401
    assert not FundingTransfer.objects.filter(provider_reference="PRV-X").exists()


def test_notification_for_unknown_account_is_not_found(post_funding, live_wallet) -> None:
    response = post_funding(_notification(live_wallet, account_number="1111111111"))
    assert response.status_code == 404
    assert not FundingTransfer.objects.exists()


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"amount": "0"}, "amount"),
        ({"amount": 100}, "amount"),
        ({"amount": "1e5"}, "amount"),
        ({"account_number": "12345"}, "account_number"),
        ({"account_number": "12345abcde"}, "account_number"),
        ({"reference": ""}, "reference"),
    ],
)
def test_notification_with_invalid_fields_is_refused(post_funding, live_wallet, overrides, field):
    response = post_funding(_notification(live_wallet, **overrides))
    assert _error(response, 400).startswith(f"{field}:")
    assert not FundingTransfer.objects.exists()


def test_notification_in_another_currency_is_refused(post_funding, live_wallet) -> None:
    response = post_funding(_notification(live_wallet, currency="USD"))
    assert response.status_code == 400
    assert not FundingTransfer.objects.exists()


def test_notification_with_malformed_json_is_refused(post_funding) -> None:
    response = post_funding(b"{not json")
    assert _error(response, 400) == "Malformed JSON body"


def test_a_notification_past_the_wallet_limit_is_a_400_naming_the_amount(
    post_funding, live_wallet
) -> None:
    from core.money import MAX_WALLET_BALANCE
    from wallets.models import Wallet

    Wallet.objects.filter(pk=live_wallet.pk).update(available_balance=MAX_WALLET_BALANCE)
    response = post_funding(_notification(live_wallet, amount="0.01"))
    assert _error(response, 400).startswith("amount: the wallet balance would exceed its limit")
    assert not FundingTransfer.objects.exists()
    Wallet.objects.filter(pk=live_wallet.pk).update(available_balance=Decimal("0.00"))
    assert post_funding(_notification(live_wallet)).status_code == 200


@pytest.mark.parametrize("amount", ["1000000000000.01", "9999999999999999.99"])
def test_a_notification_above_the_amount_limit_is_a_400(post_funding, live_wallet, amount) -> None:
    response = post_funding(_notification(live_wallet, amount=amount))
    assert "must not exceed 1000000000000.00" in _error(response, 400)
    assert not FundingTransfer.objects.exists()


# --- Test and live funding references never meet ----------------------------------------------


def _fund_helper(client: APIClient, reference: str, amount: str = "10.00") -> Any:
    return client.post(FUND_URL, {"amount": amount, "reference": reference}, format="json")


def _helper_answer(response: Any) -> tuple[int, str, dict[str, Any]]:
    """What a merchant learns from the helper, without the per-call values."""
    body = response.json()
    data = {
        key: value
        for key, value in (body["data"] or {}).items()
        if key not in ("credited_at", "account_number")
    }
    return response.status_code, body["message"], data


def test_a_test_helper_reference_never_blocks_the_live_notification_with_it(
    test_client, post_funding, live_wallet
) -> None:
    """The helper used to claim the reference across modes: the live notification carrying it
    then answered 409 for ever and the money was never credited."""
    assert _fund_helper(test_client, "PRV-TRF-0001").status_code == 200
    response = post_funding(_notification(live_wallet, reference="PRV-TRF-0001"))
    body = response.json()
    assert response.status_code == 200, body
    assert body["data"]["duplicate"] is False
    live_wallet.refresh_from_db()
    assert live_wallet.available_balance == Decimal("15000.00")
    assert set(FundingTransfer.objects.values_list("mode", flat=True)) == {"test", "live"}


def test_the_test_helper_answers_alike_whether_or_not_live_holds_the_reference(
    test_client, post_funding, live_wallet, test_wallet
) -> None:
    """The helper used to answer 409 for a reference the live mode had credited: it revealed
    live references."""
    post_funding(_notification(live_wallet, reference="PRV-TRF-LIVE"))
    held_by_live = _helper_answer(_fund_helper(test_client, "PRV-TRF-LIVE"))
    unknown = _helper_answer(_fund_helper(test_client, "PRV-TRF-NEW"))
    assert held_by_live[0] == unknown[0] == 200
    assert held_by_live[1] == unknown[1] == "Test wallet funded"
    assert held_by_live[2]["duplicate"] is unknown[2]["duplicate"] is False
    live_wallet.refresh_from_db()
    assert live_wallet.available_balance == Decimal("15000.00")


def test_the_test_helper_answers_alike_whether_or_not_another_merchant_holds_the_reference(
    test_client, client_for, test_wallet
) -> None:
    other = merchant_create(name="Other Shop", email="other@example.com")
    other_client = client_for(other.test_key.plaintext)
    assert _fund_helper(other_client, "SHARED-REF", amount="99.00").status_code == 200
    held_by_other = _fund_helper(test_client, "SHARED-REF")
    assert held_by_other.status_code == 200, held_by_other.json()
    assert held_by_other.json()["data"]["duplicate"] is False
    test_wallet.refresh_from_db()
    assert test_wallet.available_balance == Decimal("10.00")
    replay = _fund_helper(test_client, "SHARED-REF", amount="11.00")
    assert _error(replay, 409)  # the merchant's own reference, another amount


def test_a_live_reference_credits_one_live_wallet_only(post_funding, live_wallet) -> None:
    other = merchant_create(name="Other Shop", email="other@example.com")
    other_live = wallet_get(merchant=other.merchant, mode=Mode.LIVE)
    post_funding(_notification(live_wallet, reference="PRV-ONCE"))
    response = post_funding(_notification(other_live, reference="PRV-ONCE"))
    assert _error(response, 409)
    other_live.refresh_from_db()
    assert other_live.available_balance == Decimal("0.00")


# --- Hostile funding notifications --------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"note": "a\x00b"}, "note: Null characters are not allowed."),
        ({"meta": {"payer": ["ok", "x\x00"]}}, "meta.payer[1]: Null characters are not allowed."),
        ({"note": "a\ud800b"}, "note: must be valid Unicode text"),
        ({"note\x00": "x"}, "request body: field names must be valid Unicode text"),
        ({"note\udc80": "x"}, "request body: field names must be valid Unicode text"),
    ],
)
def test_unstorable_text_in_a_notification_is_a_400_naming_it(
    post_funding, live_wallet, extra: dict, message: str
) -> None:
    """A NUL in an extra field reached the stored raw payload, which PostgreSQL's jsonb
    refuses: a 500."""
    body = json.dumps({**_notification(live_wallet), **extra}).encode()
    assert _error(post_funding(body), 400).startswith(message)
    assert not FundingTransfer.objects.exists()
    live_wallet.refresh_from_db()
    assert live_wallet.available_balance == Decimal("0.00")


@pytest.mark.parametrize("depth", [33, 2000, 20_000])
def test_a_notification_nested_too_deep_is_a_400(post_funding, live_wallet, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    body = json.dumps(_notification(live_wallet))[:-1] + f', "extra": {nested}}}'
    message = _error(post_funding(body.encode()), 400)
    assert message == "Malformed JSON body: nested more than 32 levels deep"
    assert not FundingTransfer.objects.exists()


@pytest.mark.parametrize("number", ["1e999", "-1e400", "NaN", "Infinity"])
def test_a_notification_with_a_non_finite_number_is_malformed(
    post_funding, live_wallet, number: str
) -> None:
    body = json.dumps(_notification(live_wallet))[:-1] + f', "extra": {number}}}'
    assert _error(post_funding(body.encode()), 400) == "Malformed JSON body"
    assert not FundingTransfer.objects.exists()


@pytest.mark.parametrize(
    "signature", ["é" * 128, "\x00" * 128, "ｆ" * 128, "a" * 127 + "\x00", "Ÿ", " "]
)
def test_a_non_ascii_or_nul_signature_is_refused(post_funding, live_wallet, signature) -> None:
    response = post_funding(_notification(live_wallet), signature=signature)
    assert response.status_code in (400, 401)
    assert response.json()["data"] is None
    assert not FundingTransfer.objects.exists()
