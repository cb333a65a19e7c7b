"""Hostile input never reaches a 5xx, on every route.

NUL bytes and lone surrogates in path segments, query parameters, headers, JSON strings and JSON
keys; JSON nested past the depth cap; extreme dates and numbers; non-ASCII and NUL signature
headers. Every route answers in its own shape (the envelope on the API, an HTML page under
``/checkout/``), with a 4xx for what it refuses, and nothing is stored.

The examples pin each mechanism (``core.middleware``, ``core.api.parsers``, the renderer); the
Hypothesis properties generate hostile input for every route of the URLconf.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, timedelta, timezone
from decimal import Decimal
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework import exceptions

from collections_app.models import CollectionTransaction, TransactionAttempt
from collections_app.services import CustomerInfo, transaction_initialize
from core import ssrf
from core.api.parsers import MAX_JSON_DEPTH, MalformedJSONError, json_body_load
from core.api.renderers import EnvelopeJSONRenderer
from integrations.paystack import paystack_signature_compute
from merchants.models import Mode
from merchants.services import MerchantCreated
from payment_items.demo import demo_catalogue_seed
from payouts.models import Payout, PayoutBatch
from payouts.services import payout_create
from wallets.api.views import funding_signature_compute
from wallets.models import FundingTransfer, LedgerEntry
from wallets.selectors import wallet_get
from wallets.services import wallet_fund
from webhooks.models import Event, WebhookDelivery

# Every route × every hostile input: about 300 cases, seconds in all; the whole suite runs them.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

FUNDING_SECRET = "hostile-input-funding-secret"
PAYSTACK_SECRET = "hostile-input-paystack-secret"
FLUTTERWAVE_HASH = "hostile-input-flutterwave-hash"
CALLBACK_URL = "https://merchant.example.com/payments/callback"
TOO_DEEP = f"Malformed JSON body: nested more than {MAX_JSON_DEPTH} levels deep"
STORED = (
    FundingTransfer,
    LedgerEntry,
    Payout,
    PayoutBatch,
    CollectionTransaction,
    TransactionAttempt,
    Event,
    WebhookDelivery,
)


# --- the world ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class World:
    test_key: str
    test_account_number: str
    live_account_number: str
    payout_id: int
    payment_item_id: int
    reference: str

    def path_value(self, name: str) -> str:
        return str(
            {
                "payout_id": self.payout_id,
                "beneficiary_id": 1,  # the world saves none: a 404 once the text passes
                "batch_id": 1,  # the world makes no bulk payout: a 404 once the text passes
                "payment_item_id": self.payment_item_id,
                "reference": self.reference,
                "event_id": "evt_" + "0" * 24,  # the world records none: a 404 once it passes
                "settlement_id": "stl_" + "0" * 20,  # the world settles nothing: a 404 too
                "refund_id": "rf_" + "0" * 20,  # the world refunds nothing: a 404 too
                "provider_name": "sandbox-b",
                "key_id": 2**31 - 1,  # no such key: a 404 once the text passes
            }[name]
        )


@pytest.fixture
def world(merchant_account: MerchantCreated, settings: Any, monkeypatch) -> World:
    settings.FUNDING_WEBHOOK_SECRET = FUNDING_SECRET
    settings.PAYSTACK_SECRET_KEY = PAYSTACK_SECRET
    settings.FLUTTERWAVE_WEBHOOK_HASH = FLUTTERWAVE_HASH

    def resolve(host: str, port: int) -> list[str]:
        if host == "merchant.example.com":
            return ["93.184.216.34"]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(ssrf, "system_resolver", resolve)
    merchant = merchant_account.merchant
    test_wallet = wallet_get(merchant=merchant, mode=Mode.TEST)
    live_wallet = wallet_get(merchant=merchant, mode=Mode.LIVE)
    wallet_fund(wallet_id=test_wallet.pk, amount=Decimal("100000.00"), reference="HOSTILE-1")
    item_id = demo_catalogue_seed(merchant=merchant)["payment_items"]["fixed"]
    payout = payout_create(
        merchant=merchant,
        mode=Mode.TEST,
        account_number="0123456789",
        bank_code="058",
        amount=Decimal("1500.00"),
        idempotency_key="hostile-payout-1",
        narration="hostile",
    ).payout
    collection = transaction_initialize(
        merchant=merchant,
        mode=Mode.TEST,
        payment_item_id=item_id,
        transaction_reference="hostile-ref-1",
        channel="bank-transfer",
        amount=Decimal("7000.00"),
        customer_info=CustomerInfo(
            email="ada@example.com", phone_number="08012345678", first_name="Ada", last_name="Obi"
        ),
        callback_url=CALLBACK_URL,
    ).transaction
    return World(
        test_key=merchant_account.test_key.plaintext,
        test_account_number=test_wallet.static_account_number,
        live_account_number=live_wallet.static_account_number,
        payout_id=payout.pk,
        payment_item_id=item_id,
        reference=collection.reference,
    )


# --- the routes -----------------------------------------------------------------------------------


def _name_enquiry(world: World) -> dict[str, Any]:
    return {"account_number": "0123456789", "bank_code": "058"}


def _fund(world: World) -> dict[str, Any]:
    return {"amount": "10.00", "reference": "HOSTILE-FUND-2"}


def _funding(world: World) -> dict[str, Any]:
    return {
        "reference": "HOSTILE-PRV-1",
        "account_number": world.live_account_number,
        "amount": "10.00",
        "currency": "NGN",
        "narration": "top up",
    }


def _quote(world: World) -> dict[str, Any]:
    return {"amount": "100.00"}


def _payout(world: World) -> dict[str, Any]:
    return {
        "account_number": "0123456789",
        "bank_code": "058",
        "amount": "10.00",
        "idempotency_key": "hostile-payout-2",
        "narration": "rent",
    }


def _bulk_payout(world: World) -> dict[str, Any]:
    return {
        "batch_reference": "hostile-batch-1",
        "items": [{**_payout(world), "idempotency_key": "hostile-bulk-1"}],
    }


def _initialize(world: World) -> dict[str, Any]:
    return {
        "callback_url": CALLBACK_URL,
        "payment_item_id": str(world.payment_item_id),
        "transaction_reference": "hostile-ref-2",
        "channel": "card",
        "amount": "7000.00",
        "customer_info": {
            "email": "ada.obi@example.com",
            "phone_number": "08031234567",
            "first_name": "Ada",
            "last_name": "Obi",
        },
    }


def _return(world: World) -> dict[str, Any]:
    return {"reason": "Account closed"}


def _switch(world: World) -> dict[str, Any]:
    return {"state": "slow"}


def _complete(world: World) -> dict[str, Any]:
    return {"outcome": "paid"}


def _paystack(world: World) -> dict[str, Any]:
    return {"event": "charge.success", "data": {"reference": world.reference}}


def _flutterwave(world: World) -> dict[str, Any]:
    return {"event": "transfer.completed", "data": {"reference": "po_unknown", "status": "FAILED"}}


def _refund(world: World) -> dict[str, Any]:
    return {
        "transaction_reference": world.reference,
        "amount": "100.00",
        "idempotency_key": "hostile-refund-1",
    }


def _sweep(world: World) -> dict[str, Any]:
    return {
        "schedule": "daily",
        "time": "17:00",
        "amount_to_keep": "5000.00",
        "settlement_account": {"bank_code": "058", "account_number": "0123456789"},
    }


def _key_create(world: World) -> dict[str, Any]:
    return {"name": "hostile reader", "scopes": ["read"]}


def _key_roll(world: World) -> dict[str, Any]:
    return {"expires_in_hours": 24}


def _card_form(world: World) -> dict[str, Any]:
    return {"card_number": "4084 0840 8408 4081", "expiry": "12/40", "cvv": "123"}


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # as the URLconf spells it, under its prefix
    body: Callable[[World], dict[str, Any]] | None = None
    signature_header: str = ""  # HTTP_… name for signed provider notifications
    query: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def csv(self) -> bool:
        """The statement's CSV route answers CSV on success, the envelope on error."""
        return self.path.endswith("/statement/csv")

    @property
    def html(self) -> bool:
        return self.path.startswith("/checkout/")

    @property
    def keyed(self) -> bool:
        return not self.html and not self.signature_header

    @property
    def parameters(self) -> list[str]:
        return [part[1:-1].split(":")[-1] for part in self.path.split("/") if part.startswith("<")]

    def url(self, values: dict[str, str]) -> str:
        parts = []
        for part in self.path.split("/"):
            if part.startswith("<"):
                name = part[1:-1].split(":")[-1]
                part = quote(values[name], safe="", errors="surrogatepass")
            parts.append(part)
        return "/".join(parts)


