"""Live ``initialize`` calls the provider with no database transaction or row lock open: the
transaction is committed first, Paystack is called, and its answer is applied in a second short
transaction. A refusal leaves the transaction ``failed`` with the provider's message; an
unreachable provider leaves it ``pending`` without an authorization URL until a retry with the
same ``transaction_reference`` attaches one."""

from __future__ import annotations

import json
import threading
from decimal import Decimal
from typing import Any

import pytest
import responses
from django.db import connection, connections
from rest_framework.test import APIClient

from collections_app.models import CollectionTransaction, Customer, PaymentStatus
from merchants.models import Merchant, Mode
from payment_items.models import PaymentItem
from tests.collections_app.conftest import initialize_payload
from tests.collections_app.helpers import PAYSTACK_BASE_URL, paystack_initialize_answer
from tests.payment_items.factories import PaymentItemFactory
from webhooks.models import Event

INITIALIZE = f"{PAYSTACK_BASE_URL}/transaction/initialize"
INITIALIZE_PATH = "/api/v1/transactions/in/initialize"
UNAVAILABLE_MESSAGE = (
    "The payment provider is unavailable; retry with the same transaction_reference"
)


@pytest.fixture
def live_item(merchant: Merchant, fee_schedule) -> PaymentItem:  # type: ignore[no-untyped-def]
    return PaymentItemFactory(merchant=merchant, mode=Mode.LIVE, amount=Decimal("7000.00"))


