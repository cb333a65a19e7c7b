"""``payouts_dispatch_round``: reserved payouts claimed, sent and settled in rounds, with the
rules of a dispatch of one and statements that do not grow with the round."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.db.models import Count
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from core.provider_exchange import ProviderExchange
from merchants.models import Mode
from merchants.services import merchant_create
from payouts import services
from payouts.models import Payout, PayoutAttempt, PayoutStatus, SandboxTransfer
from payouts.providers.base import TransferOutcome, TransferRequest, TransferResult
from payouts.providers.registry import provider_get
from payouts.providers.sandbox import (
    ACCOUNT_ALWAYS_AMBIGUOUS,
    ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL,
    ACCOUNT_FAILED,
    ACCOUNT_SUCCEEDS_THEN_RETURNED,
)
from payouts.services import (
    DispatchStep,
    payout_dispatch,
    payouts_dispatch_round,
    payouts_dispatch_stuck,
)
from tests.payouts.helpers import (
    GOOD_ACCOUNT,
    GTB_CODE,
    assert_wallet_balanced,
    fund_wallet,
    provider_get_replace,
)
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from wallets.selectors import wallet_get, wallet_totals
from webhooks.models import Event, EventType

pytestmark = pytest.mark.django_db


def _entries(payout: Payout, entry_type: str) -> int:
    return LedgerEntry.objects.filter(payout_id=payout.pk, entry_type=entry_type).count()


def test_mixed_magic_accounts_are_each_settled_as_a_single_dispatch_would(
    funded_wallet: Wallet, create_payout: Callable[..., Any]
) -> None:
    accounts = [
        GOOD_ACCOUNT,
        ACCOUNT_FAILED,
        ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL,
        ACCOUNT_ALWAYS_AMBIGUOUS,
        ACCOUNT_SUCCEEDS_THEN_RETURNED,
    ]
    payouts = [create_payout(account_number=account).payout for account in accounts]

    report = payouts_dispatch_round()

    assert report.claimed == 5 and not report.full
    assert report.outcomes == {"ambiguous": 2, "failed": 1, "successful": 2}
    settled = {p.account_number: p for p in Payout.objects.filter(pk__in=[p.pk for p in payouts])}
    good, failed = settled[GOOD_ACCOUNT], settled[ACCOUNT_FAILED]
    assert good.status == PayoutStatus.SUCCESSFUL
    assert settled[ACCOUNT_SUCCEEDS_THEN_RETURNED].status == PayoutStatus.SUCCESSFUL
    assert failed.status == PayoutStatus.FAILED
    assert failed.error_message == "Transfer reversed by the beneficiary bank (sandbox)"
    for account in (ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL, ACCOUNT_ALWAYS_AMBIGUOUS):
        assert settled[account].status == PayoutStatus.AMBIGUOUS
        assert settled[account].next_requery_at is not None
        assert settled[account].ambiguous_since is not None
    assert good.nip_session_id and good.provider_reference.startswith("TRF_sbx_")
    assert good.completed_at is not None and good.dispatched_at is not None
    for payout in settled.values():
        assert payout.dispatch_attempts == 1
        assert payout.verify_before_send is False
        assert len(payout.provider_responses) == 1
        assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
        captured = _entries(payout, LedgerEntryType.PAYOUT_DEBIT)
        released = _entries(payout, LedgerEntryType.PAYOUT_REVERSAL)
        assert captured == (payout.status == PayoutStatus.SUCCESSFUL)
        assert released == (payout.status == PayoutStatus.FAILED)
    assert set(Event.objects.values_list("payout_id", "event_type")) == {
        (good.pk, EventType.PAYOUT_SUCCESSFUL),
        (settled[ACCOUNT_SUCCEEDS_THEN_RETURNED].pk, EventType.PAYOUT_SUCCESSFUL),
        (failed.pk, EventType.PAYOUT_FAILED),
    }
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == sum(
        (settled[a].total_debit_amount for a in accounts[2:4]), Decimal("0.00")
    )
    assert_wallet_balanced(funded_wallet)


def test_a_round_writes_what_rounds_of_one_write(
    test_wallet: Wallet, live_wallet: Wallet, create_payout: Callable[..., Any], settings: Any
) -> None:
    """The same payouts dispatched one by one and in one round end with the same statuses and the
    same ledger entries (balances after each included)."""
    fund_wallet(test_wallet, "50000.00")
    accounts = [GOOD_ACCOUNT, ACCOUNT_FAILED, ACCOUNT_ALWAYS_AMBIGUOUS, GOOD_ACCOUNT]
    amounts = ["1000.00", "250.50", "7000.07", "0.07"]
    one_by_one = [
        create_payout(account_number=a, amount=Decimal(m)).payout
        for a, m in zip(accounts, amounts, strict=True)
    ]
    for payout in one_by_one:
        payout_dispatch(payout_id=payout.pk)
    fund_wallet(live_wallet, "50000.00")
    settings.PAYOUT_PROVIDER_BY_MODE = {"test": "sandbox", "live": "sandbox"}
    settings.NAME_ENQUIRY_PROVIDERS = {
        **settings.NAME_ENQUIRY_PROVIDERS,
        "live": "wallets.providers.sandbox.SandboxNameEnquiryProvider",
    }
    in_one_round = [
        create_payout(mode=Mode.LIVE, account_number=a, amount=Decimal(m)).payout
        for a, m in zip(accounts, amounts, strict=True)
    ]
    payouts_dispatch_round()

    def written(wallet: Wallet) -> list[tuple[Any, ...]]:
        return list(
            LedgerEntry.objects.filter(wallet=wallet)
            .order_by("id")
            .values_list(
                "entry_type",
                "amount",
                "fee_amount",
                "available_delta",
                "reserved_delta",
                "available_balance_after",
                "reserved_balance_after",
            )
        )

    def statuses(payouts: list[Payout]) -> list[str]:
        return [Payout.objects.get(pk=p.pk).status for p in payouts]

    assert statuses(in_one_round) == statuses(one_by_one)
    assert written(live_wallet) == written(test_wallet)


@dataclass
class ScriptedProvider:
    """Answers each reference's transfer as scripted (``SUCCESSFUL`` by default)."""

    name: str = "sandbox"
    outcomes: dict[str, TransferOutcome] = field(default_factory=dict)
    sent: list[str] = field(default_factory=list)

    def initiate_transfer(self, request: TransferRequest) -> TransferResult:
        self.sent.append(request.reference)
        outcome = self.outcomes.get(request.reference, TransferOutcome.SUCCESSFUL)
        return TransferResult(
            outcome=outcome,
            message=f"scripted {outcome}",
            raw=(ProviderExchange(operation="scripted", http_status=200, body={}),),
        )

    def verify_transfer(self, *, reference: str) -> TransferResult:
        return TransferResult(outcome=TransferOutcome.NOT_FOUND, message="not found")


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedProvider:
    provider = ScriptedProvider()
    provider_get_replace(monkeypatch, lambda name: provider)
    return provider