API = "/api/v1/"
ROUTES = [
    Route("GET", API + "transactions/in/merchant-wallet"),
    Route("GET", API + "transactions/in/merchant-wallet/ledger", query=("page", "limit")),
    Route(
        "GET",
        API + "transactions/in/merchant-wallet/statement",
        query=("from_date", "to_date", "format"),
    ),
    Route(
        "GET",
        API + "transactions/in/merchant-wallet/statement/csv",
        query=("from_date", "to_date"),
    ),
    Route("GET", API + "transactions/in/merchant-wallet/alerts"),
    Route(
        "PUT",
        API + "transactions/in/merchant-wallet/alerts",
        lambda world: {"low_balance_threshold": "5000.00"},
    ),
    Route("POST", API + "transactions/in/merchant-wallet/payouts/name-enquiry", _name_enquiry),
    Route("GET", API + "transactions/bank"),
    Route("POST", API + "webhooks/funding", _funding, signature_header="HTTP_X_PROVIDER_SIGNATURE"),
    Route("POST", API + "test-helpers/wallet/fund", _fund),
    Route("POST", API + "transactions/in/merchant-wallet/payouts/quote", _quote),
    Route(
        "GET",
        API + "transactions/in/merchant-wallet/payouts",
        query=(
            "page",
            "limit",
            "from_date",
            "to_date",
            "status",
            "reference",
            "currency",
            "batch_id",
        ),
    ),
    Route("POST", API + "transactions/in/merchant-wallet/payouts", _payout),
    Route("POST", API + "transactions/in/merchant-wallet/payouts/bulk", _bulk_payout),
    Route("GET", API + "transactions/in/merchant-wallet/payouts/bulk/<int:batch_id>"),
    Route("GET", API + "transactions/in/merchant-wallet/payouts/<int:payout_id>"),
    Route(
        "GET",
        API + "transactions/in/merchant-wallet/beneficiaries",
        query=("page", "limit", "account_number"),
    ),
    Route("POST", API + "transactions/in/merchant-wallet/beneficiaries", _name_enquiry),
    Route("GET", API + "transactions/in/merchant-wallet/beneficiaries/<int:beneficiary_id>"),
    Route("DELETE", API + "transactions/in/merchant-wallet/beneficiaries/<int:beneficiary_id>"),
    Route("POST", API + "transactions/in/merchant-wallet/payouts/<int:payout_id>/requery"),
    Route("POST", API + "transactions/in/merchant-wallet/payouts/<int:payout_id>/approve"),
    Route("POST", API + "transactions/in/merchant-wallet/payouts/<int:payout_id>/cancel"),
    Route("GET", API + "transactions/in/merchant-wallet/approvals"),
    Route(
        "PUT",
        API + "transactions/in/merchant-wallet/approvals",
        lambda world: {"approval_threshold": "5000.00"},
    ),
    Route("POST", API + "test-helpers/payouts/<int:payout_id>/return", _return),
    Route("POST", API + "test-helpers/payout-providers/<str:provider_name>", _switch),
    Route("GET", API + "transactions/in/payment-items", query=("page", "limit")),
    Route("GET", API + "transactions/in/payment-item/<int:payment_item_id>"),
    Route("POST", API + "transactions/in/initialize", _initialize),
    Route("GET", API + "transactions/in/check-transaction-status/<str:reference>"),
    Route("GET", API + "transactions/in/search-transaction/<str:reference>"),
    Route("POST", API + "test-helpers/transactions/<str:reference>/complete", _complete),
    Route("POST", API + "test-helpers/settlements/run"),
    Route("POST", API + "transactions/in/refunds", _refund),
    Route(
        "GET",
        API + "transactions/in/refunds",
        query=("page", "limit", "status", "from_date", "to_date", "reference"),
    ),
    Route("GET", API + "transactions/in/refunds/<str:refund_id>"),
    Route("GET", API + "transactions/in/merchant-wallet/sweep"),
    Route("PUT", API + "transactions/in/merchant-wallet/sweep", _sweep),
    Route("POST", API + "transactions/in/merchant-wallet/sweep/run"),
    Route("POST", API + "test-helpers/sweep/settlement-account/activate"),
    Route(
        "POST", API + "webhooks/paystack", _paystack, signature_header="HTTP_X_PAYSTACK_SIGNATURE"
    ),
    Route("POST", API + "webhooks/flutterwave", _flutterwave, signature_header="HTTP_VERIF_HASH"),
    Route(
        "GET",
        API + "events",
        query=("page", "limit", "type", "from_date", "to_date", "reference"),
    ),
    Route("GET", API + "events/<str:event_id>"),
    Route("GET", API + "settlements", query=("page", "limit", "status", "from_date", "to_date")),
    Route("GET", API + "settlements/<str:settlement_id>"),
    Route("GET", API + "settlements/<str:settlement_id>/transactions", query=("page", "limit")),
    Route("POST", API + "events/<str:event_id>/resend"),
    Route("GET", API + "keys"),
    Route("POST", API + "keys", _key_create),
    Route("POST", API + "keys/roll", _key_roll),
    Route("DELETE", API + "keys/<int:key_id>"),
    Route("GET", API + "webhook-settings"),
    Route("PUT", API + "webhook-settings", lambda world: {"url": CALLBACK_URL}),
    Route("POST", API + "webhook-settings/rotate-secret", lambda world: {"overlap_hours": 24}),
    Route("POST", API + "webhook-settings/test"),
    Route("GET", "/checkout/<str:reference>"),
    Route("POST", "/checkout/<str:reference>/card", _card_form),
    Route("POST", "/checkout/<str:reference>/transfer"),
    Route("GET", "/checkout/<str:reference>/cancel"),
    Route("POST", "/checkout/<str:reference>/cancel"),
    Route("GET", "/checkout/<str:reference>/return"),
]
JSON_ROUTES = [route for route in ROUTES if route.body is not None and not route.html]
API_ROUTES = [route for route in ROUTES if not route.html]
PARAMETER_ROUTES = [route for route in ROUTES if route.parameters]
SIGNED_ROUTES = [route for route in ROUTES if route.signature_header]


