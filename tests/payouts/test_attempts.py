"""Payout attempts and failover: every send is an attempt under its own reference; a payout goes
to another provider only when its attempt certainly moved no money (``not_sent``,
``rejected``); a timeout or a pending transfer stays with its provider until a final answer;
a transfer that existed and failed fails the payout. The database refuses a second attempt that
could succeed."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.apps import apps
from django.db import IntegrityError, connections, transaction

from core.provider_exchange import ProviderExchange
from payouts.models import AttemptOutcome, Payout, PayoutAttempt, PayoutStatus, SandboxTransfer
from payouts.providers.base import TransferOutcome, TransferRequest, TransferResult
from payouts.providers.registry import PROVIDER_CLASSES
from payouts.services import payout_dispatch, payout_requery, payouts_dispatch_round
from tests.payouts.factories import PayoutAttemptFactory, PayoutFactory
from tests.payouts.helpers import assert_wallet_balanced, dispatch_claim, reload
from wallets.models import LedgerEntry, LedgerEntryType, Wallet

pytestmark = pytest.mark.django_db


@dataclass
class Scripted:
    """A provider answering every initiate with ``initiate`` and every verify with ``verify``;
    it records what it received."""

    name: str
    initiate: TransferOutcome = TransferOutcome.SUCCESSFUL
    verify: TransferOutcome = TransferOutcome.SUCCESSFUL
    sent: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)

    def _answer(self, outcome: TransferOutcome, reference: str) -> TransferResult:
        return TransferResult(
            outcome=outcome,
            provider_reference=f"{self.name}-{reference}" if outcome != "not_sent" else "",
            message=f"{self.name}: {outcome}",
            raw=(ProviderExchange(operation=self.name, http_status=200, body={}),),
        )

    def initiate_transfer(self, request: TransferRequest) -> TransferResult:
        self.sent.append(request.reference)
        return self._answer(self.initiate, request.reference)

    def verify_transfer(self, *, reference: str) -> TransferResult:
        self.verified.append(reference)
        return self._answer(self.verify, reference)


class FirstHandle:
    current: Scripted | None = None

    def __new__(cls) -> Scripted:  # type: ignore[misc]
        assert cls.current is not None
        return cls.current


class SecondHandle(FirstHandle):
    current: Scripted | None = None


@dataclass
class TwoProviders:
    first: Scripted
    second: Scripted


@pytest.fixture
def two_providers(monkeypatch: pytest.MonkeyPatch, settings: Any) -> TwoProviders:
    """Test payouts go to ``first``, failing over to ``second`` (no routes: the defaults)."""
    pair = TwoProviders(first=Scripted("first"), second=Scripted("second"))
    monkeypatch.setitem(PROVIDER_CLASSES, "first", f"{__name__}.FirstHandle")
    monkeypatch.setitem(PROVIDER_CLASSES, "second", f"{__name__}.SecondHandle")
    monkeypatch.setattr(FirstHandle, "current", pair.first)
    monkeypatch.setattr(SecondHandle, "current", pair.second)
    settings.PAYOUT_PROVIDER_BY_MODE = {"test": "first", "live": "paystack"}
    settings.PAYOUT_FAILOVER_PROVIDERS_BY_MODE = {"test": ["second"], "live": []}
    return pair


def _attempts(payout: Payout) -> list[tuple[str, str, str]]:
    return list(
        PayoutAttempt.objects.filter(payout=payout)
        .order_by("number")
        .values_list("provider_name", "reference", "outcome")
    )


def _entries(payout: Payout, entry_type: str) -> int:
    return LedgerEntry.objects.filter(payout_id=payout.pk, entry_type=entry_type).count()


def test_not_sent_fails_over_to_the_second_provider_under_a_new_reference(
    funded_wallet: Wallet, create_payout: Callable[..., Any], two_providers: TwoProviders
) -> None:
    two_providers.first.initiate = TransferOutcome.NOT_SENT
    payout = create_payout().payout
    reference = payout.internal_reference

    report = payouts_dispatch_round()

    payout = reload(payout)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert report.outcomes == {"successful": 1}
    assert _attempts(payout) == [
        ("first", reference, AttemptOutcome.NOT_SENT),
        ("second", f"{reference}-2", AttemptOutcome.SUCCESSFUL),
    ]
    assert two_providers.first.sent == [reference]
    assert two_providers.second.sent == [f"{reference}-2"]
    assert payout.provider_name == "second"
    assert payout.provider_reference == f"second-{reference}-2"
    assert _entries(payout, LedgerEntryType.PAYOUT_DEBIT) == 1
    assert_wallet_balanced(funded_wallet)


def test_a_refusal_fails_over_to_the_second_provider(
    funded_wallet: Wallet, create_payout: Callable[..., Any], two_providers: TwoProviders
) -> None:
    two_providers.first.initiate = TransferOutcome.REJECTED
    payout = create_payout().payout

    payout_dispatch(payout_id=payout.pk)

    payout = reload(payout)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert [outcome for _p, _r, outcome in _attempts(payout)] == ["rejected", "successful"]
    assert _entries(payout, LedgerEntryType.PAYOUT_REVERSAL) == 0
    assert_wallet_balanced(funded_wallet)


def test_refused_by_every_provider_fails_and_releases(
    funded_wallet: Wallet, create_payout: Callable[..., Any], two_providers: TwoProviders
) -> None:
    two_providers.first.initiate = TransferOutcome.REJECTED
    two_providers.second.initiate = TransferOutcome.REJECTED
    payout = create_payout().payout

    payout_dispatch(payout_id=payout.pk)

    payout = reload(payout)
    assert payout.status == PayoutStatus.FAILED
    assert [outcome for _p, _r, outcome in _attempts(payout)] == ["rejected", "rejected"]
    assert _entries(payout, LedgerEntryType.PAYOUT_REVERSAL) == 1
    assert_wallet_balanced(funded_wallet)


def test_a_timeout_stays_with_its_provider_until_a_requery_answers(
    funded_wallet: Wallet, create_payout: Callable[..., Any], two_providers: TwoProviders
) -> None:
    two_providers.first.initiate = TransferOutcome.UNKNOWN
    payout = create_payout().payout

    payouts_dispatch_round()

    payout = reload(payout)
    assert payout.status == PayoutStatus.AMBIGUOUS
    assert _attempts(payout) == [("first", payout.internal_reference, AttemptOutcome.UNKNOWN)]
    assert two_providers.second.sent == []
    assert payout_dispatch(payout_id=payout.pk) is None  # nothing is sent again

    payout = payout_requery(payout=payout)

    assert payout.status == PayoutStatus.SUCCESSFUL
    assert two_providers.first.verified == [payout.internal_reference]
    assert _attempts(payout) == [("first", payout.internal_reference, AttemptOutcome.SUCCESSFUL)]
    assert two_providers.second.sent == two_providers.second.verified == []
    assert_wallet_balanced(funded_wallet)


def test_a_pending_transfer_stays_with_its_provider(
    funded_wallet: Wallet, create_payout: Callable[..., Any], two_providers: TwoProviders
) -> None:
    two_providers.first.initiate = TransferOutcome.PENDING
    two_providers.first.verify = TransferOutcome.FAILED
    payout = create_payout().payout

    payouts_dispatch_round()
    assert reload(payout).status == PayoutStatus.DISPATCHED
    assert [o for _p, _r, o in _attempts(payout)] == [AttemptOutcome.PENDING]

    payout = payout_requery(payout=reload(payout))

    assert payout.status == PayoutStatus.FAILED
    assert [o for _p, _r, o in _attempts(payout)] == [AttemptOutcome.FAILED]
    assert two_providers.second.sent == []
    assert _entries(payout, LedgerEntryType.PAYOUT_REVERSAL) == 1
    assert_wallet_balanced(funded_wallet)


def test_a_transfer_that_existed_and_failed_is_never_sent_elsewhere(
    funded_wallet: Wallet, create_payout: Callable[..., Any], two_providers: TwoProviders
) -> None:
    two_providers.first.initiate = TransferOutcome.FAILED
    payout = create_payout().payout

    payouts_dispatch_round()

    payout = reload(payout)
    assert payout.status == PayoutStatus.FAILED
    assert [o for _p, _r, o in _attempts(payout)] == [AttemptOutcome.FAILED]
    assert two_providers.second.sent == []
    assert_wallet_balanced(funded_wallet)


def test_not_sent_without_another_provider_waits_and_goes_again_under_a_new_reference(
    funded_wallet: Wallet,
    create_payout: Callable[..., Any],
    two_providers: TwoProviders,
    settings: Any,
) -> None:
    settings.PAYOUT_FAILOVER_PROVIDERS_BY_MODE = {"test": [], "live": []}
    two_providers.first.initiate = TransferOutcome.NOT_SENT
    payout = create_payout().payout

    report = payouts_dispatch_round()

    assert report.outcomes == {"deferred": 1}
    assert reload(payout).status == PayoutStatus.PROCESSING
    two_providers.first.initiate = TransferOutcome.SUCCESSFUL
    payout_dispatch(payout_id=payout.pk)
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert _attempts(payout) == [
        ("first", payout.internal_reference, AttemptOutcome.NOT_SENT),
        ("first", f"{payout.internal_reference}-2", AttemptOutcome.SUCCESSFUL),
    ]


def test_a_stale_claim_is_verified_with_its_attempts_provider_and_reference(
    funded_wallet: Wallet,
    create_payout: Callable[..., Any],
    two_providers: TwoProviders,
    settings: Any,
) -> None:
    payout = create_payout().payout
    claim = dispatch_claim(payout_id=payout.pk)  # the worker dies after its claim
    assert claim is not None and claim.payout_attempt.provider_name == "first"
    Payout.objects.filter(pk=payout.pk).update(dispatch_claimed_at=None)  # the claim expired
    Payout.objects.filter(pk=payout.pk).update(verify_before_send=True)

    payout_dispatch(payout_id=payout.pk)

    payout = reload(payout)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert two_providers.first.verified == [payout.internal_reference]
    assert two_providers.first.sent == []  # the provider held it: never sent again
    assert _attempts(payout) == [("first", payout.internal_reference, AttemptOutcome.SUCCESSFUL)]


def test_the_database_refuses_a_second_attempt_that_could_succeed(
    test_wallet: Wallet,
) -> None:
    payout = PayoutFactory(wallet=test_wallet, status=PayoutStatus.AMBIGUOUS)
    PayoutAttemptFactory(payout=payout, outcome=AttemptOutcome.UNKNOWN)

    with pytest.raises(IntegrityError), transaction.atomic():
        PayoutAttemptFactory(
            payout=payout, number=2, provider_name="sandbox-b", outcome=AttemptOutcome.IN_FLIGHT
        )


def test_the_database_takes_a_new_attempt_after_one_that_moved_no_money(
    test_wallet: Wallet,
) -> None:
    payout = PayoutFactory(wallet=test_wallet, status=PayoutStatus.PROCESSING)
    PayoutAttemptFactory(payout=payout, outcome=AttemptOutcome.NOT_SENT)
    PayoutAttemptFactory(payout=payout, number=2, outcome=AttemptOutcome.REJECTED)
    PayoutAttemptFactory(payout=payout, number=3, outcome=AttemptOutcome.IN_FLIGHT)

    assert payout.attempts.count() == 3


def test_an_attempt_reference_is_unique_across_payouts(test_wallet: Wallet) -> None:
    first = PayoutFactory(wallet=test_wallet)
    second = PayoutFactory(wallet=test_wallet)
    PayoutAttemptFactory(payout=first, reference="po_shared", outcome=AttemptOutcome.NOT_SENT)

    with pytest.raises(IntegrityError), transaction.atomic():
        PayoutAttemptFactory(payout=second, reference="po_shared")


def test_a_manual_failure_closes_the_attempt_that_could_succeed(
    funded_wallet: Wallet, create_payout: Callable[..., Any], two_providers: TwoProviders
) -> None:
    from django.contrib.auth import get_user_model

    from payouts.services import payout_resolve_manually

    two_providers.first.initiate = TransferOutcome.UNKNOWN
    payout = create_payout().payout
    payouts_dispatch_round()
    finance = get_user_model().objects.create_user(username="finance")

    payout_resolve_manually(
        payout_id=payout.pk,
        to_status=PayoutStatus.FAILED,
        reason="not on the provider statement",
        resolved_by=finance,
    )

    assert [o for _p, _r, o in _attempts(payout)] == [AttemptOutcome.FAILED]
    assert_wallet_balanced(funded_wallet)


def test_the_backfill_gives_each_sent_payout_its_first_attempt(test_wallet: Wallet) -> None:
    migration = importlib.import_module("payouts.migrations.0013_payout_attempts_backfill")
    ambiguous = PayoutFactory(
        wallet=test_wallet, status=PayoutStatus.AMBIGUOUS, provider_reference="TRF_1"
    )
    refused = PayoutFactory(wallet=test_wallet, status=PayoutStatus.FAILED)
    reserved = PayoutFactory(wallet=test_wallet, status=PayoutStatus.RESERVED)

    migration.backfill(apps, None)

    assert _attempts(ambiguous) == [("sandbox", ambiguous.internal_reference, "unknown")]
    assert _attempts(refused) == [("sandbox", refused.internal_reference, "rejected")]
    assert _attempts(reserved) == []
    assert PayoutAttempt.objects.get(payout=ambiguous).provider_reference == "TRF_1"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_workers_dispatching_one_payout_make_one_attempt(
    merchant_account: Any,
) -> None:
    from decimal import Decimal

    from merchants.models import Mode
    from payouts.services import payout_create
    from tests.payouts.helpers import GOOD_ACCOUNT, GTB_CODE, fund_wallet
    from wallets.selectors import wallet_get

    wallet = fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "10000.00")
    payout = payout_create(
        merchant=merchant_account.merchant,
        mode=Mode.TEST,
        account_number=GOOD_ACCOUNT,
        bank_code=GTB_CODE,
        amount=Decimal("100.00"),
        idempotency_key="twin-dispatch",
    ).payout
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            start.wait(timeout=30)
            payout_dispatch(payout_id=payout.pk)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert PayoutAttempt.objects.filter(payout=payout).count() == 1
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    assert_wallet_balanced(wallet)


def _event(provider: str, reference: str, kind: str, number: int) -> Any:
    from merchants.models import Mode
    from payouts.services.provider_events import ProviderTransferEvent

    return ProviderTransferEvent(
        provider=provider,
        event_id=f"{provider}:{reference}:{kind}:{number}",
        reference=reference,
        kind=kind,  # type: ignore[arg-type]
        mode=Mode.TEST,
    )


def test_a_provider_event_about_a_refused_attempt_never_settles_the_payout(
    funded_wallet: Wallet, create_payout: Callable[..., Any], two_providers: TwoProviders
) -> None:
    from payouts.services.provider_events import provider_transfer_event_apply

    two_providers.first.initiate = TransferOutcome.REJECTED
    two_providers.second.initiate = TransferOutcome.PENDING
    payout = create_payout().payout
    payout_dispatch(payout_id=payout.pk)
    reference = payout.internal_reference
    assert reload(payout).status == PayoutStatus.DISPATCHED

    assert provider_transfer_event_apply(_event("first", reference, "failed", 1)) == "stale"
    assert provider_transfer_event_apply(_event("first", reference, "success", 2)) == "conflict"
    assert reload(payout).status == PayoutStatus.DISPATCHED
    assert _entries(payout, LedgerEntryType.PAYOUT_REVERSAL) == 0

    applied = provider_transfer_event_apply(_event("second", f"{reference}-2", "success", 3))

    assert applied == "applied"
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert [o for _p, _r, o in _attempts(payout)] == ["rejected", "successful"]
    assert_wallet_balanced(funded_wallet)


def test_a_provider_event_names_a_payout_by_its_attempts_provider_and_reference(
    funded_wallet: Wallet, create_payout: Callable[..., Any], two_providers: TwoProviders
) -> None:
    from payouts.services.provider_events import payout_for_provider_reference

    two_providers.first.initiate = TransferOutcome.NOT_SENT
    payout = create_payout().payout
    payout_dispatch(payout_id=payout.pk)
    reference = payout.internal_reference

    assert payout_for_provider_reference("second", f"{reference}-2") == payout
    assert payout_for_provider_reference("first", reference) == payout
    assert payout_for_provider_reference("second", reference) is None
    assert payout_for_provider_reference("first", f"{reference}-2") is None
