"""The sandbox provider: magic accounts, idempotency on our reference, state in the database."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from payouts.models import SandboxTransfer
from payouts.providers.base import (
    PayoutProvider,
    TransferOutcome,
    TransferRequest,
    TransferResult,
    initiate_transfers,
)
from payouts.providers.registry import provider_get, provider_name_for_mode
from payouts.providers.sandbox import SandboxProvider

pytestmark = pytest.mark.django_db


def transfer_request(account_number: str, reference: str = "po_test_ref_0001") -> TransferRequest:
    return TransferRequest(
        reference=reference,
        account_number=account_number,
        account_name="ADEYEMI TUNDE",
        bank_code="058",
        amount=Decimal("1500.00"),
        currency="NGN",
        narration="Invoice",
    )


@pytest.mark.parametrize(
    ("account_number", "outcome"),
    [
        ("0123456789", TransferOutcome.SUCCESSFUL),
        ("1000000001", TransferOutcome.FAILED),
        ("1000000002", TransferOutcome.UNKNOWN),
        ("1000000003", TransferOutcome.UNKNOWN),
    ],
)
def test_initiate_outcome_by_magic_account(account_number: str, outcome: TransferOutcome) -> None:
    result = SandboxProvider().initiate_transfer(transfer_request(account_number))
    assert result.outcome == outcome
    assert result.raw and result.raw[0].operation == "sandbox.initiate_transfer"


def test_initiate_twice_with_one_reference_is_one_transfer() -> None:
    provider = SandboxProvider()
    first = provider.initiate_transfer(transfer_request("0123456789"))
    second = provider.initiate_transfer(transfer_request("0123456789"))
    transfer = SandboxTransfer.objects.get(reference="po_test_ref_0001")
    assert SandboxTransfer.objects.count() == 1
    assert transfer.initiate_count == 2
    assert first.provider_reference == second.provider_reference == transfer.transfer_code


def test_verify_unknown_reference_is_not_found() -> None:
    result = SandboxProvider().verify_transfer(reference="po_never_sent")
    assert result.outcome == TransferOutcome.NOT_FOUND


@pytest.mark.parametrize(
    ("account_number", "outcome"),
    [
        ("0123456789", TransferOutcome.SUCCESSFUL),
        ("1000000001", TransferOutcome.FAILED),
        ("1000000002", TransferOutcome.SUCCESSFUL),
        ("1000000003", TransferOutcome.PENDING),
    ],
)
def test_verify_outcome_by_magic_account(account_number: str, outcome: TransferOutcome) -> None:
    provider = SandboxProvider()
    provider.initiate_transfer(transfer_request(account_number))
    result = provider.verify_transfer(reference="po_test_ref_0001")
    assert result.outcome == outcome
    assert SandboxTransfer.objects.get(reference="po_test_ref_0001").query_count == 1


def test_always_ambiguous_account_stays_pending_on_every_verify() -> None:
    provider = SandboxProvider()
    provider.initiate_transfer(transfer_request("1000000003"))
    outcomes = [provider.verify_transfer(reference="po_test_ref_0001").outcome for _ in range(3)]
    assert outcomes == [TransferOutcome.PENDING] * 3
    assert SandboxTransfer.objects.get(reference="po_test_ref_0001").query_count == 3


def test_registry_routes_modes_to_providers() -> None:
    assert provider_name_for_mode("test") == "sandbox"
    assert provider_name_for_mode("live") == "paystack"
    assert isinstance(provider_get("sandbox"), PayoutProvider)
    assert isinstance(provider_get("paystack"), PayoutProvider)


def test_registry_follows_settings(settings) -> None:
    settings.PAYOUT_PROVIDER_BY_MODE = {"test": "sandbox", "live": "sandbox"}
    assert provider_name_for_mode("live") == "sandbox"


# --- Many at once -------------------------------------------------------------------------------


MAGIC = ["0123456789", "1000000001", "1000000002", "1000000003", "1000000004"]


def test_initiate_transfers_answers_as_initiate_transfer_does() -> None:
    provider = SandboxProvider()
    requests = [transfer_request(account, f"po_bulk_{n}") for n, account in enumerate(MAGIC)]
    singles = [
        provider.initiate_transfer(transfer_request(a, f"po_one_{n}")) for n, a in enumerate(MAGIC)
    ]
    answers = provider.initiate_transfers(requests)

    assert [a.outcome for a in answers] == [s.outcome for s in singles]
    assert [a.raw[0].http_status for a in answers] == [s.raw[0].http_status for s in singles]
    for request, answer in zip(requests, answers, strict=True):
        transfer = SandboxTransfer.objects.get(reference=request.reference)
        assert transfer.initiate_count == 1
        assert answer.provider_reference in ("", transfer.transfer_code)


def test_initiate_transfers_counts_a_reference_sent_before_or_twice() -> None:
    provider = SandboxProvider()
    before = provider.initiate_transfer(transfer_request("0123456789", "po_again"))
    answers = provider.initiate_transfers(
        [
            transfer_request("0123456789", "po_again"),
            transfer_request("0123456789", "po_twice"),
            transfer_request("0123456789", "po_twice"),
        ]
    )
    assert answers[0].provider_reference == before.provider_reference
    assert answers[1].provider_reference == answers[2].provider_reference
    counts = dict(SandboxTransfer.objects.values_list("reference", "initiate_count"))
    assert counts == {"po_again": 2, "po_twice": 2}


def test_initiate_transfers_takes_three_statements_for_new_transfers() -> None:
    requests = [transfer_request("0123456789", f"po_many_{n}") for n in range(30)]
    with CaptureQueriesContext(connection) as queries:
        SandboxProvider().initiate_transfers(requests)
    assert len(queries.captured_queries) == 3  # the merchants' switches, insert, read
    assert SandboxTransfer.objects.count() == 30


def test_initiate_transfers_loops_over_a_provider_without_a_bulk_call() -> None:
    class OneAtATime:
        name = "one-at-a-time"

        def __init__(self) -> None:
            self.sent: list[str] = []

        def initiate_transfer(self, request: TransferRequest) -> TransferResult:
            self.sent.append(request.reference)
            return TransferResult(outcome=TransferOutcome.PENDING)

        def verify_transfer(self, *, reference: str) -> TransferResult:
            return TransferResult(outcome=TransferOutcome.NOT_FOUND)

    provider = OneAtATime()
    answers = initiate_transfers(provider, [transfer_request("0123456789", r) for r in "abc"])
    assert provider.sent == ["a", "b", "c"]
    assert [a.outcome for a in answers] == [TransferOutcome.PENDING] * 3
    assert initiate_transfers(provider, []) == []


@pytest.mark.parametrize(
    ("account_number", "sent", "queried", "code"),
    [
        ("1000000005", TransferOutcome.HELD, TransferOutcome.HELD, "34"),
        ("1000000006", TransferOutcome.UNKNOWN, TransferOutcome.FAILED, "91"),
        ("1000000007", TransferOutcome.FAILED, TransferOutcome.FAILED, "07"),
    ],
)
def test_nip_code_accounts_answer_their_code(
    account_number: str, sent: TransferOutcome, queried: TransferOutcome, code: str
) -> None:
    provider = SandboxProvider()
    initiated = provider.initiate_transfer(transfer_request(account_number))
    verified = provider.verify_transfer(reference="po_test_ref_0001")
    assert (initiated.outcome, initiated.nip_code) == (sent, code)
    assert (verified.outcome, verified.nip_code) == (queried, code)
    assert verified.raw[0].body["data"]["gateway_response"] == code  # type: ignore[index]


@pytest.mark.parametrize("account_number", ["0123456789", "1000000001", "1000000003", "1000000005"])
def test_sandbox_statuses_read_back_through_the_outcome_table(account_number: str) -> None:
    from payouts.providers.outcomes import provider_status_outcome

    provider = SandboxProvider()
    provider.initiate_transfer(transfer_request(account_number))
    verified = provider.verify_transfer(reference="po_test_ref_0001")
    status = verified.raw[0].body["data"]["status"]  # type: ignore[index]
    assert provider_status_outcome("sandbox", status) == verified.outcome