def route_for(method: str, path: str) -> Route:
    return next(route for route in ROUTES if (route.method, route.path) == (method, path))


PAYOUT_CREATE = route_for("POST", API + "transactions/in/merchant-wallet/payouts")
FUND_HELPER = route_for("POST", API + "test-helpers/wallet/fund")


def _urlconf_paths() -> set[str]:
    found: set[str] = set()

    def walk(patterns: list[Any], prefix: str) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern):
                found.add("/" + prefix + str(entry.pattern))

    walk(get_resolver().url_patterns, "")
    return {path for path in found if path.startswith((API, "/checkout/"))}


def test_the_routes_here_are_every_route_of_the_urlconf() -> None:
    assert {route.path for route in ROUTES} == _urlconf_paths()


# --- calling a route ------------------------------------------------------------------------------


def _signed_headers(route: Route, body: bytes) -> dict[str, str]:
    if route.signature_header == "HTTP_X_PROVIDER_SIGNATURE":
        return {route.signature_header: funding_signature_compute(body, secret=FUNDING_SECRET)}
    if route.signature_header == "HTTP_VERIF_HASH":
        return {route.signature_header: FLUTTERWAVE_HASH}
    return {route.signature_header: paystack_signature_compute(body, secret_key=PAYSTACK_SECRET)}


