"""Initialize, status check, search and the test-mode completion helper."""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client
from rest_framework.test import APIClient

from collections_app.models import (
    CollectionTransaction,
    Customer,
    PaymentStatus,
    TransactionAttempt,
)
from merchants.models import Merchant, Mode
from merchants.services import secret_key_rotate
from payment_items.models import CatalogueStatus, PaymentItem
from tests.collections_app.conftest import initialize_payload
from tests.collections_app.factories import CollectionTransactionFactory
from tests.collections_app.helpers import paystack_mock_initialize
from tests.payment_items.factories import (
    PaymentItemFactory,
    SubaccountFactory,
    TransactionSplitFactory,
    TransactionSplitShareFactory,
)

pytestmark = pytest.mark.django_db

INITIALIZE_URL = "/api/v1/transactions/in/initialize"
INITIALIZE_FIELDS = {
    "payment_status",
    "authorization_url",
    "amount",
    "amount_to_be_paid",
    "transaction_fee",
    "reference",
    "client_reference",
}
PAYMENT_ITEM_DETAIL_FIELDS = {
    "id",
    "core_service_business_id",
    "name",
    "description",
    "amount",
    "form_data",
    "is_enumerated_data",
    "transaction_split_code",
    "category",
    "category_details",
    "sub_category",
    "sub_category_details",
    "status",
    "is_deleted",
    "allow_quick_print",
    "can_edit_item",
    "show_on_agent_app",
    "created_at",
    "updated_at",
    "delete_at",
}
SEARCH_FIELDS = {
    "id",
    "reference",
    "client_reference",
    "authorization_url",
    "amount",
    "amount_paid",
    "amount_refunded",  # extension: refunds pending or processed
    "amount_to_be_paid",
    "transaction_fee",
    "payment_status",
    "payment_channel",
    "payment_type",
    "paid_at",
    "created_at",
    "initiation_time",
    "gateway_reference",
    "gateway_used",
    "no_of_attempts",
    "transaction_split_code",
    "transaction_split_breakdown",
    "payment_item",
    "customer",
    "business",
    "meta_data",
    "core_service_business_id",
    "business_merchant_id",
    "customer_id",
    "customer_tag",
    "customer_email",
    "customer_phone_number",
}
FORBIDDEN = {"status": False, "message": "Forbidden resource", "data": None, "statusCode": 403}


def status_url(reference: str) -> str:
    return f"/api/v1/transactions/in/check-transaction-status/{reference}"


def search_url(reference: str) -> str:
    return f"/api/v1/transactions/in/search-transaction/{reference}"


def complete_url(reference: str) -> str:
    return f"/api/v1/test-helpers/transactions/{reference}/complete"


def post(client: APIClient, payload: Any):  # type: ignore[no-untyped-def]
    return client.post(INITIALIZE_URL, payload, format="json")


def error(response, status_code: int) -> str:  # type: ignore[no-untyped-def]
    assert response.status_code == status_code, response.content
    body = response.json()
    assert body["status"] is False
    assert body["data"] is None
    assert body["statusCode"] == status_code
    return body["message"]


def assert_nothing_written() -> None:
    assert not CollectionTransaction.objects.exists()
    assert not Customer.objects.exists()


# --- initialize: success -----------------------------------------------------------------------


def test_card_initialize_returns_the_seven_fields(
    test_client: APIClient, fixed_item: PaymentItem, settings
) -> None:
    response = post(test_client, initialize_payload(fixed_item))
    assert response.status_code == 200
    body = response.json()
    assert body["status"] is True
    assert body["statusCode"] == 200
    assert body["message"] == "Transaction initialized"
    data = body["data"]
    assert set(data) == INITIALIZE_FIELDS
    assert data["payment_status"] == "pending"
    assert re.fullmatch(r"TXN_[A-Z0-9]{20}", data["reference"])
    assert data["authorization_url"] == f"{settings.CHECKOUT_BASE_URL}/checkout/{data['reference']}"
    assert data["amount"] == "7000.00"
    assert data["transaction_fee"] == "205.00"
    assert data["amount_to_be_paid"] == "7205.00"
    assert data["client_reference"] == "order-1001"


def test_bank_initialize_gets_a_checkout_url(test_client: APIClient, fixed_item) -> None:
    data = post(test_client, initialize_payload(fixed_item, channel="bank")).json()["data"]
    assert set(data) == INITIALIZE_FIELDS
    assert data["authorization_url"].endswith(f"/checkout/{data['reference']}")


