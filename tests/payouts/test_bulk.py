"""Bulk payouts (an extension beside docs/spec.md's routes): ``POST …/payouts/bulk``,
``GET …/payouts/bulk/{id}`` and the payout list's ``batch_id`` filter.

Each item is held to the single create's rules, messages and idempotency; these tests compare
an item's answer with what ``POST …/payouts`` answers for the same body."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from decimal import Decimal
from itertools import count
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from beneficiaries.services import beneficiary_create, beneficiary_delete
from core.api.throttling import SecretKeyRateThrottle
from core.money import AMOUNT_RULE
from merchants.models import Mode
from payouts.models import Payout, PayoutBatch, PayoutStatus
from payouts.services import bulk as bulk_services
from payouts.services import payout_create, payout_dispatch
from tests.payouts.helpers import (
    GOOD_ACCOUNT,
    GTB_CODE,
    PAYOUTS_URL,
    assert_wallet_balanced,
    fund_wallet,
    new_idempotency_key,
)
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from wallets.providers.sandbox import UNAVAILABLE_ACCOUNT_NUMBER, UNRESOLVABLE_ACCOUNT_NUMBER
from wallets.selectors import wallet_get

pytestmark = pytest.mark.django_db

BULK_URL = f"{PAYOUTS_URL}/bulk"
BATCH_KEYS = {
    "id",
    "batch_reference",
    "status",
    "atomic",
    "currency",
    "total_items",
    "accepted",
    "duplicates",
    "rejected",
    "total_amount",
    "total_fee_amount",
    "total_debit_amount",
    "created_at",
}
FEE = Decimal("10.00")  # the seeded schedule's fee for these amounts
_references = count(1)


def batch_url(batch_id: int) -> str:
    return f"{BULK_URL}/{batch_id}"


def item(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "account_number": GOOD_ACCOUNT,
        "bank_code": GTB_CODE,
        "amount": "1000.00",
        "narration": "March salary",
        "idempotency_key": new_idempotency_key(),
    }
    body.update(overrides)
    return {key: value for key, value in body.items() if value is not ...}


def bulk_body(items: list[Any], **overrides: Any) -> dict[str, Any]:
    return {"batch_reference": f"batch-{next(_references)}", "items": items, **overrides}


def post_json(client: APIClient, url: str, body: Any) -> Any:
    return client.post(url, json.dumps(body), content_type="application/json")


def post_bulk(client: APIClient, body: Any) -> Any:
    return post_json(client, BULK_URL, body)


def error(response: Any, status_code: int, message: str) -> None:
    assert response.status_code == status_code, response.content
    assert response.json() == {
        "status": False,
        "message": message,
        "data": None,
        "statusCode": status_code,
    }


def results(response: Any) -> list[str]:
    return [entry["result"] for entry in response.json()["data"]["items"]]


def reserve_entries() -> int:
    return LedgerEntry.objects.filter(entry_type=LedgerEntryType.PAYOUT_RESERVE).count()


def after_prepare(monkeypatch: pytest.MonkeyPatch, action: Callable[[], Any]) -> None:
    """Runs ``action`` between the checks of a bulk create and its transaction, as a
    concurrent request would."""
    prepare = bulk_services._batch_prepare

    def prepare_then_act(**kwargs: Any) -> Any:
        steps = prepare(**kwargs)
        action()
        return steps

    monkeypatch.setattr(bulk_services, "_batch_prepare", prepare_then_act)


# --- Accepted, duplicate, rejected --------------------------------------------------------------


def test_each_item_is_accepted_duplicate_or_rejected_in_request_order(
    test_client, funded_wallet, create_payout, merchant_account
) -> None:
    earlier = create_payout(idempotency_key="earlier-key", narration="Invoice 42").payout
    other = create_payout(idempotency_key="other-key", narration="Invoice 43").payout
    saved = beneficiary_create(
        merchant=merchant_account.merchant,
        mode=Mode.TEST,
        account_number="0123456780",
        bank_code=GTB_CODE,
    ).beneficiary
    rejected_bodies = {
        2: item(amount="12.345"),
        3: item(bank_code="999"),
        4: item(account_number=UNRESOLVABLE_ACCOUNT_NUMBER),
        5: item(idempotency_key="other-key", amount="1000.01", narration="Invoice 43"),
        6: {"beneficiary_id": 987654, "amount": "10.00", "idempotency_key": "unknown-saved"},
        7: item(account_number=UNAVAILABLE_ACCOUNT_NUMBER),
        8: item(account_name="SOMEONE"),
        9: item(bank_id=1, beneficiary_id=saved.pk),
    }
    items = [
        item(amount="2500.50"),
        item(idempotency_key="earlier-key", amount="1000", narration="Invoice 42"),
        *rejected_bodies.values(),
        {"beneficiary_id": saved.pk, "amount": "700", "idempotency_key": "to-saved"},
    ]
    body = bulk_body(items)

    response = post_bulk(test_client, body)

    assert response.status_code == 202, response.content
    payload = response.json()
    assert payload["message"] == "Bulk payout accepted for processing"
    assert payload["statusCode"] == 202
    data = payload["data"]
    assert data["duplicate"] is False
    assert results(response) == ["accepted", "duplicate", *["rejected"] * 8, "accepted"]
    assert [entry["index"] for entry in data["items"]] == list(range(11))
    assert [entry["idempotency_key"] for entry in data["items"]] == [
        entry.get("idempotency_key") for entry in items
    ]
    first, duplicate, last = data["items"][0], data["items"][1], data["items"][10]
    assert first["error"] is None and first["payout"]["status"] == "reserved"
    assert first["payout"]["amount"] == "2500.50"
    assert first["payout"]["total_debit_amount"] == "2510.50"
    assert duplicate["payout"]["id"] == earlier.pk
    assert last["payout"]["beneficiary"]["account_number"] == "0123456780"
    # A rejected item answers exactly what a single create answers for the same body.
    for index, rejected in rejected_bodies.items():
        entry = data["items"][index]
        assert entry["payout"] is None
        single = post_json(test_client, PAYOUTS_URL, rejected).json()
        assert entry["error"] == {
            "message": single["message"],
            "statusCode": single["statusCode"],
        }, index
    assert {data["items"][i]["error"]["statusCode"] for i in (2, 3, 4, 5, 6, 7, 8, 9)} == {
        400,
        404,
        409,
        503,
    }

    batch = data["batch"]
    assert set(batch) == BATCH_KEYS
    assert batch["batch_reference"] == body["batch_reference"]
    assert batch["status"] == "partially_accepted"
    assert (batch["total_items"], batch["accepted"], batch["duplicates"], batch["rejected"]) == (
        11,
        2,
        1,
        8,
    )
    assert batch["total_amount"] == "3200.50"
    assert batch["total_fee_amount"] == "20.00"
    assert batch["total_debit_amount"] == "3220.50"
    created = Payout.objects.filter(batch_id=batch["id"])
    assert sorted(created.values_list("pk", flat=True)) == sorted(
        [first["payout"]["id"], last["payout"]["id"]]
    )
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == (
        Decimal("3220.50") + earlier.total_debit_amount + other.total_debit_amount
    )
    assert reserve_entries() == 4
    assert_wallet_balanced(funded_wallet)


def test_a_key_used_in_a_batch_replays_in_a_single_create(test_client, funded_wallet) -> None:
    body = item(idempotency_key="batch-then-single")
    accepted = post_bulk(test_client, bulk_body([body])).json()["data"]["items"][0]["payout"]
    single = post_json(test_client, PAYOUTS_URL, body)
    assert single.status_code == 202
    assert single.json()["data"]["duplicate"] is True
    assert single.json()["data"]["payout"]["id"] == accepted["id"]
    conflict = post_json(test_client, PAYOUTS_URL, {**body, "amount": "5.00"})
    error(conflict, 409, "Idempotency key already used for a different payout request")


def test_a_rejected_item_leaves_its_key_unused(test_client, funded_wallet) -> None:
    rejected = item(idempotency_key="retry-me", amount="1000000")
    first = post_bulk(test_client, bulk_body([rejected]))
    assert results(first) == ["rejected"]
    assert first.json()["data"]["batch"]["status"] == "rejected"
    retried = post_bulk(test_client, bulk_body([{**rejected, "amount": "100"}]))
    assert results(retried) == ["accepted"]


def test_items_that_do_not_fit_the_balance_are_rejected_alone(test_client, test_wallet) -> None:
    wallet = fund_wallet(test_wallet, "3030.00")
    response = post_bulk(
        test_client,
        bulk_body([item(), item(), item(amount="5000"), item()]),
    )
    assert results(response) == ["accepted", "accepted", "rejected", "accepted"]
    assert response.json()["data"]["items"][2]["error"] == {
        "message": "insufficient available wallet balance",
        "statusCode": 400,
    }
    wallet.refresh_from_db()
    assert wallet.available_balance == Decimal("0.00")
    assert wallet.reserved_balance == Decimal("3030.00")
    assert_wallet_balanced(wallet)


def test_balance_spent_meanwhile_rejects_the_items_it_no_longer_covers(
    test_client, test_wallet, merchant_account, monkeypatch
) -> None:
    """The balance is checked again under the wallet lock: a payout made between the checks
    and the batch's transaction takes the money, and the items it no longer covers are
    rejected there, leaving nothing of theirs behind."""
    wallet = fund_wallet(test_wallet, "3030.00")
    after_prepare(
        monkeypatch,
        lambda: payout_create(
            merchant=merchant_account.merchant,
            mode=Mode.TEST,
            account_number=GOOD_ACCOUNT,
            bank_code=GTB_CODE,
            amount=Decimal("2000.00"),
            idempotency_key="meanwhile",
        ),
    )
    response = post_bulk(test_client, bulk_body([item(), item(), item()]))

    assert results(response) == ["accepted", "rejected", "rejected"]
    assert response.json()["data"]["items"][1]["error"]["message"] == (
        "insufficient available wallet balance"
    )
    batch = PayoutBatch.objects.get()
    assert Payout.objects.filter(batch=batch).count() == 1
    assert (batch.accepted_count, batch.rejected_count) == (1, 2)
    wallet.refresh_from_db()
    assert wallet.available_balance == Decimal("10.00")
    assert_wallet_balanced(wallet)


@pytest.mark.parametrize(
    ("same_parameters", "result", "error_body"),
    [
        (True, "duplicate", None),
        (
            False,
            "rejected",
            {
                "message": "Idempotency key already used for a different payout request",
                "statusCode": 409,
            },
        ),
    ],
    ids=["same-parameters", "other-parameters"],
)
def test_a_key_taken_meanwhile_answers_as_a_single_create_would(
    test_client, funded_wallet, merchant_account, monkeypatch, same_parameters, result, error_body
) -> None:
    """A concurrent request took an item's key after the batch's checks: the item's insert
    meets the unique constraint, and the item replays that payout or gets the 409."""
    taken = item(idempotency_key="taken-meanwhile", amount="300.00", narration=...)
    after_prepare(
        monkeypatch,
        lambda: payout_create(
            merchant=merchant_account.merchant,
            mode=Mode.TEST,
            account_number=GOOD_ACCOUNT,
            bank_code=GTB_CODE,
            amount=Decimal("300.00") if same_parameters else Decimal("301.00"),
            idempotency_key="taken-meanwhile",
        ),
    )
    response = post_bulk(test_client, bulk_body([item(), taken, item()]))

    assert results(response) == ["accepted", result, "accepted"]
    entry = response.json()["data"]["items"][1]
    assert entry["error"] == error_body
    other = Payout.objects.get(idempotency_key="taken-meanwhile")
    assert (entry["payout"] or {}).get("id") == (other.pk if same_parameters else None)
    assert Payout.objects.count() == 3
    assert reserve_entries() == 3
    assert_wallet_balanced(funded_wallet)


def test_an_all_rejected_batch_is_recorded_as_rejected(test_client, funded_wallet) -> None:
    response = post_bulk(test_client, bulk_body([item(amount="0"), item(bank_code="")]))
    assert response.status_code == 202
    batch = response.json()["data"]["batch"]
    assert (batch["status"], batch["accepted"], batch["rejected"]) == ("rejected", 0, 2)
    assert batch["total_debit_amount"] == "0.00"
    assert Payout.objects.count() == 0


def test_an_item_that_is_not_an_object_is_rejected_alone(test_client, funded_wallet) -> None:
    response = post_bulk(test_client, bulk_body(["0123456789", item()]))
    assert results(response) == ["rejected", "accepted"]
    assert response.json()["data"]["items"][0]["error"] == {
        "message": "must be a JSON object",
        "statusCode": 400,
    }
    assert response.json()["data"]["items"][0]["idempotency_key"] is None


def test_a_null_item_is_rejected_alone(test_client, funded_wallet) -> None:
    response = post_bulk(test_client, bulk_body([None, item()]))

    assert response.status_code == 202
    assert results(response) == ["rejected", "accepted"]
    assert response.json()["data"]["items"][0]["error"] == {
        "message": "must be a JSON object",
        "statusCode": 400,
    }


def test_a_null_item_of_an_atomic_batch_is_named_like_any_other(test_client, funded_wallet) -> None:
    response = post_bulk(test_client, bulk_body([item(), None], atomic=True))

    error(response, 400, "items[1]: must be a JSON object")
    assert Payout.objects.count() == 0


# --- Atomic ----------------------------------------------------------------------------------


def test_atomic_batch_reserves_every_item(test_client, funded_wallet) -> None:
    response = post_bulk(test_client, bulk_body([item(), item(amount="20")], atomic=True))
    assert response.status_code == 202
    assert results(response) == ["accepted", "accepted"]
    batch = response.json()["data"]["batch"]
    assert (batch["status"], batch["atomic"], batch["total_debit_amount"]) == (
        "accepted",
        True,
        "1040.00",
    )


@pytest.mark.parametrize(
    ("bad", "status_code", "message"),
    [
        ({"amount": "12.345"}, 400, "items[2].amount: " + AMOUNT_RULE),
        ({"amount": "1000000"}, 400, "items[2]: insufficient available wallet balance"),
        ({"bank_code": "999"}, 400, "items[2]: Beneficiary bank could not be resolved"),
        ({"account_number": "12345"}, 400, "items[2].account_number: must be exactly 10 digits"),
        (
            {"idempotency_key": "earlier-key"},
            409,
            "items[2]: Idempotency key already used for a different payout request",
        ),
        (
            {"account_number": UNAVAILABLE_ACCOUNT_NUMBER},
            503,
            "items[2]: Name enquiry temporarily unavailable, retry after a short delay",
        ),
    ],
    ids=["amount", "balance", "bank", "account", "key-conflict", "name-enquiry-down"],
)
def test_atomic_batch_fails_whole_naming_the_first_failing_item(
    test_client, funded_wallet, create_payout, bad, status_code, message
) -> None:
    create_payout(idempotency_key="earlier-key", amount=Decimal("5.00"))
    before = (Payout.objects.count(), reserve_entries())
    items = [item(), item(), item(**bad), item(amount="0")]
    response = post_bulk(test_client, bulk_body(items, atomic=True))

    error(response, status_code, message)
    if status_code == 503:
        assert response["Retry-After"] == "5"
    assert (Payout.objects.count(), reserve_entries()) == before
    assert PayoutBatch.objects.count() == 0
    assert_wallet_balanced(funded_wallet)


def test_atomic_batch_names_the_item_in_each_of_its_errors(test_client, funded_wallet) -> None:
    items = [item(), item(amount="-1", bank_code=7, narration=...)]
    response = post_bulk(test_client, bulk_body(items, atomic=True))
    error(response, 400, f"items[1].bank_code: must be a string; items[1].amount: {AMOUNT_RULE}")


def test_atomic_batch_fails_whole_when_the_balance_is_spent_meanwhile(
    test_client, test_wallet, merchant_account, monkeypatch
) -> None:
    wallet = fund_wallet(test_wallet, "3030.00")
    after_prepare(
        monkeypatch,
        lambda: payout_create(
            merchant=merchant_account.merchant,
            mode=Mode.TEST,
            account_number=GOOD_ACCOUNT,
            bank_code=GTB_CODE,
            amount=Decimal("2000.00"),
            idempotency_key="meanwhile",
        ),
    )
    response = post_bulk(test_client, bulk_body([item(), item(), item()], atomic=True))

    error(response, 400, "items[1]: insufficient available wallet balance")
    assert PayoutBatch.objects.count() == 0
    assert Payout.objects.count() == 1  # the one made meanwhile
    wallet.refresh_from_db()
    assert wallet.available_balance == Decimal("1020.00")
    assert_wallet_balanced(wallet)


def test_a_failed_atomic_batch_can_be_sent_again_with_its_reference(
    test_client, test_wallet
) -> None:
    body = bulk_body([item(amount="500"), item(amount="500")], atomic=True)
    error(post_bulk(test_client, body), 400, "items[0]: insufficient available wallet balance")
    fund_wallet(test_wallet, "2000.00")
    response = post_bulk(test_client, body)
    assert response.status_code == 202
    assert results(response) == ["accepted", "accepted"]


# --- Replay and conflict -----------------------------------------------------------------------


def test_the_same_request_again_replays_the_first_answer(test_client, funded_wallet) -> None:
    body = bulk_body([item(amount="2500"), item(amount="0"), item()])
    first = post_bulk(test_client, body).json()["data"]
    payout_dispatch(payout_id=first["items"][0]["payout"]["id"])
    before = (Payout.objects.count(), reserve_entries(), PayoutBatch.objects.count())

    respelled = {**body, "items": [{**body["items"][0], "amount": "2500.00"}, *body["items"][1:]]}
    replay = post_bulk(test_client, respelled)

    assert replay.status_code == 202
    payload = replay.json()
    assert payload["message"] == "Bulk payout request already accepted"
    data = payload["data"]
    assert data["duplicate"] is True
    assert data["batch"] == first["batch"]
    assert [entry["result"] for entry in data["items"]] == ["accepted", "rejected", "accepted"]
    assert data["items"][1]["error"] == first["items"][1]["error"]
    assert [e["payout"] and e["payout"]["id"] for e in data["items"]] == [
        e["payout"] and e["payout"]["id"] for e in first["items"]
    ]
    # The payouts as they are now: the first was dispatched meanwhile.
    assert data["items"][0]["payout"]["status"] == "successful"
    assert (Payout.objects.count(), reserve_entries(), PayoutBatch.objects.count()) == before


@pytest.mark.parametrize(
    "change",
    [
        lambda body: {**body, "items": [{**body["items"][0], "amount": "1000.01"}]},
        lambda body: {**body, "items": [*body["items"], item()]},
        lambda body: {**body, "atomic": True},
        lambda body: {**body, "items": [{**body["items"][0], "narration": "Other"}]},
    ],
    ids=["amount", "more-items", "atomic", "narration"],
)
def test_the_same_reference_with_another_request_is_a_409(
    test_client, funded_wallet, change
) -> None:
    body = bulk_body([item()])
    assert post_bulk(test_client, body).status_code == 202
    response = post_bulk(test_client, change(body))
    error(response, 409, "Batch reference already used for a different bulk payout request")
    assert Payout.objects.count() == 1


def test_a_batch_reference_belongs_to_one_wallet(
    test_client, live_client, funded_wallet, live_mode
) -> None:
    body = bulk_body([item()])
    test_batch = post_bulk(test_client, body).json()["data"]["batch"]
    live = post_bulk(live_client, {**body, "items": [item()]})
    assert live.status_code == 202
    assert live.json()["data"]["duplicate"] is False
    assert live.json()["data"]["batch"]["id"] != test_batch["id"]


def _post_concurrently(client_for, key: str, body: dict[str, Any], threads: int) -> list[Any]:
    barrier = threading.Barrier(threads)
    answers: list[tuple[int, Any]] = []
    lock = threading.Lock()

    def worker() -> None:
        try:
            client = client_for(key)
            barrier.wait(timeout=30)
            response = post_bulk(client, body)
            with lock:
                answers.append((response.status_code, response.json()))
        finally:
            connection.close()

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(timeout=120)
    assert len(answers) == threads
    return answers


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_identical_concurrent_bulk_requests_make_one_batch(merchant_account, client_for) -> None:
    wallet = fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "50000")
    body = bulk_body([item(amount=f"{100 + n}.00") for n in range(5)] + [item(amount="0")])
    threads = 6

    answers = _post_concurrently(client_for, merchant_account.test_key.plaintext, body, threads)

    assert [status for status, _ in answers] == [202] * threads, answers
    assert len({payload["data"]["batch"]["id"] for _, payload in answers}) == 1
    duplicates = sorted(payload["data"]["duplicate"] for _, payload in answers)
    assert duplicates == [False] + [True] * (threads - 1)
    payout_ids = {
        tuple(entry["payout"] and entry["payout"]["id"] for entry in payload["data"]["items"])
        for _, payload in answers
    }
    assert len(payout_ids) == 1
    assert PayoutBatch.objects.count() == 1
    assert Payout.objects.count() == 5
    assert reserve_entries() == 5
    wallet.refresh_from_db()
    assert wallet.reserved_balance == Decimal("510.00") + 5 * FEE
    assert_wallet_balanced(wallet)


# --- Sizes and the envelope --------------------------------------------------------------------


def test_one_item(test_client, funded_wallet) -> None:
    response = post_bulk(test_client, bulk_body([item()]))
    assert response.status_code == 202
    assert results(response) == ["accepted"]
    assert response.json()["data"]["batch"]["status"] == "accepted"


@pytest.mark.slow
def test_five_hundred_items_with_queries_per_batch_not_per_item(
    test_client, test_wallet, django_capture_on_commit_callbacks, settings
) -> None:
    # The memos live 5 s by default; a loaded machine can take longer than that between the
    # warming request and the measured one, and the count is about per-item reads, not expiry.
    settings.REFERENCE_DATA_LOCAL_SECONDS = 300
    wallet = fund_wallet(test_wallet, "1000000.00")
    post_bulk(test_client, bulk_body([item(amount="1.00")]))  # warm the bank and fee memos
    # Long narrations: the body is over the API's usual 64 KiB, under the bulk route's limit.
    items = [
        item(account_number=f"{1_000_000 + n:010d}", amount="100.00", narration="N" * 200)
        for n in range(500)
    ]
    body = bulk_body(items)
    assert len(json.dumps(body)) > 64 * 1024

    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks() as callbacks,
    ):
        response = post_bulk(test_client, body)

    assert response.status_code == 202, response.content[:300]
    assert results(response) == ["accepted"] * 500
    batch = response.json()["data"]["batch"]
    assert (batch["accepted"], batch["total_debit_amount"]) == (500, "55000.00")
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert len(reads) <= 6, reads  # key, wallet, batch reference, keys used before, lock
    assert len(callbacks) == 1  # one wake of the batch dispatcher, on commit
    assert reserve_entries() == 501
    wallet.refresh_from_db()
    assert wallet.reserved_balance == Decimal("55011.00")
    assert_wallet_balanced(wallet)


def test_the_same_account_twice_costs_one_name_enquiry(
    test_client, funded_wallet, monkeypatch
) -> None:
    asked: list[str] = []
    resolve = bulk_services.name_enquiry_resolve

    def counting(**kwargs: Any) -> Any:
        asked.append(kwargs["account_number"])
        return resolve(**kwargs)

    monkeypatch.setattr(bulk_services, "name_enquiry_resolve", counting)
    response = post_bulk(
        test_client, bulk_body([item(), item(), item(account_number="1111111111")])
    )
    assert results(response) == ["accepted"] * 3
    assert sorted(asked) == [GOOD_ACCOUNT, "1111111111"]


@pytest.mark.parametrize("size", [0, 501])
def test_an_empty_or_oversized_batch_is_a_400(test_client, funded_wallet, size) -> None:
    response = post_bulk(test_client, bulk_body([item() for _ in range(size)]))
    error(response, 400, "items: must hold between 1 and 500 payouts")
    assert PayoutBatch.objects.count() == 0


def test_a_body_over_the_bulk_limit_is_a_413(test_client, funded_wallet, settings) -> None:
    settings.REQUEST_BODY_MAX_BYTES_BY_PATH = {BULK_URL: 2048}
    response = post_bulk(test_client, bulk_body([item(narration="N" * 255) for _ in range(10)]))
    error(response, 413, "Request body exceeds the limit of 2048 bytes")


@pytest.mark.parametrize("atomic", [False, True])
def test_a_key_twice_in_one_batch_is_a_400_naming_the_later_item(
    test_client, funded_wallet, atomic
) -> None:
    items = [item(idempotency_key="k1"), item(), item(idempotency_key="k1", amount="5")]
    response = post_bulk(test_client, bulk_body(items, atomic=atomic))
    error(response, 400, "items[2].idempotency_key: duplicates items[0]")
    assert Payout.objects.count() == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"atomic": "yes"}, "atomic: must be true or false"),
        ({"items": {"a": 1}}, "items: must be a list of payouts"),
        ({"batch_reference": "   "}, "batch_reference: This field may not be blank."),
        (
            {"batch_reference": "r" * 101},
            "batch_reference: Ensure this field has no more than 100 characters.",
        ),
        ({"batch_reference": ...}, "batch_reference: This field is required."),
        ({"currency": "USD"}, "Only NGN payouts are supported"),
        ({"reference": "x"}, "reference: is not an accepted field"),
    ],
)
def test_the_envelope_is_checked_before_any_item(
    test_client, funded_wallet, change, message
) -> None:
    body = {**bulk_body([item()]), **change}
    body = {key: value for key, value in body.items() if value is not ...}
    error(post_bulk(test_client, body), 400, message)
    assert Payout.objects.count() == 0


def test_an_item_refuses_a_currency_of_its_own(test_client, funded_wallet) -> None:
    response = post_bulk(test_client, bulk_body([item(currency="NGN")]))
    assert response.json()["data"]["items"][0]["error"] == {
        "message": "currency: is not an accepted field",
        "statusCode": 400,
    }


def test_the_bulk_route_has_a_rate_limit_of_its_own(
    test_client, funded_wallet, monkeypatch
) -> None:
    monkeypatch.setattr(SecretKeyRateThrottle, "THROTTLE_RATES", {"payout_bulk": "1/min"})
    assert post_bulk(test_client, bulk_body([item()])).status_code == 202
    response = post_bulk(test_client, bulk_body([item()]))
    assert response.status_code == 429
    assert test_client.post(PAYOUTS_URL, item(), format="json").status_code == 202


# --- Saved beneficiaries ---------------------------------------------------------------------


def test_items_pay_saved_beneficiaries_by_id(
    test_client, funded_wallet, merchant_account, live_mode
) -> None:
    merchant = merchant_account.merchant
    saved = beneficiary_create(
        merchant=merchant, mode=Mode.TEST, account_number="0123456780", bank_code=GTB_CODE
    ).beneficiary
    deleted = beneficiary_create(
        merchant=merchant, mode=Mode.TEST, account_number="0123456781", bank_code=GTB_CODE
    ).beneficiary
    beneficiary_delete(merchant=merchant, mode=Mode.TEST, beneficiary_id=deleted.pk)
    live_saved = beneficiary_create(
        merchant=merchant, mode=Mode.LIVE, account_number="0123456782", bank_code=GTB_CODE
    ).beneficiary
    items = [
        {"beneficiary_id": saved.pk, "amount": "250", "idempotency_key": "b-1"},
        {"beneficiary_id": deleted.pk, "amount": "250", "idempotency_key": "b-2"},
        {"beneficiary_id": live_saved.pk, "amount": "250", "idempotency_key": "b-3"},
        {
            "beneficiary_id": saved.pk,
            "account_number": GOOD_ACCOUNT,
            "amount": "1",
            "idempotency_key": "b-4",
        },
    ]
    response = post_bulk(test_client, bulk_body(items))

    assert results(response) == ["accepted", "rejected", "rejected", "rejected"]
    entries = response.json()["data"]["items"]
    payout = Payout.objects.get(pk=entries[0]["payout"]["id"])
    assert (payout.account_number, payout.bank_code, payout.bank_id) == (
        saved.account_number,
        saved.bank_code,
        saved.bank_id,
    )
    not_found = {"message": "Beneficiary not found", "statusCode": 404}
    assert [entries[1]["error"], entries[2]["error"]] == [not_found, not_found]
    assert entries[3]["error"] == {
        "message": "beneficiary_id: must not be sent with account_number",
        "statusCode": 400,
    }
    # The same key replayed by a single create with the same beneficiary: the same payout.
    single = post_json(test_client, PAYOUTS_URL, items[0]).json()["data"]
    assert (single["duplicate"], single["payout"]["id"]) == (True, payout.pk)


# --- Reading a batch ---------------------------------------------------------------------------


@pytest.fixture
def batch(test_client, funded_wallet) -> dict[str, Any]:
    response = post_bulk(
        test_client, bulk_body([item(amount="100"), item(amount="200"), item(amount="0")])
    )
    return response.json()["data"]


def test_get_a_batch_with_its_payouts_status_counts(
    test_client, batch, django_assert_num_queries
) -> None:
    first = batch["items"][0]["payout"]["id"]
    payout_dispatch(payout_id=first)
    with django_assert_num_queries(3):  # key, batch, counts
        response = test_client.get(batch_url(batch["batch"]["id"]))
    assert response.status_code == 200
    payload = response.json()
    assert payload["message"] == "Payout batch retrieved successfully"
    data = payload["data"]
    assert set(data) == BATCH_KEYS | {"payout_status_counts"}
    assert {key: data[key] for key in BATCH_KEYS} == batch["batch"]
    assert data["payout_status_counts"] == {
        "reserved": 1,
        "processing": 0,
        "dispatched": 0,
        "ambiguous": 0,
        "successful": 1,
        "failed": 0,
    }
    assert data["total_debit_amount"] == "320.00"


def test_list_payouts_of_a_batch(
    test_client, batch, create_payout, django_assert_num_queries
) -> None:
    create_payout()  # not in the batch
    with django_assert_num_queries(3):  # key, count, page
        response = test_client.get(PAYOUTS_URL, {"batch_id": batch["batch"]["id"]})
    assert response.status_code == 200
    listed = [entry["id"] for entry in response.json()["data"]["items"]]
    assert listed == [batch["items"][1]["payout"]["id"], batch["items"][0]["payout"]["id"]]
    assert response.json()["data"]["pagination"]["total"] == 2
    filtered = test_client.get(
        PAYOUTS_URL, {"batch_id": batch["batch"]["id"], "status": PayoutStatus.SUCCESSFUL}
    )
    assert filtered.json()["data"]["items"] == []


def test_a_duplicate_item_stays_out_of_the_batch_list(test_client, funded_wallet) -> None:
    body = item()
    post_json(test_client, PAYOUTS_URL, body)
    data = post_bulk(test_client, bulk_body([body, item()])).json()["data"]
    listed = test_client.get(PAYOUTS_URL, {"batch_id": data["batch"]["id"]}).json()["data"]
    assert [entry["id"] for entry in listed["items"]] == [data["items"][1]["payout"]["id"]]


@pytest.mark.parametrize("value", ["abc", "0", "-1", str(2**63), "1.5"])
def test_list_refuses_a_batch_id_that_is_not_an_id(test_client, batch, value) -> None:
    error(
        test_client.get(PAYOUTS_URL, {"batch_id": value}),
        400,
        "batch_id: must be a positive integer",
    )


def test_an_unknown_batch_is_a_404_and_lists_nothing(test_client, batch) -> None:
    unknown = batch["batch"]["id"] + 1000
    error(test_client.get(batch_url(unknown)), 404, "Payout batch not found")
    error(test_client.get(batch_url(2**70)), 404, "Payout batch not found")
    listed = test_client.get(PAYOUTS_URL, {"batch_id": unknown}).json()["data"]
    assert listed["items"] == [] and listed["pagination"]["total"] == 0


def test_a_test_key_never_sees_a_live_batch(
    test_client, live_client, funded_wallet, live_mode: Wallet
) -> None:
    live = post_bulk(live_client, bulk_body([item()])).json()["data"]
    assert Payout.objects.get(pk=live["items"][0]["payout"]["id"]).wallet_id == live_mode.pk
    live_id = live["batch"]["id"]
    error(test_client.get(batch_url(live_id)), 404, "Payout batch not found")
    assert test_client.get(PAYOUTS_URL, {"batch_id": live_id}).json()["data"]["items"] == []
    assert live_client.get(batch_url(live_id)).status_code == 200
    assert len(live_client.get(PAYOUTS_URL, {"batch_id": live_id}).json()["data"]["items"]) == 1


def test_another_merchants_batch_is_a_404(test_client, batch, client_for) -> None:
    from merchants.services import merchant_create

    other = merchant_create(name="Zed Traders", email="zed@example.com")
    other_client = client_for(other.test_key.plaintext)
    error(other_client.get(batch_url(batch["batch"]["id"])), 404, "Payout batch not found")
    listed = other_client.get(PAYOUTS_URL, {"batch_id": batch["batch"]["id"]}).json()["data"]
    assert listed["items"] == []


# --- Authentication ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [("post", BULK_URL), ("get", f"{BULK_URL}/1")],
)
def test_bulk_routes_need_a_secret_key(api_client, merchant_account, method, path) -> None:
    response = getattr(api_client, method)(path, {}, format="json")
    error(response, 401, "Unauthorized: invalid or missing secret key")
    api_client.credentials(HTTP_AUTHORIZATION="Bearer sk_test_unknown")
    error(
        getattr(api_client, method)(path, {}, format="json"),
        401,
        "Unauthorized: invalid or missing secret key",
    )