def call(
    route: Route,
    world: World,
    *,
    path_values: dict[str, str] | None = None,
    query: str = "",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    client = Client(raise_request_exception=False)
    values = {name: world.path_value(name) for name in route.parameters}
    values.update(path_values or {})
    url = route.url(values) + (f"?{query}" if query else "")
    extra: dict[str, str] = {}
    if route.keyed:
        extra["HTTP_AUTHORIZATION"] = f"Bearer {world.test_key}"
    if route.method == "GET":
        return client.get(url, **{**extra, **(headers or {})})
    if route.html:
        form = route.body(world) if route.body else {}
        return client.post(url, form, **{**extra, **(headers or {})})
    if body is None:
        body = json.dumps(route.body(world)).encode() if route.body else b""
    if route.signature_header:
        extra.update(_signed_headers(route, body))
    return client.generic(
        route.method,
        url,
        data=body,
        content_type="application/json",
        **{**extra, **(headers or {})},
    )


def stored_counts() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in STORED)


def assert_answer_shape(route: Route, response: Any) -> None:
    assert response.status_code < 500, (route.label, response.status_code, response.content[:300])
    if route.html:
        if response.status_code not in (301, 302, 303):
            assert response["Content-Type"].startswith("text/html"), response["Content-Type"]
        return
    if route.csv and response.status_code == 200:
        assert response["Content-Type"].startswith("text/csv"), response["Content-Type"]
        return
    body = response.json()
    if response.status_code == 403 and "payment-item" in route.path:
        assert body == {"message": "Forbidden resource", "error": "Forbidden", "statusCode": 403}
        return
    assert set(body) == {"status", "message", "data", "statusCode"}, body
    assert body["statusCode"] == response.status_code
    assert body["status"] is (response.status_code < 400)
    if response.status_code >= 400:
        assert body["data"] is None
        assert isinstance(body["message"], str) and body["message"]