def test_bank_transfer_initialize_gives_payment_instructions(
    test_client: APIClient, fixed_item, settings
) -> None:
    response = post(test_client, initialize_payload(fixed_item, channel="bank-transfer"))
    assert response.status_code == 200
    data = response.json()["data"]
    assert set(data) == INITIALIZE_FIELDS | {"payment_instructions"}
    assert data["authorization_url"] is None
    instructions = data["payment_instructions"]
    assert set(instructions) == {"account_number", "bank_name", "account_name", "amount"}
    assert re.fullmatch(r"[0-9]{10}", instructions["account_number"])
    assert instructions["bank_name"] == settings.COLLECTION_VIRTUAL_ACCOUNT_BANK_NAME
    assert instructions["account_name"] == fixed_item.business.business_name
    assert instructions["amount"] == "7205.00"


@pytest.mark.parametrize("amount", ["7000", "7000.0", "7000.00"])
def test_fixed_amount_compares_as_a_decimal(
    test_client: APIClient, fixed_item, amount: str
) -> None:
    response = post(test_client, initialize_payload(fixed_item, amount=amount))
    assert response.status_code == 200
    assert response.json()["data"]["amount"] == "7000.00"


@pytest.mark.parametrize(
    ("amount", "fee", "total"),
    [
        ("1000", "15.00", "1015.00"),
        ("2500.00", "137.50", "2637.50"),
        ("500000", "2000.00", "502000.00"),
    ],
)
def test_variable_item_accepts_any_positive_amount(
    test_client: APIClient, variable_item, amount: str, fee: str, total: str
) -> None:
    data = post(test_client, initialize_payload(variable_item, amount=amount)).json()["data"]
    assert (data["transaction_fee"], data["amount_to_be_paid"]) == (fee, total)


@pytest.mark.parametrize("amount", ["1000000000000.01", "9999999999999999.99"])
def test_an_amount_above_the_limit_is_a_400_naming_it(
    test_client: APIClient, variable_item, amount: str
) -> None:
    response = post(test_client, initialize_payload(variable_item, amount=amount))
    body = response.json()
    assert response.status_code == 400, body
    assert body["message"] == "amount: must not exceed 1000000000000.00"
    assert CollectionTransaction.objects.count() == 0


def test_payment_item_id_may_be_an_integer(test_client: APIClient, fixed_item) -> None:
    response = post(test_client, initialize_payload(fixed_item, payment_item_id=fixed_item.pk))
    assert response.status_code == 200


def test_identical_repeat_returns_the_original_transaction(
    test_client: APIClient, fixed_item
) -> None:
    first = post(test_client, initialize_payload(fixed_item)).json()["data"]
    response = post(test_client, initialize_payload(fixed_item))
    assert response.status_code == 200
    assert response.json()["message"] == "Transaction already initialized"
    assert response.json()["data"] == first
    assert CollectionTransaction.objects.count() == 1


def test_repeat_after_payment_shows_the_current_status(test_client: APIClient, fixed_item) -> None:
    first = post(test_client, initialize_payload(fixed_item)).json()["data"]
    test_client.post(complete_url(first["reference"]), {"outcome": "paid"}, format="json")
    again = post(test_client, initialize_payload(fixed_item)).json()["data"]
    assert again["reference"] == first["reference"]
    assert again["payment_status"] == "paid"


def test_reused_reference_with_a_different_body_is_409(test_client: APIClient, fixed_item) -> None:
    post(test_client, initialize_payload(fixed_item))
    response = post(test_client, initialize_payload(fixed_item, channel="bank"))
    assert error(response, 409) == (
        "transaction_reference has already been used for a different transaction"
    )
    assert CollectionTransaction.objects.count() == 1


def test_allow_private_setting_accepts_a_local_http_callback(
    test_client: APIClient, fixed_item, settings
) -> None:
    settings.CALLBACK_URL_ALLOW_PRIVATE = True
    payload = initialize_payload(fixed_item, callback_url="http://127.0.0.1:9000/callback")
    assert post(test_client, payload).status_code == 200


def test_allow_private_setting_still_needs_https_for_public_hosts(
    test_client: APIClient, fixed_item, settings
) -> None:
    settings.CALLBACK_URL_ALLOW_PRIVATE = True
    payload = initialize_payload(fixed_item, callback_url="http://merchant.example.com/cb")
    assert error(post(test_client, payload), 400) == "callback_url: must be an absolute https URL"


def test_ipv6_public_callback_host_is_accepted(test_client: APIClient, fixed_item) -> None:
    payload = initialize_payload(fixed_item, callback_url="https://shop.example.org/cb")
    assert post(test_client, payload).status_code == 200


# --- initialize: validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    "field",
    [
        "callback_url",
        "payment_item_id",
        "transaction_reference",
        "channel",
        "amount",
        "customer_info",
    ],
)
def test_required_fields(test_client: APIClient, fixed_item, field: str) -> None:
    payload = initialize_payload(fixed_item)
    del payload[field]
    assert error(post(test_client, payload), 400) == f"{field}: This field is required."
    assert_nothing_written()


