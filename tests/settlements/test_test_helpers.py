"""``POST /api/v1/test-helpers/settlements/run``: a test key settles its paid test collections
now; a live key gets 403 in the envelope and nothing changes."""

from __future__ import annotations

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from merchants.models import Mode
from merchants.services import MerchantCreated
from settlements.models import Settlement
from tests.settlements.helpers import paid_collection, wallet_of

pytestmark = pytest.mark.django_db
URL = "/api/v1/test-helpers/settlements/run"


def test_a_test_key_settles_now_and_gets_the_settlements(
    test_client: APIClient, merchant_account: MerchantCreated
) -> None:
    merchant = merchant_account.merchant
    paid_collection(merchant=merchant)
    paid_collection(merchant=merchant, amount=Decimal("1000.00"), fee=Decimal("15.00"))

    response = test_client.post(URL, format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Settlement run completed"
    [settled] = body["data"]["settlements"]
    assert settled["settlement_id"] == Settlement.objects.get().settlement_id
    assert (settled["transaction_count"], settled["gross"], settled["net"]) == (
        2,
        "8220.00",
        "8000.00",
    )
    assert wallet_of(merchant).available_balance == Decimal("8000.00")


def test_nothing_to_settle_answers_an_empty_list(test_client: APIClient) -> None:
    response = test_client.post(URL, format="json")

    assert response.status_code == 200
    assert response.json()["data"] == {"settlements": []}
    assert response.json()["message"] == "Nothing to settle"


def test_a_live_key_gets_403_and_nothing_is_settled(
    live_client: APIClient, merchant_account: MerchantCreated
) -> None:
    merchant = merchant_account.merchant
    paid_collection(merchant=merchant, mode=Mode.LIVE)
    paid_collection(merchant=merchant, mode=Mode.TEST)

    response = live_client.post(URL, format="json")

    assert response.status_code == 403
    body = response.json()
    assert (body["status"], body["statusCode"], body["data"]) == (False, 403, None)
    assert "test secret key" in body["message"]
    assert not Settlement.objects.exists()
    assert wallet_of(merchant, Mode.LIVE).available_balance == Decimal("0.00")


def test_without_a_key_the_route_answers_401(api_client: APIClient) -> None:
    assert api_client.post(URL, format="json").status_code == 401
