"""``core.api.permissions.KeyScopePermission``: every merchant route declares the scope of each
method it answers (an undeclared route fails closed), and a key without it gets 403 naming the
scope, on every write route group, in the route's own 403 shape."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.permissions import AllowAny
from rest_framework.test import APIClient

from core.api.permissions import KeyScopePermission, required_scope
from core.api.schema_components import ApiTag
from merchants.models import SecretKey
from merchants.scopes import ALL_SCOPES, Scope
from merchants.services import MerchantCreated
from payouts.models import Payout
from tests.merchants.factories import RestrictedKeyFactory

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.core.urls")]

API = "/api/v1/"
HANDLED_METHODS = ("get", "post", "put", "patch", "delete")


def _api_views() -> Iterator[tuple[str, type]]:
    def walk(patterns: list[Any], prefix: str) -> Iterator[tuple[str, type]]:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern):
                view_class = getattr(entry.callback, "cls", None)
                path = "/" + prefix + str(entry.pattern)
                if path.startswith(API) and view_class is not None:
                    yield path, view_class

    yield from walk(get_resolver().url_patterns, "")


def test_every_merchant_route_declares_a_known_scope_for_each_method_it_answers() -> None:
    undeclared: list[str] = []
    keyless: set[str] = set()
    for path, view_class in _api_views():
        view = view_class()
        permissions = view.get_permissions()
        if any(isinstance(permission, AllowAny) for permission in permissions):
            # Only a route the providers call, signed by them, may take no merchant key.
            assert view_class.openapi_tag == ApiTag.PROVIDER_WEBHOOKS, path
            assert view.get_authenticators() == [], path
            keyless.add(view_class.__name__)
            continue
        assert any(isinstance(p, KeyScopePermission) for p in permissions), path
        for method in HANDLED_METHODS:
            if not hasattr(view_class, method):
                continue
            scope = required_scope(view_class, method)
            if scope not in ALL_SCOPES:
                undeclared.append(f"{method.upper()} {path}: {scope!r}")
    assert undeclared == []
    assert {"FundingNotificationApi", "PaystackWebhookApi"} <= keyless


# --- 403 naming the scope, on every write route group --------------------------------------------

WRITE_ROUTES = [
    ("post", "transactions/in/merchant-wallet/payouts", Scope.PAYOUTS_WRITE),
    ("post", "transactions/in/merchant-wallet/payouts/bulk", Scope.PAYOUTS_WRITE),
    ("post", "transactions/in/merchant-wallet/payouts/1/requery", Scope.PAYOUTS_WRITE),
    ("post", "transactions/in/merchant-wallet/payouts/name-enquiry", Scope.PAYOUTS_WRITE),
    ("post", "transactions/in/initialize", Scope.COLLECTIONS_WRITE),
    ("post", "transactions/in/refunds", Scope.REFUNDS_WRITE),
    ("post", "transactions/in/merchant-wallet/beneficiaries", Scope.BENEFICIARIES_WRITE),
    ("delete", "transactions/in/merchant-wallet/beneficiaries/1", Scope.BENEFICIARIES_WRITE),
    ("post", "events/evt_000000000000000000000000/resend", Scope.WEBHOOKS_WRITE),
    ("put", "transactions/in/merchant-wallet/sweep", Scope.SWEEPS_WRITE),
    ("post", "transactions/in/merchant-wallet/sweep/run", Scope.SWEEPS_WRITE),
    ("put", "transactions/in/merchant-wallet/alerts", Scope.ALERTS_WRITE),
    ("get", "keys", Scope.KEYS_WRITE),
    ("post", "keys", Scope.KEYS_WRITE),
    ("post", "keys/roll", Scope.KEYS_WRITE),
    ("delete", "keys/1", Scope.KEYS_WRITE),
    ("post", "test-helpers/wallet/fund", Scope.TEST_HELPERS_WRITE),
    ("post", "test-helpers/payouts/1/return", Scope.TEST_HELPERS_WRITE),
    ("post", "test-helpers/transactions/TXN_X/complete", Scope.TEST_HELPERS_WRITE),
    ("post", "test-helpers/settlements/run", Scope.TEST_HELPERS_WRITE),
    ("post", "test-helpers/sweep/settlement-account/activate", Scope.TEST_HELPERS_WRITE),
]


@pytest.fixture
def read_only_client(
    merchant_account: MerchantCreated, client_for: Callable[[str], APIClient]
) -> APIClient:
    key = RestrictedKeyFactory(merchant=merchant_account.merchant, scopes=[Scope.READ])
    return client_for(key.plaintext)


@pytest.mark.parametrize(("method", "path", "scope"), WRITE_ROUTES, ids=lambda v: str(v))
def test_a_read_only_key_gets_403_naming_the_scope_on_every_write_route(
    read_only_client: APIClient, method: str, path: str, scope: str
) -> None:
    keys_before = SecretKey.objects.count()
    response = getattr(read_only_client, method)(API + path, {}, format="json")
    assert response.status_code == 403, response.content
    assert response.json() == {
        "status": False,
        "message": f"This key lacks the scope {scope}",
        "data": None,
        "statusCode": 403,
    }
    assert SecretKey.objects.count() == keys_before


def test_a_read_only_key_cannot_create_a_payout_and_nothing_is_reserved(
    merchant_account: MerchantCreated, read_only_client: APIClient
) -> None:
    body = {
        "account_number": "0123456789",
        "bank_code": "058",
        "amount": "10.00",
        "idempotency_key": "read-only-1",
    }
    response = read_only_client.post(f"{API}transactions/in/merchant-wallet/payouts", body)
    assert response.status_code == 403
    assert response.json()["message"] == "This key lacks the scope payouts:write"
    assert not Payout.objects.exists()


def test_a_key_with_the_scope_passes_and_one_without_read_cannot_read(
    merchant_account: MerchantCreated, client_for: Callable[[str], APIClient]
) -> None:
    writer = client_for(
        RestrictedKeyFactory(
            merchant=merchant_account.merchant, scopes=[Scope.PAYOUTS_WRITE]
        ).plaintext
    )
    quote = writer.post(f"{API}transactions/in/merchant-wallet/payouts/quote", {"amount": "1"})
    assert quote.json()["message"] == "This key lacks the scope read"
    enquiry = writer.post(
        f"{API}transactions/in/merchant-wallet/payouts/name-enquiry",
        {"account_number": "0123456789", "bank_code": "058"},
        format="json",
    )
    assert enquiry.status_code == 200


def test_a_payment_item_route_refuses_a_missing_scope_in_its_own_403_shape(
    merchant_account: MerchantCreated, client_for: Callable[[str], APIClient]
) -> None:
    key = RestrictedKeyFactory(merchant=merchant_account.merchant, scopes=[Scope.PAYOUTS_WRITE])
    response = client_for(key.plaintext).get(f"{API}transactions/in/payment-items")
    assert response.status_code == 403
    assert response.json() == {
        "message": "This key lacks the scope read",
        "error": "Forbidden",
        "statusCode": 403,
    }


def test_the_secret_key_holds_every_scope(test_client: APIClient) -> None:
    assert test_client.get(f"{API}keys").status_code == 200
    assert test_client.get(f"{API}transactions/in/merchant-wallet").status_code == 200


def test_a_method_a_route_does_not_answer_is_still_a_405(read_only_client: APIClient) -> None:
    response = read_only_client.delete(f"{API}transactions/in/merchant-wallet")
    assert response.status_code == 405


def test_head_needs_what_get_needs(
    merchant_account: MerchantCreated, client_for: Callable[[str], APIClient]
) -> None:
    key = RestrictedKeyFactory(merchant=merchant_account.merchant, scopes=[Scope.PAYOUTS_WRITE])
    assert client_for(key.plaintext).head(f"{API}transactions/in/merchant-wallet").status_code == (
        403
    )


def test_options_needs_any_scope_the_route_declares(
    merchant_account: MerchantCreated, client_for: Callable[[str], APIClient]
) -> None:
    payouts = f"{API}transactions/in/merchant-wallet/payouts"
    reader = RestrictedKeyFactory(merchant=merchant_account.merchant, scopes=[Scope.READ])
    assert client_for(reader.plaintext).options(payouts).status_code == 200
    refunder = RestrictedKeyFactory(
        merchant=merchant_account.merchant, scopes=[Scope.REFUNDS_WRITE]
    )
    assert client_for(refunder.plaintext).options(payouts).status_code == 403


# --- failing closed -------------------------------------------------------------------------------


def test_a_route_that_declares_no_scope_answers_no_key(test_client: APIClient) -> None:
    response = test_client.get("/t/undeclared")
    assert response.status_code == 403
    assert response.json()["message"] == (
        "This route declares no scope for GET; no key may call it"
    )
    assert test_client.post("/t/undeclared", {}, format="json").status_code == 403


def test_without_a_key_an_undeclared_route_still_answers_the_authentication_failure(
    api_client: APIClient,
) -> None:
    assert api_client.get("/t/undeclared").status_code == 401


def test_the_schema_names_each_operations_scope_and_its_403(api_client: APIClient) -> None:
    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    payouts = schema["paths"]["/api/v1/transactions/in/merchant-wallet/payouts"]
    assert payouts["post"]["x-required-scope"] == "payouts:write"
    assert payouts["get"]["x-required-scope"] == "read"
    assert "403" in payouts["post"]["responses"]
    assert "payouts:write" in payouts["post"]["description"]
    keyed = [
        operation
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if path.startswith("/api/v1/")
        and method in ("get", "post", "put", "patch", "delete")
        and "webhooks/" not in path
    ]
    assert keyed and all(operation.get("x-required-scope") for operation in keyed)