@pytest.mark.parametrize("field", ["email", "phone_number", "first_name", "last_name"])
def test_required_customer_fields(test_client: APIClient, fixed_item, field: str) -> None:
    payload = initialize_payload(fixed_item)
    del payload["customer_info"][field]
    message = error(post(test_client, payload), 400)
    assert message == f"customer_info.{field}: This field is required."
    assert_nothing_written()


@pytest.mark.parametrize(
    ("customer_info", "message"),
    [
        ({"email": "not-an-email"}, "customer_info.email: must be a valid email address"),
        ({"email": 42}, "customer_info.email: must be a valid email address"),
        ({"first_name": 123}, "customer_info.first_name: must be a string"),
        ({"last_name": None}, "customer_info.last_name: This field may not be null."),
        ({"first_name": ""}, "customer_info.first_name: This field may not be blank."),
        ({"phone_number": 8031234567}, "customer_info.phone_number: must be a string"),
        (
            {"phone_number": "0803-123"},
            "customer_info.phone_number: must be 7 to 15 digits, optionally starting with +",
        ),
        ({"first_name": "x" * 101}, "customer_info.first_name: Ensure this field has no more"),
        ({"nickname": "Ada"}, "customer_info.nickname: is not an accepted field"),
    ],
)
def test_malformed_customer_info(
    test_client: APIClient, fixed_item, customer_info: dict[str, Any], message: str
) -> None:
    payload = initialize_payload(fixed_item)
    payload["customer_info"].update(customer_info)
    assert error(post(test_client, payload), 400).startswith(message)
    assert_nothing_written()


@pytest.mark.parametrize("value", ["ada@example.com", ["a"], 5])
def test_customer_info_must_be_an_object(test_client: APIClient, fixed_item, value: Any) -> None:
    payload = initialize_payload(fixed_item, customer_info=value)
    assert error(post(test_client, payload), 400).startswith("customer_info: ")


@pytest.mark.parametrize(
    "value", ["abc", "-1", "0", "1.5", "", " 1", "１２", True, None, 0, -3, 2.0]
)
def test_payment_item_id_must_be_numeric(test_client: APIClient, fixed_item, value: Any) -> None:
    message = error(post(test_client, initialize_payload(fixed_item, payment_item_id=value)), 400)
    assert message.startswith("payment_item_id: ")


@pytest.mark.parametrize("value", ["wallet", "CARD", "", None, 1])
def test_channel_must_be_bank_card_or_bank_transfer(
    test_client: APIClient, fixed_item, value: Any
) -> None:
    message = error(post(test_client, initialize_payload(fixed_item, channel=value)), 400)
    assert message.startswith("channel: ")
    if value not in ("", None):
        assert message == "channel: must be one of bank, card, bank-transfer"


@pytest.mark.parametrize(
    "value", ["0", "0.00", "-7000", "7e3", "NaN", "Infinity", " 7000", "7000.001", 7000, "٧٠٠٠"]
)
def test_amount_must_be_a_positive_decimal_string(
    test_client: APIClient, fixed_item, value: Any
) -> None:
    message = error(post(test_client, initialize_payload(fixed_item, amount=value)), 400)
    assert message.startswith("amount: must be a positive decimal string")
    assert_nothing_written()


def test_fixed_amount_mismatch(test_client: APIClient, fixed_item) -> None:
    payload = initialize_payload(fixed_item, amount="7000.01")
    assert error(post(test_client, payload), 400) == "Payment amount does not match"
    assert_nothing_written()


@pytest.mark.parametrize("case", ["missing", "inactive", "deleted", "other_merchant", "live"])
def test_payment_item_not_found(
    test_client: APIClient, merchant: Merchant, fee_schedule, case: str
) -> None:
    item_id = {
        "missing": lambda: 987654321,
        "inactive": lambda: (
            PaymentItemFactory(merchant=merchant, status=CatalogueStatus.INACTIVE).pk
        ),
        "deleted": lambda: PaymentItemFactory(merchant=merchant, is_deleted=True).pk,
        "other_merchant": lambda: PaymentItemFactory().pk,
        "live": lambda: PaymentItemFactory(merchant=merchant, mode=Mode.LIVE).pk,
    }[case]()
    payload = initialize_payload(PaymentItemFactory.build(pk=item_id), amount="7000.00")
    assert error(post(test_client, payload), 400) == "Payment item not found"
    assert_nothing_written()