def test_a_refusal_fails_and_releases(
    funded_wallet: Wallet, create_payout: Callable[..., Any], scripted: ScriptedProvider
) -> None:
    payout = create_payout().payout
    scripted.outcomes[payout.internal_reference] = TransferOutcome.REJECTED
    payouts_dispatch_round()
    payout.refresh_from_db()
    assert payout.status == PayoutStatus.FAILED
    assert payout.dispatched_at is None
    assert _entries(payout, LedgerEntryType.PAYOUT_REVERSAL) == 1
    assert_wallet_balanced(funded_wallet)


def test_not_sent_releases_the_claim_for_the_dispatch_stuck_sweeper(
    funded_wallet: Wallet, create_payout: Callable[..., Any], scripted: ScriptedProvider
) -> None:
    deferred, sent = create_payout().payout, create_payout().payout
    scripted.outcomes[deferred.internal_reference] = TransferOutcome.NOT_SENT

    report = payouts_dispatch_round()

    assert report.outcomes == {"deferred": 1, "successful": 1}
    deferred.refresh_from_db()
    assert deferred.status == PayoutStatus.PROCESSING
    assert deferred.dispatch_claimed_at is None
    assert (
        payouts_dispatch_round().claimed == 0
    )  # a round without retake_stale takes reserved payouts only
    scripted.outcomes.clear()
    sweep = payouts_dispatch_stuck()
    assert sweep.outcomes == {"successful": 1}
    deferred.refresh_from_db()
    assert deferred.status == PayoutStatus.SUCCESSFUL
    assert deferred.dispatch_attempts == 2
    # NOT_SENT never arrived: the next send is a new attempt under a reference of its own.
    assert scripted.sent.count(deferred.internal_reference) == 1
    assert scripted.sent.count(f"{deferred.internal_reference}-2") == 1
    assert list(deferred.attempts.values_list("outcome", flat=True)) == [
        "not_sent",
        "successful",
    ]
    assert scripted.sent.count(sent.internal_reference) == 1
    assert_wallet_balanced(funded_wallet)