def assert_refused(route: Route, response: Any, status: int = 400) -> str:
    assert_answer_shape(route, response)
    assert response.status_code == status, response.content[:300]
    return "" if route.html else response.json()["message"]


# --- the JSON parser ------------------------------------------------------------------------------


def _nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


@pytest.mark.parametrize("route", JSON_ROUTES, ids=lambda route: route.label)
def test_json_nested_past_the_cap_is_a_400_on_every_json_route(route: Route, world: World) -> None:
    """About 2 KB of ``[[[[…]]]]`` used to reach Python's recursion limit: a 500."""
    before = stored_counts()
    response = call(route, world, body=_nested(2000).encode())
    assert assert_refused(route, response) == TOO_DEEP
    assert stored_counts() == before


@pytest.mark.parametrize("route", JSON_ROUTES, ids=lambda route: route.label)
def test_a_deep_value_inside_a_valid_body_is_a_400(route: Route, world: World) -> None:
    payload = json.dumps(route.body(world))
    body = payload[:-1] + ', "deep": ' + _nested(MAX_JSON_DEPTH) + "}"
    before = stored_counts()
    assert assert_refused(route, call(route, world, body=body.encode())) == TOO_DEEP
    assert stored_counts() == before


def test_json_at_the_depth_cap_is_parsed() -> None:
    assert json_body_load(_nested(MAX_JSON_DEPTH - 1, "{}").encode()) == json.loads(
        _nested(MAX_JSON_DEPTH - 1, "{}")
    )
    with pytest.raises(MalformedJSONError) as raised:
        json_body_load(_nested(MAX_JSON_DEPTH, "{}").encode())
    assert str(raised.value.detail) == TOO_DEEP


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 999, 1000, 5000, 100_000])
def test_every_depth_past_the_cap_is_refused_the_same_way(depth: int) -> None:
    with pytest.raises(MalformedJSONError) as raised:
        json_body_load(_nested(depth).encode())
    assert str(raised.value.detail) == TOO_DEEP


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e999", "[-1e400]"])
def test_non_finite_numbers_are_malformed_json(text: str) -> None:
    with pytest.raises(MalformedJSONError) as raised:
        json_body_load(text.encode())
    assert str(raised.value.detail) == "Malformed JSON body"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": "x\\u0000y"}', "a: Null characters are not allowed."),
        ('{"a": {"b": [1, "\\ud800"]}}', "a.b[1]: must be valid Unicode text"),
        ('{"a": {"\\u0000b": 1}}', "a: field names must be valid Unicode text without NUL"),
        ('{"\\udfffk": 1}', "request body: field names must be valid Unicode text without NUL"),
        ('["\\u0000"]', "[0]: Null characters are not allowed."),
        ('"\\ud83d"', "request body: must be valid Unicode text"),
    ],
)
def test_unstorable_text_anywhere_is_refused_naming_where(text: str, message: str) -> None:
    with pytest.raises(exceptions.ValidationError) as raised:
        json_body_load(text.encode())
    detail = raised.value.detail
    name, [problem] = next(iter(detail.items()))
    assert f"{name}: {problem}".startswith(message)


