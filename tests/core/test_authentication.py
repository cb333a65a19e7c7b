"""Bearer authentication and the three failure shapes of the interface specification
(docs/spec.md, "5. Authentication" and "Response envelope")."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from merchants.models import Mode
from merchants.services import secret_key_rotate

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.core.urls")]

UNAUTHORIZED_BODY = {
    "status": False,
    "message": "Unauthorized: invalid or missing secret key",
    "data": None,
    "statusCode": 401,
}
FORBIDDEN_BODY = {"status": False, "message": "Forbidden resource", "data": None, "statusCode": 403}
BARE_FORBIDDEN_BODY = {"message": "Forbidden resource", "error": "Forbidden", "statusCode": 403}

STYLES = [
    ("/t/unauthorized", 401, UNAUTHORIZED_BODY),
    ("/t/forbidden", 403, FORBIDDEN_BODY),
    ("/t/bare", 403, BARE_FORBIDDEN_BODY),
]


@pytest.mark.parametrize(("path", "status_code", "body"), STYLES)
def test_missing_header(api_client: APIClient, path: str, status_code: int, body: dict) -> None:
    response = api_client.get(path)
    assert response.status_code == status_code
    assert response.json() == body


@pytest.mark.parametrize(("path", "status_code", "body"), STYLES)
def test_wrong_scheme(
    api_client: APIClient, merchant_account, path: str, status_code: int, body: dict
) -> None:
    api_client.credentials(HTTP_AUTHORIZATION=f"Basic {merchant_account.test_key.plaintext}")
    response = api_client.get(path)
    assert response.status_code == status_code
    assert response.json() == body


@pytest.mark.parametrize(("path", "status_code", "body"), STYLES)
def test_unknown_key(
    api_client: APIClient, db: None, path: str, status_code: int, body: dict
) -> None:
    api_client.credentials(HTTP_AUTHORIZATION="Bearer sk_test_" + "x" * 43)
    response = api_client.get(path)
    assert response.status_code == status_code
    assert response.json() == body


@pytest.mark.parametrize(("path", "status_code", "body"), STYLES)
def test_revoked_key(client_for, merchant_account, path: str, status_code: int, body: dict) -> None:
    old_key = merchant_account.test_key.plaintext
    secret_key_rotate(merchant=merchant_account.merchant, mode=Mode.TEST)
    response = client_for(old_key).get(path)
    assert response.status_code == status_code
    assert response.json() == body


def test_rotated_key_authenticates(client_for, merchant_account) -> None:
    issued = secret_key_rotate(merchant=merchant_account.merchant, mode=Mode.TEST)
    response = client_for(issued.plaintext).get("/t/unauthorized")
    assert response.status_code == 200


def test_bearer_scheme_is_case_insensitive(api_client: APIClient, merchant_account) -> None:
    api_client.credentials(HTTP_AUTHORIZATION=f"bearer {merchant_account.test_key.plaintext}")
    assert api_client.get("/t/unauthorized").status_code == 200


def test_unauthorized_carries_www_authenticate(api_client: APIClient) -> None:
    response = api_client.get("/t/unauthorized")
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_mode_comes_from_the_key(test_client: APIClient, live_client: APIClient) -> None:
    assert test_client.get("/t/unauthorized").json()["data"]["mode"] == "test"
    assert live_client.get("/t/unauthorized").json()["data"]["mode"] == "live"


def test_inactive_merchant_is_refused(test_client: APIClient, merchant_account) -> None:
    merchant_account.merchant.is_active = False
    merchant_account.merchant.save()
    assert test_client.get("/t/unauthorized").status_code == 401


def test_key_and_merchant_are_read_in_one_query(test_client, django_assert_num_queries) -> None:
    with django_assert_num_queries(1) as captured:  # the throttle counts in the cache
        response = test_client.get("/t/unauthorized")
    assert response.status_code == 200
    assert response.json()["data"]["merchant_id"] is not None
    sql = captured.captured_queries[0]["sql"]
    assert '"merchants_secretkey"' in sql and '"merchants_merchant"' in sql