def test_an_answer_after_another_attempt_took_over_is_kept_for_audit_only(
    funded_wallet: Wallet, create_payout: Callable[..., Any]
) -> None:
    payout = create_payout().payout
    [claim] = services.payouts_dispatch_claim(limit=10)
    Payout.objects.filter(pk=payout.pk).update(dispatch_attempts=2)  # retaken meanwhile
    answer = TransferResult(
        outcome=TransferOutcome.SUCCESSFUL,
        raw=(ProviderExchange(operation="late", http_status=200, body={}),),
    )

    [(step, applied)] = services.payouts_dispatch_apply(
        claims={payout.pk: claim},
        answers={payout.pk: services.DispatchAnswer(result=answer, verify_before_send=False)},
    )

    assert step == DispatchStep.SKIPPED
    payout.refresh_from_db()
    assert payout.status == PayoutStatus.PROCESSING
    assert [r["operation"] for r in payout.provider_responses] == ["late"]
    assert _entries(payout, LedgerEntryType.PAYOUT_DEBIT) == 0


def test_a_provider_that_raises_leaves_its_payouts_claimed_for_the_sweeper(
    funded_wallet: Wallet, create_payout: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    payout = create_payout().payout

    def broken(name: str) -> Any:
        raise RuntimeError("provider adapter bug")

    provider_get_replace(monkeypatch, broken)
    report = payouts_dispatch_round()
    assert report.outcomes == {"unanswered": 1}
    payout.refresh_from_db()
    assert payout.status == PayoutStatus.PROCESSING
    assert payout.dispatch_claimed_at is not None


def test_limit_and_older_than_choose_the_oldest_reserved_payouts(
    funded_wallet: Wallet, create_payout: Callable[..., Any], settings: Any
) -> None:
    settings.PAYOUT_DISPATCH_ROUND_SIZE = 2
    first, second, third = (create_payout().payout for _ in range(3))
    assert payouts_dispatch_round(older_than=services.dispatch_claim_timeout()).claimed == 0
    report = payouts_dispatch_round()
    assert (report.claimed, report.full) == (2, True)
    assert [Payout.objects.get(pk=p.pk).status for p in (first, second, third)] == [
        PayoutStatus.SUCCESSFUL,
        PayoutStatus.SUCCESSFUL,
        PayoutStatus.RESERVED,
    ]


def _statements(queries: CaptureQueriesContext) -> list[str]:
    """The statements of a round but the events of the payouts that end final (four for them
    all: a savepoint, the events' insert, the webhook settings of their merchants, its release)
    and the savepoints of the steps' transactions."""
    event_statements = ("webhooks_", "merchants_webhooksettings", "SAVEPOINT")
    return [
        query["sql"]
        for query in queries.captured_queries
        if not any(part in query["sql"] for part in event_statements)
    ]


@pytest.mark.parametrize("size", [3, 40])
def test_statements_per_round_do_not_grow_with_its_size(
    test_wallet: Wallet, create_payout: Callable[..., Any], size: int
) -> None:
    fund_wallet(test_wallet, "1000000.00")
    for n in range(size):
        create_payout(account_number=ACCOUNT_FAILED if n % 3 == 0 else GOOD_ACCOUNT)

    with CaptureQueriesContext(connection) as queries:
        report = payouts_dispatch_round()

    assert report.claimed == size
    statements = _statements(queries)
    # claim: lock, the routes, the circuits, the attempts' insert, the payouts' update;
    # sandbox: the merchants' switches, insert, read; apply: lock payouts, the attempts'
    # update, lock wallet, its update, the ledger insert, the payouts' update (a sandbox's
    # answers never move a circuit: no read of them after the apply).
    assert [" ".join(sql.split(" ")[:2]) for sql in statements] == [
        "SELECT " + '"payouts_payout"."id",',
        'SELECT "payouts_payoutroute"."id",',
        'SELECT "payouts_payoutprovidercircuit"."provider_name"',
        "INSERT INTO",
        'UPDATE "payouts_payout"',
        'SELECT "payouts_payoutattempt"."reference"',
        "INSERT INTO",
        'SELECT "payouts_sandboxtransfer"."id",',
        'SELECT "payouts_payout"."id",',
        'UPDATE "payouts_payoutattempt"',
        'SELECT "wallets_wallet"."id",',
        'UPDATE "wallets_wallet"',
        "INSERT INTO",
        'UPDATE "payouts_payout"',
    ]
    # Four for the events of every payout that ended final, and the savepoints the test's
    # transaction makes of the claim's and the apply's transactions.
    assert len(queries.captured_queries) - len(statements) == 4 + 4
    assert Event.objects.filter(payout__wallet=test_wallet).count() == size
    assert_wallet_balanced(test_wallet)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_claims_take_disjoint_payouts() -> None:
    merchant = merchant_create(name="Twin Workers", email="twins@example.com").merchant
    wallet = wallet_get(merchant=merchant, mode=Mode.TEST)
    fund_wallet(wallet, "100000.00")
    for n in range(10):
        services.payout_create(
            merchant=merchant,
            mode=Mode.TEST,
            account_number=GOOD_ACCOUNT,
            bank_code=GTB_CODE,
            amount=Decimal("100.00"),
            idempotency_key=f"twin-{n}",
        )
    first_holds, second_done = threading.Event(), threading.Event()
    claimed: dict[str, list[int]] = {}
    errors: list[BaseException] = []

    def first() -> None:
        try:
            with transaction.atomic():
                claims = services.payouts_dispatch_claim(limit=4)
                claimed["first"] = [claim.payout.pk for claim in claims]
                first_holds.set()
                second_done.wait(timeout=30)  # its row locks held meanwhile
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
            first_holds.set()
        finally:
            connections.close_all()

    def second() -> None:
        try:
            first_holds.wait(timeout=30)
            claims = services.payouts_dispatch_claim(limit=4)
            claimed["second"] = [claim.payout.pk for claim in claims]
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            second_done.set()
            connections.close_all()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert len(claimed["first"]) == len(claimed["second"]) == 4
    assert not set(claimed["first"]) & set(claimed["second"])
    processing = Payout.objects.filter(status=PayoutStatus.PROCESSING)
    assert set(processing.values_list("pk", flat=True)) == set(claimed["first"] + claimed["second"])


# --- Generated rounds -------------------------------------------------------------------------

INITIATE_OUTCOMES = [
    TransferOutcome.SUCCESSFUL,
    TransferOutcome.FAILED,
    TransferOutcome.PENDING,
    TransferOutcome.UNKNOWN,
    TransferOutcome.REJECTED,
    TransferOutcome.NOT_SENT,
]
round_payouts = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=2_000_000).map(lambda kobo: Decimal(kobo).scaleb(-2)),
        st.sampled_from(INITIATE_OUTCOMES),
    ),
    min_size=1,
    max_size=12,
)


