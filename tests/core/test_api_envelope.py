"""The envelope renderer and exception handler, through real requests."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from core.api.exceptions import validation_message

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.core.urls")]


def test_success_is_wrapped_in_the_envelope(test_client: APIClient, merchant_account) -> None:
    response = test_client.get("/t/unauthorized")
    assert response.status_code == 200
    assert response.json() == {
        "status": True,
        "message": "ok",
        "data": {"merchant_id": merchant_account.merchant.pk, "mode": "test"},
        "statusCode": 200,
    }


def test_validation_error_names_the_field_and_the_rule(test_client: APIClient) -> None:
    response = test_client.post("/t/unauthorized", {"amount": "1e3"}, format="json")
    body = response.json()
    assert response.status_code == 400
    assert body["status"] is False and body["data"] is None and body["statusCode"] == 400
    assert body["message"].startswith("amount: must be a positive decimal string")


def test_missing_required_field_is_named(test_client: APIClient) -> None:
    response = test_client.post("/t/unauthorized", {}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == "amount: This field is required."


def test_unknown_field_is_rejected_by_name(test_client: APIClient) -> None:
    response = test_client.post(
        "/t/unauthorized", {"amount": "10.00", "account_name": "X"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["message"] == "account_name: is not an accepted field"


def test_amount_is_echoed_as_a_two_decimal_string(test_client: APIClient) -> None:
    response = test_client.post("/t/unauthorized", {"amount": "100"}, format="json")
    assert response.json()["data"] == {"amount": "100.00"}


def test_malformed_json_is_a_400_envelope(test_client: APIClient) -> None:
    response = test_client.generic(
        "POST", "/t/unauthorized", data='{"amount": ', content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "status": False,
        "message": "Malformed JSON body",
        "data": None,
        "statusCode": 400,
    }


def test_body_over_the_limit_is_a_413_envelope(test_client: APIClient, settings) -> None:
    settings.REQUEST_BODY_MAX_BYTES = 1024
    response = test_client.generic(
        "POST",
        "/t/unauthorized",
        data='{"amount": "' + "9" * 2000 + '"}',
        content_type="application/json",
    )
    assert response.status_code == 413
    assert response.json()["statusCode"] == 413
    assert response.json()["data"] is None


def test_unknown_route_is_a_404_envelope(api_client: APIClient) -> None:
    response = api_client.get("/api/v1/does-not-exist")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "status": False,
        "message": "Route not found",
        "data": None,
        "statusCode": 404,
    }


def test_wrong_method_is_a_405_envelope(test_client: APIClient) -> None:
    response = test_client.delete("/t/unauthorized")
    assert response.status_code == 405
    assert response.json()["status"] is False
    assert response.json()["statusCode"] == 405


def test_unhandled_exception_is_a_500_envelope_without_internals(
    test_client: APIClient,
) -> None:
    response = test_client.get("/t/broken")
    assert response.status_code == 500
    assert response.json() == {
        "status": False,
        "message": "Internal server error",
        "data": None,
        "statusCode": 500,
    }
    assert b"hunter2" not in response.content


def test_an_error_inside_a_list_is_named_by_its_index_in_brackets() -> None:
    """A list field's per-element errors (DRF keys them by index) read ``items[3].amount``,
    as everywhere else, never ``items.3.amount``."""
    detail = {"items": {3: {"amount": ["must be positive"]}, 5: ["may not be null"]}}

    assert validation_message(detail) == (
        "items[3].amount: must be positive; items[5]: may not be null"
    )