def test_an_escaped_surrogate_pair_is_text() -> None:
    assert json_body_load(b'{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"a\\ud800": 1}', "request body: field names must be valid Unicode text"),
        ('{"a\\u0000": 1}', "request body: field names must be valid Unicode text"),
        ('{"narration": "x\\ud800"}', "narration: must be valid Unicode text"),
    ],
    ids=["surrogate-key", "nul-key", "surrogate-value"],
)
def test_unstorable_json_keys_and_values_are_a_400(body: str, message: str, world: World) -> None:
    """A lone surrogate in a key was echoed into the error message, which then could not be
    encoded: a 500."""
    before = stored_counts()
    response = call(PAYOUT_CREATE, world, body=body.encode())
    assert assert_refused(PAYOUT_CREATE, response).startswith(message)
    assert stored_counts() == before


def test_the_renderer_escapes_text_utf8_cannot_encode() -> None:
    rendered = EnvelopeJSONRenderer().render({"message": "a\ud800: is not an accepted field"})
    assert json.loads(rendered) == {"message": "a\ud800: is not an accepted field"}
    assert b"\\ud800" in rendered


# --- paths, query parameters, headers -------------------------------------------------------------


@pytest.mark.parametrize("route", PARAMETER_ROUTES, ids=lambda route: route.label)
@pytest.mark.parametrize("value", ["ab\x00c", "\x00", "TXN_\x01", "a\nb", "\x7f"])
def test_a_control_character_in_a_path_is_a_404(route: Route, value: str, world: World) -> None:
    """A NUL in a reference reached PostgreSQL, which refuses it in a query: a 500."""
    values = dict.fromkeys(route.parameters, value)
    before = stored_counts()
    response = call(route, world, path_values=values)
    assert_refused(route, response, 404)
    assert stored_counts() == before


@pytest.mark.parametrize("route", API_ROUTES, ids=lambda route: route.label)
def test_a_nul_in_a_query_parameter_is_a_400_naming_it(route: Route, world: World) -> None:
    response = call(route, world, query="page=1&note=a%00b")
    assert assert_refused(route, response) == "note: Null characters are not allowed."


def test_a_nul_in_a_query_parameter_name_is_a_400(world: World) -> None:
    route = ROUTES[0]
    message = assert_refused(route, call(route, world, query="a%00b=1"))
    assert message == "a\\x00b: Null characters are not allowed in a parameter name."


@pytest.mark.parametrize("route", API_ROUTES, ids=lambda route: route.label)
def test_a_nul_in_a_header_is_a_400_naming_it(route: Route, world: World) -> None:
    before = stored_counts()
    response = call(route, world, headers={"HTTP_X_REQUEST_ID": "abc\x00def"})
    message = assert_refused(route, response)
    assert message == "X-Request-Id header: Null and line-break characters are not allowed."
    assert stored_counts() == before


def test_a_negative_content_length_is_a_400(world: World) -> None:
    response = call(FUND_HELPER, world, headers={"CONTENT_LENGTH": "-1"})
    assert assert_refused(FUND_HELPER, response) == "Content-Length header is not a valid integer"


@pytest.mark.parametrize("route", SIGNED_ROUTES, ids=lambda route: route.label)
@pytest.mark.parametrize(
    "signature",
    ["é" * 128, "\x00" * 128, "ｆ" * 128, "a" * 127 + "\x00", "sha512=" + "0" * 128, "ÿ"],
)
def test_hostile_signature_headers_are_refused(route: Route, signature: str, world: World) -> None:
    before = stored_counts()
    response = call(route, world, headers={route.signature_header: signature})
    assert assert_refused(route, response, 401) == "Invalid or missing provider signature"
    assert stored_counts() == before


@pytest.mark.parametrize("route", [r for r in API_ROUTES if r.keyed], ids=lambda r: r.label)
def test_a_refused_key_answers_before_hostile_text_is_looked_at(route: Route, world: World) -> None:
    text_parameters = [name for name in route.parameters if f"<str:{name}>" in route.path]
    response = call(
        route,
        world,
        path_values=dict.fromkeys(text_parameters, "\x00"),
        query="note=%00",
        headers={"HTTP_AUTHORIZATION": "Bearer sk_test_unknown", "HTTP_X_REQUEST_ID": "\x00"},
    )
    assert response.status_code in (401, 403)