@pytest.fixture
def rolled_back() -> Callable[[], Iterator[None]]:
    """Each generated example in a transaction of its own, rolled back at its end."""
    from contextlib import contextmanager

    @contextmanager
    def block() -> Iterator[None]:
        with transaction.atomic():
            yield
            transaction.set_rollback(True)

    return block


@pytest.mark.slow
@hypothesis_settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rounds=st.lists(round_payouts, min_size=1, max_size=3), limit=st.integers(1, 8))
def test_generated_rounds_keep_the_money_exact(
    merchant_account: Any,
    scripted: ScriptedProvider,
    rolled_back: Callable[[], Any],
    rounds: list[list[tuple[Decimal, TransferOutcome]]],
    limit: int,
) -> None:
    with rolled_back():
        wallet = wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST)
        fund_wallet(wallet, "100000000.00")
        scripted.outcomes.clear()
        for round_number, planned in enumerate(rounds):
            for n, (amount, outcome) in enumerate(planned):
                payout = services.payout_create(
                    merchant=merchant_account.merchant,
                    mode=Mode.TEST,
                    account_number=GOOD_ACCOUNT,
                    bank_code=GTB_CODE,
                    amount=amount,
                    idempotency_key=f"gen-{round_number}-{n}",
                ).payout
                scripted.outcomes[payout.internal_reference] = outcome
            while payouts_dispatch_round(limit=limit).full:
                pass
            _assert_exact(wallet)
        scripted.outcomes.clear()  # the deferred ones reach the provider the second time
        payouts_dispatch_stuck()
        _assert_exact(wallet)