def test_huge_payment_item_id_is_not_found(test_client: APIClient, fixed_item) -> None:
    payload = initialize_payload(fixed_item, payment_item_id="999999999999999999")
    assert error(post(test_client, payload), 400) == "Payment item not found"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://merchant.example.com/cb", "must be an absolute https URL"),
        ("ftp://merchant.example.com/cb", "must be an absolute https URL"),
        ("/relative/callback", "must be an absolute https URL"),
        ("https://localhost/cb", "must not point to a loopback address (127.0.0.1)"),
        ("https://127.0.0.1/cb", "must not point to a loopback address (127.0.0.1)"),
        ("https://[::1]/cb", "must not point to a loopback address (::1)"),
        ("https://10.0.0.1/cb", "must not point to a private address (10.0.0.1)"),
        ("https://192.168.0.10/cb", "must not point to a private address"),
        ("https://169.254.169.254/latest", "must not point to a link-local address"),
        ("https://100.64.0.1/cb", "must not point to a shared"),
        ("https://[::ffff:10.0.0.1]/cb", "must not point to a IPv4-mapped IPv6 address"),
        ("https://2130706433/cb", "must not use an IPv4 address in non-standard notation"),
        ("https://0x7f000001/cb", "must not use an IPv4 address in non-standard notation"),
        ("https://intranet.example.com/cb", "must not point to a private address (10.20.30.40)"),
        ("https://metadata.example.com/cb", "must not point to a link-local address"),
        ("https://split-horizon.example.com/cb", "must not point to a loopback address"),
        ("https://no-such-host.example.com/cb", "host no-such-host.example.com could not be"),
        ("https://user:pw@merchant.example.com/cb", "must not contain user information"),
    ],
)
def test_callback_url_must_be_public_https(
    test_client: APIClient, fixed_item, url: str, message: str
) -> None:
    response = post(test_client, initialize_payload(fixed_item, callback_url=url))
    assert error(response, 400).startswith(f"callback_url: {message}")
    assert_nothing_written()


@pytest.mark.parametrize("value", [None, 5, ["https://merchant.example.com"], ""])
def test_callback_url_must_be_a_string(test_client: APIClient, fixed_item, value: Any) -> None:
    response = post(test_client, initialize_payload(fixed_item, callback_url=value))
    assert error(response, 400).startswith("callback_url: ")


@pytest.mark.parametrize("value", ["", " ", "has space", "x" * 101, 12345, None, "tab\tref"])
def test_transaction_reference_rules(test_client: APIClient, fixed_item, value: Any) -> None:
    response = post(test_client, initialize_payload(fixed_item, transaction_reference=value))
    assert error(response, 400).startswith("transaction_reference: ")


def test_unknown_field_is_rejected(test_client: APIClient, fixed_item) -> None:
    payload = initialize_payload(fixed_item, currency="NGN")
    assert error(post(test_client, payload), 400) == "currency: is not an accepted field"


@pytest.mark.parametrize("body", ["[]", "null", '"text"', "{bad json"])
def test_body_must_be_a_json_object(test_client: APIClient, fixed_item, body: str) -> None:
    response = test_client.post(INITIALIZE_URL, body, content_type="application/json")
    assert error(response, 400)


# --- initialize: subaccounts -------------------------------------------------------------------


@pytest.fixture
def two_subaccounts(merchant: Merchant):  # type: ignore[no-untyped-def]
    return SubaccountFactory(merchant=merchant), SubaccountFactory(merchant=merchant)


def test_subaccount_override_is_accepted(
    test_client: APIClient, fixed_item, two_subaccounts
) -> None:
    first, second = two_subaccounts
    payload = initialize_payload(
        fixed_item,
        subaccounts=[
            {"account_code": first.account_code, "amount": 5000},
            {"account_code": second.account_code, "amount": 2000},
        ],
    )
    response = post(test_client, payload)
    assert response.status_code == 200
    reference = response.json()["data"]["reference"]
    breakdown = test_client.get(search_url(reference)).json()["data"]["transaction_split_breakdown"]
    assert [(row["account_code"], row["share"]) for row in breakdown] == [
        (first.account_code, 5000),
        (second.account_code, 2000),
    ]