@pytest.mark.parametrize("path", ["/checkout/%00", "/admin/%00/", "/nowhere/a%01b"])
def test_a_control_character_in_a_path_outside_the_api_is_the_404_page(path: str, db) -> None:
    response = Client(raise_request_exception=False).get(path)
    assert response.status_code == 404


# --- generated hostile input, every route ---------------------------------------------------------

HOSTILE_CHARACTERS = ["\x00", "\ud800", "\udfff", "\udbff", "\x00\x00", "\ud800\x00"]
STRINGS = st.text(max_size=12)


@st.composite
def unstorable_text(draw: st.DrawFn) -> str:
    """Text that no column can store: it holds a NUL or a lone surrogate somewhere."""
    return draw(STRINGS) + draw(st.sampled_from(HOSTILE_CHARACTERS)) + draw(STRINGS)


extreme_numbers = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40),
    st.sampled_from([2**31, 2**63, 2**64, -(2**63) - 1, 10**100, 0, -1]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e308, max_value=1e308),
)

_OFFSETS = st.sampled_from(
    [UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-14)), timezone(timedelta(0))]
)
EXTREME_DATES = [
    "0001-01-01",
    "9999-12-31",
    "9999-12-31T23:59:59+14:00",
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T00:00:00-14:00",
    "9999-12-31T23:59:59.999999-23:59",
    "10000-01-01",
    "99999-12-31T00:00:00Z",
    "-0001-01-01",
    "0000-00-00",
    "2024-02-30",
    "2024-13-01T25:61:61",
]
extreme_dates = st.one_of(
    st.sampled_from(EXTREME_DATES),
    st.integers(min_value=10_000, max_value=10**9).map(lambda year: f"{year}-01-01"),
    st.datetimes(timezones=_OFFSETS).map(lambda value: value.isoformat()),
    st.dates().map(lambda value: value.isoformat()),
)

query_values = st.one_of(
    unstorable_text(),
    extreme_dates,
    extreme_numbers.map(str),
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="latin-1"), min_size=300, max_size=400),
)

# What a WSGI server can hand over in a header: latin-1 text, NUL and non-ASCII included.
header_values = st.one_of(
    st.text(alphabet=st.characters(codec="latin-1"), max_size=200),
    st.text(alphabet="0123456789abcdef\x00é ", min_size=120, max_size=140),
)


def _hostile_settings(max_examples: int) -> hypothesis_settings:
    return hypothesis_settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


def _percent(text: str) -> str:
    return quote(text, safe="", errors="surrogatepass")


def _unstorable(text: str) -> bool:
    return any(character in text for character in HOSTILE_CHARACTERS)


@pytest.mark.slow
@pytest.mark.parametrize("route", PARAMETER_ROUTES, ids=lambda route: route.label)
def test_property_hostile_path_segments(route: Route, world: World) -> None:
    existing = {str(world.payout_id), str(world.payment_item_id), world.reference}

    def names_nothing(value: str) -> bool:
        digits = value.isascii() and value.isdigit()
        return value not in existing and not (digits and str(int(value)) in existing)

    values = st.one_of(unstorable_text(), st.text(max_size=60), extreme_numbers.map(str)).filter(
        names_nothing
    )

    @_hostile_settings(20)
    @given(value=values)
    def check(value: str) -> None:
        before = stored_counts()
        response = call(route, world, path_values=dict.fromkeys(route.parameters, value))
        assert_answer_shape(route, response)
        if _unstorable(value):
            assert response.status_code >= 400
        assert stored_counts() == before

    check()


DATE_PARAMETERS = ("from_date", "to_date")
NUMBER_PARAMETERS = ("page", "limit")


def _query_parameters(route: Route) -> st.SearchStrategy[list[tuple[str, str]]]:
    """Parameters the route reads, with values aimed at their kind, and parameters it does
    not read, with any hostile value."""
    dates = [name for name in route.query if name in DATE_PARAMETERS] or list(DATE_PARAMETERS)
    parameter = st.one_of(
        st.tuples(st.sampled_from(dates), extreme_dates),
        st.tuples(st.sampled_from(NUMBER_PARAMETERS), extreme_numbers.map(str)),
        st.tuples(st.sampled_from([*route.query, "note"]), query_values),
    )
    return st.lists(parameter, min_size=1, max_size=4)