def _writes_from_another_connection(customer_email: str, reference: str) -> list[str]:
    """Updates the customer and transaction rows from a second connection that refuses to
    wait: any lock or open write transaction of the first connection makes it fail."""
    errors: list[str] = []

    def write() -> None:
        other = connections.create_connection("default")
        try:
            with other.cursor() as cursor:
                cursor.execute("SET lock_timeout = '500ms'")
            with other.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {Customer._meta.db_table} SET updated_at = updated_at "  # noqa: S608
                    "WHERE email = %s",
                    [customer_email],
                )
                cursor.execute(
                    f"UPDATE {CollectionTransaction._meta.db_table} "  # noqa: S608
                    "SET updated_at = updated_at WHERE reference = %s",
                    [reference],
                )
            if not other.get_autocommit():
                other.commit()
        except Exception as error:  # noqa: BLE001 - reported to the test
            errors.append(repr(error))
        finally:
            other.close()

    thread = threading.Thread(target=write)
    thread.start()
    thread.join(timeout=30)
    return errors


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_provider_is_called_with_no_transaction_or_lock_open(
    live_client: APIClient, live_item: PaymentItem, paystack
) -> None:  # type: ignore[no-untyped-def]
    seen: dict[str, Any] = {}

    def reply(request: Any) -> tuple[int, dict[str, str], str]:
        reference = json.loads(request.body)["reference"]
        seen["in_atomic_block"] = connection.in_atomic_block
        seen["autocommit"] = connection.get_autocommit()
        committed = CollectionTransaction.objects.get(reference=reference)
        seen["status"] = committed.payment_status
        seen["authorization_url"] = committed.authorization_url
        seen["blocked_writes"] = _writes_from_another_connection("ada.obi@example.com", reference)
        return 200, {}, json.dumps(paystack_initialize_answer(reference))

    paystack.add_callback("POST", INITIALIZE, callback=reply, content_type="application/json")
    response = live_client.post(INITIALIZE_PATH, initialize_payload(live_item), format="json")

    assert response.status_code == 200, response.content
    assert seen == {
        "in_atomic_block": False,
        "autocommit": True,
        "status": PaymentStatus.PENDING,
        "authorization_url": None,
        "blocked_writes": [],
    }
    created = CollectionTransaction.objects.get()
    assert response.json()["data"]["authorization_url"] == created.authorization_url
    assert created.authorization_url == f"https://checkout.paystack.com/{created.reference.lower()}"
    assert [entry["operation"] for entry in created.provider_responses] == [
        "paystack.transaction_initialize"
    ]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_refusal_leaves_the_transaction_failed_with_the_providers_message(
    live_client: APIClient, live_item: PaymentItem, paystack
) -> None:  # type: ignore[no-untyped-def]
    paystack.add(
        responses.POST, INITIALIZE, status=400, json={"status": False, "message": "Invalid Email"}
    )
    response = live_client.post(INITIALIZE_PATH, initialize_payload(live_item), format="json")

    assert response.status_code == 400
    assert response.json()["message"] == (
        "The payment provider refused the transaction: Invalid Email"
    )
    refused = CollectionTransaction.objects.get()
    assert refused.payment_status == PaymentStatus.FAILED
    assert refused.authorization_url is None
    assert refused.meta_data == {"provider_message": "Invalid Email"}
    assert refused.provider_responses[0]["http_status"] == 400
    assert Event.objects.filter(event_type="transaction.failed").count() == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_replay_of_a_refused_transaction_is_the_same_refusal_without_a_provider_call(
    live_client: APIClient, live_item: PaymentItem, paystack
) -> None:  # type: ignore[no-untyped-def]
    paystack.add(
        responses.POST, INITIALIZE, status=400, json={"status": False, "message": "Invalid Email"}
    )
    live_client.post(INITIALIZE_PATH, initialize_payload(live_item), format="json")
    replay = live_client.post(INITIALIZE_PATH, initialize_payload(live_item), format="json")

    assert replay.status_code == 400
    assert replay.json()["message"] == "The payment provider refused the transaction: Invalid Email"
    assert len(paystack.calls) == 1
    different = live_client.post(
        INITIALIZE_PATH, initialize_payload(live_item, channel="bank"), format="json"
    )
    assert different.status_code == 409
    assert CollectionTransaction.objects.count() == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_unreachable_provider_leaves_it_pending_and_a_retry_attaches_the_checkout(
    live_client: APIClient, live_item: PaymentItem, paystack
) -> None:  # type: ignore[no-untyped-def]
    paystack.add(responses.POST, INITIALIZE, status=503, body="unavailable")
    response = live_client.post(INITIALIZE_PATH, initialize_payload(live_item), format="json")

    assert response.status_code == 503
    assert response.json()["message"] == UNAVAILABLE_MESSAGE
    waiting = CollectionTransaction.objects.get()
    assert waiting.payment_status == PaymentStatus.PENDING
    assert waiting.authorization_url is None
    assert waiting.provider_responses[0]["http_status"] == 503
    first_reference = json.loads(paystack.calls[0].request.body)["reference"]
    assert first_reference == waiting.reference

    paystack.replace(
        responses.POST, INITIALIZE, json=paystack_initialize_answer("TXN_FROM_PROVIDER")
    )
    retried = live_client.post(INITIALIZE_PATH, initialize_payload(live_item), format="json")

    assert retried.status_code == 200
    assert retried.json()["message"] == "Transaction initialized"
    attached = CollectionTransaction.objects.get()
    second_reference = json.loads(paystack.calls[1].request.body)["reference"]
    # A new provider reference: the first may exist at the provider without our knowing.
    assert second_reference != first_reference
    assert attached.reference == second_reference
    assert retried.json()["data"]["reference"] == second_reference
    assert attached.authorization_url == "https://checkout.paystack.com/txn_from_provider"
    assert [entry["http_status"] for entry in attached.provider_responses] == [503, 200]
    again = live_client.post(INITIALIZE_PATH, initialize_payload(live_item), format="json")
    assert again.json()["message"] == "Transaction already initialized"
    assert again.json()["data"]["authorization_url"] == attached.authorization_url
    assert len(paystack.calls) == 2


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_concurrent_replay_during_the_provider_call_gets_the_same_checkout(
    live_client: APIClient, live_item: PaymentItem, paystack
) -> None:  # type: ignore[no-untyped-def]
    answers: list[Any] = []
    calls: list[str] = []

    def reply(request: Any) -> tuple[int, dict[str, str], str]:
        reference = json.loads(request.body)["reference"]
        calls.append(reference)
        if len(calls) == 1:  # the first call: a second request arrives meanwhile
            answers.append(
                live_client.post(INITIALIZE_PATH, initialize_payload(live_item), format="json")
            )
        return 200, {}, json.dumps(paystack_initialize_answer(reference))

    paystack.add_callback("POST", INITIALIZE, callback=reply, content_type="application/json")
    first = live_client.post(INITIALIZE_PATH, initialize_payload(live_item), format="json")
    (second,) = answers

    assert first.status_code == 200 and second.status_code == 200
    assert first.json()["data"] == second.json()["data"]
    settled = CollectionTransaction.objects.get()
    assert first.json()["data"]["reference"] == settled.reference
    assert first.json()["data"]["authorization_url"] == settled.authorization_url


def test_test_mode_initialize_calls_no_provider(
    test_client: APIClient, merchant: Merchant, fee_schedule, paystack
) -> None:  # type: ignore[no-untyped-def]
    item = PaymentItemFactory(merchant=merchant, mode=Mode.TEST, amount=Decimal("7000.00"))
    response = test_client.post(INITIALIZE_PATH, initialize_payload(item), format="json")
    assert response.status_code == 200
    assert len(paystack.calls) == 0
    assert response.json()["data"]["authorization_url"].endswith(
        f"/checkout/{response.json()['data']['reference']}"
    )