@pytest.mark.parametrize(
    ("subaccounts", "message"),
    [
        ("ACCT_x", "subaccounts: "),
        ([], "subaccounts: "),
        ([{"account_code": "{first}"}], "subaccounts[0].amount: This field is required."),
        ([{"amount": 7000}], "subaccounts[0].account_code: This field is required."),
        ([{"account_code": "{first}", "amount": "7000"}], "subaccounts[0].amount: must be an"),
        ([{"account_code": "{first}", "amount": 7000.5}], "subaccounts[0].amount: must be an"),
        ([{"account_code": "{first}", "amount": True}], "subaccounts[0].amount: must be an"),
        ([{"account_code": "{first}", "amount": 0}], "subaccounts[0].amount: Ensure this"),
        ([{"account_code": "{first}", "amount": -7000}], "subaccounts[0].amount: Ensure this"),
        ([{"account_code": 7, "amount": 7000}], "subaccounts[0].account_code: must be a string"),
        (
            [{"account_code": "{first}", "amount": 7000, "x": 1}],
            "subaccounts[0].x: is not an accepted field",
        ),
        ([{"account_code": "ACCT_unknown", "amount": 7000}], "subaccounts: unknown account_code"),
        (
            [
                {"account_code": "{first}", "amount": 3000},
                {"account_code": "{second}", "amount": 3000},
            ],
            "subaccounts: the amounts must sum to the transaction amount 7000.00"
            " (they sum to 6000.00)",
        ),
        (
            [
                {"account_code": "{first}", "amount": 3500},
                {"account_code": "{first}", "amount": 3500},
            ],
            "subaccounts: duplicate account_code",
        ),
    ],
)
def test_bad_subaccounts_are_rejected(
    test_client: APIClient, fixed_item, two_subaccounts, subaccounts: Any, message: str
) -> None:
    first, second = two_subaccounts
    if isinstance(subaccounts, list):
        subaccounts = [
            {
                key: (
                    value.format(first=first.account_code, second=second.account_code)
                    if isinstance(value, str)
                    else value
                )
                for key, value in entry.items()
            }
            for entry in subaccounts
        ]
    response = post(test_client, initialize_payload(fixed_item, subaccounts=subaccounts))
    assert error(response, 400).startswith(message)
    assert_nothing_written()


def test_another_merchants_subaccount_is_unknown(test_client: APIClient, fixed_item) -> None:
    foreign = SubaccountFactory()
    payload = initialize_payload(
        fixed_item, subaccounts=[{"account_code": foreign.account_code, "amount": 7000}]
    )
    message = error(post(test_client, payload), 400)
    assert message == f"subaccounts: unknown account_code {foreign.account_code}"


def test_fractional_amount_cannot_match_integer_subaccounts(
    test_client: APIClient, variable_item, two_subaccounts
) -> None:
    payload = initialize_payload(
        variable_item,
        amount="100.50",
        subaccounts=[{"account_code": two_subaccounts[0].account_code, "amount": 100}],
    )
    assert "must sum to the transaction amount 100.50" in error(post(test_client, payload), 400)


# --- status check ------------------------------------------------------------------------------


@pytest.fixture
def initialized(test_client: APIClient, fixed_item) -> dict[str, Any]:
    return post(test_client, initialize_payload(fixed_item)).json()["data"]


def test_status_check_shape(test_client: APIClient, initialized, fixed_item) -> None:
    response = test_client.get(status_url(initialized["reference"]))
    assert response.status_code == 200
    body = response.json()
    assert body["status"] is True
    data = body["data"]
    assert set(data) == {
        "reference",
        "payment_status",
        "amount",
        "payment_item",
        "customer",
        "business",
    }
    assert data["reference"] == initialized["reference"]
    assert data["payment_status"] == "pending"
    assert data["amount"] == "7000.00"
    assert set(data["payment_item"]) == PAYMENT_ITEM_DETAIL_FIELDS
    assert data["payment_item"]["id"] == fixed_item.pk
    assert "business_registration_type_id" in data["payment_item"]["sub_category_details"]
    customer = Customer.objects.get()
    assert data["customer"] == {
        "id": customer.pk,
        "customer_tag": customer.customer_tag,
        "first_name": "Ada",
        "last_name": "Obi",
    }
    assert data["business"] == {"business_name": fixed_item.business.business_name}


def test_status_check_runs_a_fixed_number_of_queries(
    test_client: APIClient, initialized, django_assert_num_queries
) -> None:
    with django_assert_num_queries(2):
        assert test_client.get(status_url(initialized["reference"])).status_code == 200


@pytest.mark.parametrize("case", ["unknown", "other_merchant", "other_mode", "too_long"])
def test_status_check_of_an_invisible_transaction_is_400(
    test_client: APIClient, merchant: Merchant, case: str
) -> None:
    reference = {
        "unknown": lambda: "TXN_DOESNOTEXIST000000",
        "other_merchant": lambda: CollectionTransactionFactory().reference,
        "other_mode": lambda: (
            CollectionTransactionFactory(merchant=merchant, mode=Mode.LIVE).reference
        ),
        "too_long": lambda: "T" * 300,
    }[case]()
    response = test_client.get(status_url(reference))
    assert response.status_code == 400
    assert response.json() == {
        "status": False,
        "message": "Transaction not found",
        "data": None,
        "statusCode": 400,
    }