def _assert_exact(wallet: Wallet) -> None:
    totals = wallet_totals(wallet=wallet)
    assert totals.available == totals.ledger_available
    assert totals.reserved == totals.ledger_reserved
    assert totals.available + totals.reserved + totals.captured == totals.funded
    pending = Payout.objects.filter(
        wallet=wallet, status__in=(PayoutStatus.RESERVED, PayoutStatus.PROCESSING)
    ).values_list("total_debit_amount", flat=True)
    unsettled = Payout.objects.filter(
        wallet=wallet, status__in=(PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS)
    ).values_list("total_debit_amount", flat=True)
    assert totals.reserved == sum([*pending, *unsettled], Decimal("0.00"))
    counts: dict[int, dict[str, int]] = {}
    for row in (
        LedgerEntry.objects.filter(wallet=wallet, payout_id__isnull=False)
        .values("payout_id", "entry_type")
        .annotate(n=Count("id"))
    ):
        counts.setdefault(row["payout_id"], {})[row["entry_type"]] = row["n"]
    for payout_id, status in Payout.objects.filter(wallet=wallet).values_list("pk", "status"):
        entries = counts.get(payout_id, {})
        captured = entries.get(LedgerEntryType.PAYOUT_DEBIT, 0)
        released = entries.get(LedgerEntryType.PAYOUT_REVERSAL, 0)
        assert captured <= 1 and released <= 1 and not (captured and released)
        assert bool(captured) == (status == PayoutStatus.SUCCESSFUL)
        assert bool(released) == (status == PayoutStatus.FAILED)


# --- The send deadline --------------------------------------------------------------------------


@dataclass
class _SlowOneByOneProvider:
    """The sandbox sent to one transfer at a time, each call taking ``seconds`` of a fake clock."""

    seconds: float
    now: list[float] = field(default_factory=lambda: [0.0])
    sent: list[str] = field(default_factory=list)
    name: str = "sandbox"

    def clock(self) -> float:
        return self.now[0]

    def initiate_transfer(self, request: TransferRequest) -> TransferResult:
        self.sent.append(request.reference)
        self.now[0] += self.seconds
        return provider_get("sandbox").initiate_transfer(request)

    def verify_transfer(self, *, reference: str) -> TransferResult:
        return provider_get("sandbox").verify_transfer(reference=reference)


def test_nothing_is_sent_after_half_the_claim_timeout_and_the_rest_go_to_the_sweeper(
    funded_wallet: Wallet,
    create_payout: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    settings.PAYOUT_DISPATCH_CLAIM_TIMEOUT = timedelta(seconds=100)
    payouts = [create_payout().payout for _ in range(4)]
    slow = _SlowOneByOneProvider(seconds=30)  # sends start at 0, 30, 60 (past 50), …
    provider_get_replace(monkeypatch, lambda name: slow)

    report = payouts_dispatch_round(clock=slow.clock)

    assert report.outcomes == {"successful": 2, "deferred": 2}
    assert slow.sent == [payout.internal_reference for payout in payouts[:2]]
    unsent = [Payout.objects.get(pk=payout.pk) for payout in payouts[2:]]
    assert [(p.status, p.dispatch_claimed_at, p.verify_before_send) for p in unsent] == [
        (PayoutStatus.PROCESSING, None, False),
        (PayoutStatus.PROCESSING, None, False),
    ]
    monkeypatch.undo()
    payouts_dispatch_stuck()
    assert {Payout.objects.get(pk=payout.pk).status for payout in payouts} == {
        PayoutStatus.SUCCESSFUL
    }
    # The two not sent went again as second attempts, under references of their own.
    references = PayoutAttempt.objects.filter(payout__in=payouts).values("reference")
    sends = SandboxTransfer.objects.filter(reference__in=references)
    assert sorted(sends.values_list("initiate_count", flat=True)) == [1, 1, 1, 1]
    assert_wallet_balanced(funded_wallet)


def test_a_bulk_call_is_not_started_once_the_deadline_has_passed(
    funded_wallet: Wallet, create_payout: Callable[..., Any], settings: Any
) -> None:
    settings.PAYOUT_DISPATCH_CLAIM_TIMEOUT = timedelta(seconds=100)
    payout = create_payout().payout
    readings = iter([0.0, 50.0])  # the deadline set at 0 + 50; the send checks at 50

    report = payouts_dispatch_round(clock=lambda: next(readings))

    assert report.outcomes == {"deferred": 1}
    assert not SandboxTransfer.objects.filter(reference=payout.internal_reference).exists()