PAYOUT_LIST = route_for("GET", API + "transactions/in/merchant-wallet/payouts")


def _with_every_extreme_date(test: Callable[..., None]) -> Callable[..., None]:
    for value in EXTREME_DATES:
        test = example(from_date=value, to_date=None)(test)
        test = example(from_date=None, to_date=value)(test)
    return test


@pytest.mark.slow
def test_property_extreme_dates_on_the_payout_list(world: World) -> None:
    """``to_date=9999-12-31`` overflowed computing the end of the day: a 500."""

    @_hostile_settings(40)
    @_with_every_extreme_date
    @given(from_date=st.none() | extreme_dates, to_date=st.none() | extreme_dates)
    def check(from_date: str | None, to_date: str | None) -> None:
        params = {"from_date": from_date, "to_date": to_date}
        query = "&".join(f"{name}={_percent(v)}" for name, v in params.items() if v is not None)
        response = call(PAYOUT_LIST, world, query=query)
        assert_answer_shape(PAYOUT_LIST, response)
        assert response.status_code in (200, 400)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("route", ROUTES, ids=lambda route: route.label)
def test_property_hostile_query_parameters(route: Route, world: World) -> None:
    @_hostile_settings(30 if route.query else 12)
    @given(params=_query_parameters(route))
    def check(params: list[tuple[str, str]]) -> None:
        before = stored_counts()
        query = "&".join(f"{_percent(name)}={_percent(value)}" for name, value in params)
        response = call(route, world, query=query)
        assert_answer_shape(route, response)
        if route.method == "GET":
            assert stored_counts() == before

    check()


def _mutations(route: Route, world: World) -> st.SearchStrategy[str]:
    """A body that would be accepted, made hostile in one place: a field holding unstorable
    text or an extreme number, an unstorable key, a value nested past the cap, or a whole
    body nested past the cap."""
    payload = route.body(world)
    fields = st.sampled_from(sorted(payload))

    def replaced(field: str, value: Any) -> str:
        return json.dumps({**payload, field: value})

    def nested(field: str, depth: int) -> str:
        text = json.dumps({**payload, field: "@@"})
        return text.replace('"@@"', "[" * depth + json.dumps(payload[field]) + "]" * depth)

    return st.one_of(
        st.builds(replaced, fields, unstorable_text()),
        st.builds(replaced, fields, extreme_numbers),
        st.builds(lambda key: json.dumps({**payload, key: "x"}), unstorable_text()),
        st.builds(nested, fields, st.integers(MAX_JSON_DEPTH, 3000)),
        st.integers(MAX_JSON_DEPTH + 1, 5000).map(lambda depth: _nested(depth)),
    )


@pytest.mark.slow
@pytest.mark.parametrize("route", JSON_ROUTES, ids=lambda route: route.label)
def test_property_hostile_json_bodies(route: Route, world: World) -> None:
    @_hostile_settings(25)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        body = data.draw(_mutations(route, world))
        before = stored_counts()
        response = call(route, world, body=body.encode("utf-8", errors="surrogatepass"))
        assert_answer_shape(route, response)
        assert stored_counts() == before

    check()


@pytest.mark.slow
@pytest.mark.parametrize("route", ROUTES, ids=lambda route: route.label)
def test_property_hostile_headers(route: Route, world: World) -> None:
    names = st.sampled_from(
        ["HTTP_X_REQUEST_ID", "HTTP_USER_AGENT", "HTTP_ACCEPT", "HTTP_ACCEPT_LANGUAGE"]
        + ([route.signature_header] if route.signature_header else [])
        + (["HTTP_AUTHORIZATION"] if route.keyed else [])
    )

    @_hostile_settings(12)
    @given(name=names, value=header_values)
    def check(name: str, value: str) -> None:
        before = stored_counts()
        response = call(route, world, headers={name: value})
        assert_answer_shape(route, response)
        if name in ("HTTP_AUTHORIZATION", route.signature_header) and route.method == "POST":
            assert stored_counts() == before

    check()