@pytest.mark.parametrize("reference", ["TXN_\x00", "\x00", "ab\x00c", "TXN_\x1f", "TXN\x7f"])
@pytest.mark.parametrize("route", ["status", "search", "complete"])
def test_a_reference_holding_control_characters_is_not_found(
    test_client: APIClient, initialized, route: str, reference: str
) -> None:
    """A NUL in the reference reached PostgreSQL, which refuses it in a query: a 500."""
    url = {"status": status_url, "search": search_url, "complete": complete_url}[route]
    path = url(quote(reference, safe=""))
    if route == "complete":
        response = test_client.post(path, {"outcome": "paid"}, format="json")
    else:
        response = test_client.get(path)
    assert error(response, 404) == "Not found"
    assert TransactionAttempt.objects.count() == 0
    transaction = CollectionTransaction.objects.get(reference=initialized["reference"])
    assert transaction.payment_status == PaymentStatus.PENDING


@pytest.mark.parametrize("reference", ["TXN_\ud800", "TXN_\u202e", "TXN_" + "é" * 36, "%00"])
def test_status_and_search_of_an_odd_but_printable_reference_are_unknown(
    test_client: APIClient, initialized, reference: str
) -> None:
    path_reference = quote(reference, safe="", errors="surrogatepass")
    assert error(test_client.get(status_url(path_reference)), 400) == "Transaction not found"
    assert error(test_client.get(search_url(path_reference)), 404) == "Transaction not found"


# --- search ------------------------------------------------------------------------------------


def test_search_shape_of_a_pending_transaction(
    test_client: APIClient, initialized, fixed_item, merchant: Merchant
) -> None:
    response = test_client.get(search_url(initialized["reference"]))
    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Transaction found"
    data = body["data"]
    assert set(data) == SEARCH_FIELDS
    stored = CollectionTransaction.objects.get()
    customer = stored.customer
    assert data["id"] == stored.pk
    assert data["reference"] == initialized["reference"]
    assert data["client_reference"] == "order-1001"
    assert data["authorization_url"] == initialized["authorization_url"]
    assert data["amount"] == "7000.00"
    assert data["amount_paid"] == "0.00"
    assert data["amount_to_be_paid"] == "7205.00"
    assert data["transaction_fee"] == "205.00"
    assert data["payment_status"] == "pending"
    assert data["payment_channel"] == "card"
    assert data["payment_type"] == "payment_item"
    assert data["paid_at"] is None
    assert datetime.fromisoformat(data["created_at"]) == stored.created_at
    assert datetime.fromisoformat(data["initiation_time"]) == stored.initiation_time
    assert data["gateway_reference"] is None
    assert data["gateway_used"] is None
    assert data["no_of_attempts"] == 0
    assert data["transaction_split_code"] == ""
    assert data["transaction_split_breakdown"] == []
    assert set(data["payment_item"]) == PAYMENT_ITEM_DETAIL_FIELDS
    assert data["payment_item"]["id"] == fixed_item.pk
    assert data["customer"] == {
        "id": customer.pk,
        "customer_tag": customer.customer_tag,
        "first_name": "Ada",
        "last_name": "Obi",
    }
    assert data["business"] == {"business_name": fixed_item.business.business_name}
    assert data["meta_data"] is None
    assert data["core_service_business_id"] == fixed_item.business_id
    assert data["business_merchant_id"] == merchant.pk
    assert data["customer_id"] == customer.pk
    assert data["customer_tag"] == customer.customer_tag
    assert data["customer_email"] == "ada.obi@example.com"
    assert data["customer_phone_number"] == "08031234567"


def test_search_shows_the_split_breakdown_from_the_item_split(
    test_client: APIClient, merchant: Merchant, fee_schedule, django_assert_num_queries
) -> None:
    split = TransactionSplitFactory(merchant=merchant)
    first = TransactionSplitShareFactory(split=split, share=Decimal("10"))
    second = TransactionSplitShareFactory(split=split, share=Decimal("2.5"))
    item = PaymentItemFactory(merchant=merchant, transaction_split=split)
    reference = post(test_client, initialize_payload(item)).json()["data"]["reference"]
    with django_assert_num_queries(3):  # key, transaction with joins, split entries
        data = test_client.get(search_url(reference)).json()["data"]
    assert data["transaction_split_code"] == split.transaction_split_code
    assert data["payment_item"]["transaction_split_code"] == split.transaction_split_code
    expected = []
    for share, amount in ((first, 700), (second, 175)):
        subaccount = share.subaccount
        expected.append(
            {
                "share": amount,
                "bank_id": subaccount.bank_id,
                "bank_name": subaccount.bank.name,
                "account_code": subaccount.account_code,
                "account_name": subaccount.account_name,
                "account_number": subaccount.account_number,
            }
        )
    assert data["transaction_split_breakdown"] == expected


