"""The one Flutterwave client against Flutterwave-shaped answers (``responses``): the key goes
in the ``Authorization`` header and never into the audit record, every "try again later" case
is classified, naira amounts are written exactly, and the ``verif-hash`` check.

Shapes from https://developer.flutterwave.com/docs/integration-guides/errors (the error envelope,
401 ``Authorization required``) and https://developer.flutterwave.com/docs/integration-guides/webhooks
(``verif-hash``: the secret hash from the dashboard, sent as it is).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest
import requests
import responses
from responses import matchers

from core.provider_http import RetryLater
from integrations.flutterwave import (
    FlutterwaveClient,
    flutterwave_webhook_hash_valid,
    json_body_encode,
    naira_json_number,
)

BASE = "https://api.flutterwave.test/v3"
SECRET = "FLWSECK_TEST-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d-X"
BANKS = {
    "status": "success",
    "message": "Banks fetched successfully",
    "data": [
        {"id": 1, "code": "044", "name": "Access Bank"},
        {"id": 9, "code": "058", "name": "GTBank Plc"},
    ],
}


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as mock:
        yield mock


@pytest.fixture
def client() -> FlutterwaveClient:
    return FlutterwaveClient(base_url=BASE, secret_key=SECRET, timeout_seconds=2)


def banks(client: FlutterwaveClient):  # type: ignore[no-untyped-def]
    return client.request("GET", "/banks/NG", operation="flutterwave.banks")


def test_a_good_answer_carries_the_key_only_in_the_header(rsps, client) -> None:
    rsps.get(
        f"{BASE}/banks/NG",
        json=BANKS,
        match=[matchers.header_matcher({"Authorization": f"Bearer {SECRET}"})],
    )
    answer = banks(client)
    assert answer.ok
    assert answer.retry_later is None
    assert [bank["code"] for bank in answer.data_items] == ["044", "058"]
    assert answer.data == {}
    assert answer.message == "Banks fetched successfully"
    assert answer.exchange.operation == "flutterwave.banks"
    assert SECRET not in json.dumps(answer.exchange.as_dict())


def test_an_echoed_key_is_redacted_from_the_kept_answer(rsps, client) -> None:
    rsps.get(f"{BASE}/banks/NG", json={**BANKS, "message": f"key {SECRET} used"})
    answer = banks(client)
    assert SECRET not in json.dumps(answer.exchange.as_dict())
    assert SECRET not in answer.message


def test_error_status_is_not_ok(rsps, client) -> None:
    rsps.get(f"{BASE}/banks/NG", json={"status": "error", "message": "nope", "data": None})
    answer = banks(client)
    assert not answer.ok
    assert answer.retry_later is None


@pytest.mark.parametrize(
    ("status_code", "retry_later"),
    [
        (401, RetryLater.CREDENTIALS),
        (403, RetryLater.CREDENTIALS),
        (429, RetryLater.THROTTLED),
        (500, RetryLater.SERVER_ERROR),
        (503, RetryLater.SERVER_ERROR),
        (400, None),
    ],
)
def test_status_codes_are_classified(rsps, client, status_code, retry_later) -> None:
    rsps.get(
        f"{BASE}/banks/NG",
        json={"status": "error", "message": "Authorization required", "data": None},
        status=status_code,
    )
    answer = banks(client)
    assert answer.http_status == status_code
    assert answer.retry_later == retry_later


def test_unreadable_json_is_retried_later(rsps, client) -> None:
    rsps.get(f"{BASE}/banks/NG", body="<html>upstream</html>", status=200)
    answer = banks(client)
    assert answer.retry_later == RetryLater.UNREADABLE
    assert answer.body == {}
    assert answer.exchange.body == "<html>upstream</html>"


@pytest.mark.parametrize(
    ("error", "retry_later", "never_sent"),
    [
        (requests.ConnectTimeout(), RetryLater.CONNECT_TIMEOUT, True),
        (requests.ReadTimeout(), RetryLater.READ_TIMEOUT, False),
        (requests.ConnectionError("Connection aborted."), RetryLater.CONNECTION_LOST, False),
    ],
)
def test_transport_errors_are_classified(rsps, client, error, retry_later, never_sent) -> None:
    rsps.get(f"{BASE}/banks/NG", body=error)
    answer = banks(client)
    assert answer.http_status is None
    assert answer.retry_later == retry_later
    assert answer.retry_later.never_sent is never_sent
    assert answer.exchange.error == type(error).__name__


def test_without_a_key_nothing_is_sent(rsps) -> None:
    client = FlutterwaveClient(base_url=BASE, secret_key="", timeout_seconds=2)
    answer = banks(client)
    assert answer.retry_later == RetryLater.NOT_CONFIGURED
    assert len(rsps.calls) == 0
    assert not client.configured


def test_the_key_is_not_in_the_clients_repr(client) -> None:
    assert SECRET not in repr(client)


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (Decimal("5500.00"), "5500"),
        (Decimal("5500"), "5500"),
        (Decimal("1500.5"), "1500.50"),
        (Decimal("0.01"), "0.01"),
        (Decimal("999999999999.99"), "999999999999.99"),
        (Decimal("1000000000000.00"), "1000000000000"),
    ],
)
def test_naira_amounts_are_written_exactly(amount: Decimal, text: str) -> None:
    assert naira_json_number(amount) == text
    assert json.loads(text, parse_float=Decimal, parse_int=Decimal) == amount


@pytest.mark.parametrize("amount", [Decimal("1.005"), Decimal("NaN"), Decimal("Infinity")])
def test_inexact_amounts_are_refused(amount: Decimal) -> None:
    with pytest.raises(ValueError):
        naira_json_number(amount)


def test_a_float_is_never_encoded() -> None:
    with pytest.raises(TypeError):
        json_body_encode({"amount": 1500.5})


def test_the_body_is_json_with_exact_numbers() -> None:
    body = json_body_encode(
        {"amount": Decimal("10.10"), "reference": "po_1", "meta": {"note": 'a "b"'}, "n": None}
    )
    assert body == b'{"amount":10.10,"reference":"po_1","meta":{"note":"a \\"b\\""},"n":null}'


def test_webhook_hash_must_equal_the_configured_one(settings) -> None:
    settings.FLUTTERWAVE_WEBHOOK_HASH = "my-secret-hash"
    assert flutterwave_webhook_hash_valid("my-secret-hash")
    assert not flutterwave_webhook_hash_valid("my-secret-hasH")
    assert not flutterwave_webhook_hash_valid("")
    assert not flutterwave_webhook_hash_valid(None)
    assert not flutterwave_webhook_hash_valid("ünïcode")


def test_no_configured_hash_accepts_nothing(settings) -> None:
    settings.FLUTTERWAVE_WEBHOOK_HASH = ""
    assert not flutterwave_webhook_hash_valid("")
    assert not flutterwave_webhook_hash_valid("anything")