def test_search_share_keeps_kobo_as_a_number(
    test_client: APIClient, merchant: Merchant, fee_schedule
) -> None:
    split = TransactionSplitFactory(merchant=merchant)
    TransactionSplitShareFactory(split=split, share=Decimal("10"))
    item = PaymentItemFactory(merchant=merchant, amount=Decimal("0"), transaction_split=split)
    payload = initialize_payload(item, amount="1234.55")
    reference = post(test_client, payload).json()["data"]["reference"]
    breakdown = test_client.get(search_url(reference)).json()["data"]["transaction_split_breakdown"]
    assert breakdown[0]["share"] == 123.45


def test_search_of_a_bank_transfer_carries_the_instructions_in_meta_data(
    test_client: APIClient, fixed_item
) -> None:
    created = post(test_client, initialize_payload(fixed_item, channel="bank-transfer")).json()
    data = test_client.get(search_url(created["data"]["reference"])).json()["data"]
    assert data["payment_channel"] == "bank-transfer"
    assert data["authorization_url"] is None
    assert data["meta_data"] == {"payment_instructions": created["data"]["payment_instructions"]}


def test_after_a_declined_card_status_and_search_answer_pending_with_the_attempts(
    test_client: APIClient, initialized, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.COLLECTION_CARD_ATTEMPT_LIMIT = 3
    reference = initialized["reference"]
    card = {"card_number": "4000 0000 0000 0002", "expiry": "12/39", "cvv": "123"}
    for attempt in (1, 2):
        declined = Client().post(f"/checkout/{reference}/card", card)
        assert declined["Location"] == f"/checkout/{reference}"
        assert test_client.get(status_url(reference)).json()["data"]["payment_status"] == (
            "pending"
        )
        searched = test_client.get(search_url(reference)).json()["data"]
        assert (searched["payment_status"], searched["no_of_attempts"]) == ("pending", attempt)
        assert searched["paid_at"] is None
        assert searched["meta_data"] is None
    Client().post(f"/checkout/{reference}/card", card)
    searched = test_client.get(search_url(reference)).json()["data"]
    assert (searched["payment_status"], searched["no_of_attempts"]) == ("failed", 3)
    assert searched["meta_data"] == {"card": {"brand": "visa", "last4": "0002"}}


@pytest.mark.parametrize("case", ["unknown", "other_merchant", "other_mode"])
def test_search_of_an_invisible_transaction_is_404(
    test_client: APIClient, merchant: Merchant, case: str
) -> None:
    reference = {
        "unknown": lambda: "TXN_DOESNOTEXIST000000",
        "other_merchant": lambda: CollectionTransactionFactory().reference,
        "other_mode": lambda: (
            CollectionTransactionFactory(merchant=merchant, mode=Mode.LIVE).reference
        ),
    }[case]()
    response = test_client.get(search_url(reference))
    assert response.status_code == 404
    assert response.json() == {
        "status": False,
        "message": "Transaction not found",
        "data": None,
        "statusCode": 404,
    }


# --- test helper -------------------------------------------------------------------------------


def test_complete_as_paid_then_status_and_search_show_it(
    test_client: APIClient, initialized
) -> None:
    reference = initialized["reference"]
    response = test_client.post(complete_url(reference), {"outcome": "paid"}, format="json")
    assert response.status_code == 200
    assert response.json()["message"] == "Transaction marked paid"
    data = response.json()["data"]
    assert set(data) == SEARCH_FIELDS
    assert data["payment_status"] == "paid"
    assert data["amount_paid"] == "7205.00"
    assert data["paid_at"] is not None
    assert data["gateway_used"] == "sandbox"
    assert re.fullmatch(r"SBX_[0-9A-F]{16}", data["gateway_reference"])
    assert data["no_of_attempts"] == 1
    assert test_client.get(status_url(reference)).json()["data"]["payment_status"] == "paid"
    searched = test_client.get(search_url(reference)).json()["data"]
    assert searched["payment_status"] == "paid"
    assert searched["paid_at"] == data["paid_at"]


@pytest.mark.parametrize("outcome", ["failed", "cancelled"])
def test_complete_as_failed_or_cancelled(test_client: APIClient, initialized, outcome: str) -> None:
    response = test_client.post(
        complete_url(initialized["reference"]), {"outcome": outcome}, format="json"
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["payment_status"] == outcome
    assert data["paid_at"] is None
    assert data["amount_paid"] == "0.00"


@pytest.mark.parametrize("first", ["paid", "failed", "cancelled"])
@pytest.mark.parametrize("second", ["paid", "failed", "cancelled"])
def test_completing_a_final_transaction_is_409_and_recorded(
    test_client: APIClient, initialized, first: str, second: str
) -> None:
    url = complete_url(initialized["reference"])
    test_client.post(url, {"outcome": first}, format="json")
    response = test_client.post(url, {"outcome": second}, format="json")
    assert error(response, 409) == (
        f"Transaction is already {first}; a final transaction cannot change"
    )
    stored = CollectionTransaction.objects.get()
    assert stored.payment_status == first
    assert stored.no_of_attempts == 2
    assert list(TransactionAttempt.objects.values_list("applied", flat=True)) == [True, False]


def test_completing_an_expired_transaction_is_409(test_client: APIClient, merchant) -> None:
    txn = CollectionTransactionFactory(merchant=merchant, payment_status=PaymentStatus.EXPIRED)
    response = test_client.post(complete_url(txn.reference), {"outcome": "paid"}, format="json")
    assert error(response, 409).startswith("Transaction is already expired")


@pytest.mark.parametrize(
    "body", [{"outcome": "expired"}, {"outcome": "pending"}, {}, {"outcome": 1}]
)
def test_complete_outcome_must_be_valid(test_client: APIClient, initialized, body) -> None:
    response = test_client.post(complete_url(initialized["reference"]), body, format="json")
    assert error(response, 400).startswith("outcome: ")
    assert CollectionTransaction.objects.get().payment_status == "pending"


def test_complete_with_a_live_key_is_404(live_client: APIClient, merchant) -> None:
    txn = CollectionTransactionFactory(merchant=merchant, mode=Mode.LIVE)
    response = live_client.post(complete_url(txn.reference), {"outcome": "paid"}, format="json")
    assert error(response, 404) == "Not found: test helpers work only with a test secret key"
    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PENDING


@pytest.mark.parametrize("case", ["unknown", "other_merchant"])
def test_complete_of_an_invisible_transaction_is_404(test_client: APIClient, case: str) -> None:
    reference = (
        "TXN_DOESNOTEXIST000000" if case == "unknown" else CollectionTransactionFactory().reference
    )
    response = test_client.post(complete_url(reference), {"outcome": "paid"}, format="json")
    assert error(response, 404) == "Transaction not found"


# --- mode isolation ----------------------------------------------------------------------------


def test_live_key_cannot_see_test_transactions(live_client: APIClient, initialized) -> None:
    reference = initialized["reference"]
    assert live_client.get(status_url(reference)).status_code == 400
    assert live_client.get(search_url(reference)).status_code == 404


def test_live_key_cannot_pay_for_a_test_item(live_client: APIClient, fixed_item) -> None:
    response = post(live_client, initialize_payload(fixed_item))
    assert error(response, 400) == "Payment item not found"


def test_live_initialize_for_a_live_item(
    live_client: APIClient, merchant, fee_schedule, paystack
) -> None:
    paystack_mock_initialize(paystack)
    live_item = PaymentItemFactory(merchant=merchant, mode=Mode.LIVE)
    response = post(live_client, initialize_payload(live_item))
    assert response.status_code == 200
    created = CollectionTransaction.objects.get()
    assert created.mode == Mode.LIVE
    assert response.json()["data"]["authorization_url"].startswith("https://checkout.paystack.com/")


# --- authentication ----------------------------------------------------------------------------


ROUTES = [
    ("post", INITIALIZE_URL),
    ("get", status_url("TXN_ANY")),
    ("get", search_url("TXN_ANY")),
    ("post", complete_url("TXN_ANY")),
]


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_missing_header_is_403(api_client: APIClient, db, method: str, url: str) -> None:
    response = getattr(api_client, method)(url, {}, format="json")
    assert response.status_code == 403
    assert response.json() == FORBIDDEN


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_wrong_scheme_is_403(
    api_client: APIClient, merchant_account, method: str, url: str
) -> None:
    api_client.credentials(HTTP_AUTHORIZATION=f"Basic {merchant_account.test_key.plaintext}")
    response = getattr(api_client, method)(url, {}, format="json")
    assert response.status_code == 403
    assert response.json() == FORBIDDEN


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_unknown_key_is_403(api_client: APIClient, db, method: str, url: str) -> None:
    api_client.credentials(HTTP_AUTHORIZATION="Bearer sk_test_" + "q" * 43)
    response = getattr(api_client, method)(url, {}, format="json")
    assert response.status_code == 403
    assert response.json() == FORBIDDEN


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_revoked_key_is_403(client_for, merchant_account, method: str, url: str) -> None:
    old_key = merchant_account.test_key.plaintext
    secret_key_rotate(merchant=merchant_account.merchant, mode=Mode.TEST)
    response = getattr(client_for(old_key), method)(url, {}, format="json")
    assert response.status_code == 403
    assert response.json() == FORBIDDEN
