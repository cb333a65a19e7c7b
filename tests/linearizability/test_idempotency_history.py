"""Payout creation is idempotent per wallet and key under real concurrency, over HTTP.

Clients in threads, released together by a barrier, POST creates with ONE idempotency key to
gunicorn (two workers, four threads each) in live mode. Every request is recorded: monotonic
invocation and completion times, the HTTP status and parsed body, or the transport error. The
history checker decides whether one payout explains the history (``history.py``), and the
database must agree: one payout with the key, one reservation entry for it, its total debit
reserved once. The Celery worker is stopped while the clients run, so the reservation is seen
before the dispatch; released, it sends the transfer and the provider sees exactly one transfer
for the payout's reference, and the wallet reconciles (available + reserved + captured =
funded).

Three rounds, one per test: identical requests; the same key with two different amounts; and
clients whose first request times out on their side while the server is still working on it
(the payouts table is held under a SHARE lock), who then retry with the same key as a merchant
does after a disconnect.
"""

from __future__ import annotations

import contextlib
import http.client
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

import psycopg
import pytest

from merchants.services import MerchantCreated
from payouts.models import Payout, PayoutStatus
from tests.celery_worker import database_url_for_processes, wait_for
from tests.faults.conftest import LIVE_MODE, funded_wallet, http_json, payout_body
from tests.linearizability.conftest import Stack
from tests.linearizability.history import (
    Operation,
    Outcome,
    Verdict,
    history_check,
    history_summary,
)
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from wallets.selectors import wallet_totals

pytestmark = [pytest.mark.multiprocess]

CLIENTS = 16
AMOUNT = "1000.00"
OTHER_AMOUNT = "2500.00"
FUNDED = Decimal("100000.00")
ANSWER_TIMEOUT = 20.0  # a client's patience for an answer
LOST_TIMEOUT = 0.5  # the clients that give up early
ROUND_TIMEOUT = 45.0
DISPATCH_TIMEOUT = 30.0


@dataclass(frozen=True)
class Attempt:
    body: dict[str, str]
    timeout: float = ANSWER_TIMEOUT


@dataclass
class Round:
    """Client threads, each sending its attempts in turn and stopping at the first that gets an
    HTTP answer (a merchant retries only when no answer came back)."""

    stack: Stack
    secret_key: str
    plan: dict[str, list[Attempt]]
    history: list[Operation] = field(default_factory=list)
    first_attempt_done: dict[str, threading.Event] = field(default_factory=dict)
    threads: list[threading.Thread] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Round:
        barrier = threading.Barrier(len(self.plan))
        for client, attempts in self.plan.items():
            self.first_attempt_done[client] = threading.Event()
            thread = threading.Thread(
                target=self._client, args=(client, attempts, barrier), name=client
            )
            thread.start()
            self.threads.append(thread)
        return self

    def join(self) -> list[Operation]:
        deadline = time.monotonic() + ROUND_TIMEOUT
        for thread in self.threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        stuck = [thread.name for thread in self.threads if thread.is_alive()]
        assert not stuck, f"clients still running after {ROUND_TIMEOUT}s: {stuck}"
        return self.history

    def _client(self, client: str, attempts: list[Attempt], barrier: threading.Barrier) -> None:
        barrier.wait(timeout=10)
        for number, attempt in enumerate(attempts):
            name = client if number == 0 else f"{client}-retry{number}"
            operation = self._create(name, attempt)
            with self.lock:
                self.history.append(operation)
            self.first_attempt_done[client].set()
            if operation.status is not None:
                return

    def _create(self, name: str, attempt: Attempt) -> Operation:
        params = {k: v for k, v in attempt.body.items() if k != "idempotency_key"}
        invoked_at = time.monotonic()
        try:
            status, body = http_json(
                "POST",
                self.stack.payouts_url,
                key=self.secret_key,
                body=attempt.body,
                timeout=attempt.timeout,
            )
        except (OSError, http.client.HTTPException, ValueError) as error:
            return Operation(
                client=name,
                params=params,
                invoked_at=invoked_at,
                completed_at=time.monotonic(),
                error=f"{type(error).__name__}: {error}",
            )
        return Operation(
            client=name,
            params=params,
            invoked_at=invoked_at,
            completed_at=time.monotonic(),
            status=status,
            body=body,
        )


@contextlib.contextmanager
def diagnosed(history: Sequence[Operation]) -> Iterator[None]:
    """On any failure inside, prints the history summary (pytest shows it with the failure)."""
    try:
        yield
    except BaseException:
        print(f"history of the round:\n{history_summary(history)}")
        raise


def server_quiet(stack: Stack, requests_sent: int) -> None:
    """Waits until gunicorn finished every create sent, answered or abandoned by its client."""
    wait_for(
        lambda: stack.creates_finished() >= requests_sent,
        timeout=ROUND_TIMEOUT,
        what=f"gunicorn to finish {requests_sent} creates (finished {stack.creates_finished()})",
    )


def reservation_assert(wallet: Wallet, key: str, verdict: Verdict) -> Payout:
    """One payout with the key, one reservation entry (for it, of its total debit), the total
    reserved once; the dispatch has not run yet."""
    payouts = list(Payout.objects.filter(wallet_id=wallet.pk, idempotency_key=key))
    assert len(payouts) == 1, f"payouts with key {key!r}: {[payout.pk for payout in payouts]}"
    payout = payouts[0]
    if verdict.payout is not None:
        assert verdict.payout["id"] == payout.pk
        assert verdict.payout["internal_reference"] == payout.internal_reference
    reserves = LedgerEntry.objects.filter(
        wallet_id=wallet.pk, entry_type=LedgerEntryType.PAYOUT_RESERVE
    )
    assert [(entry.payout_id, entry.amount) for entry in reserves] == [
        (payout.pk, payout.total_debit_amount)
    ]
    wallet.refresh_from_db()
    assert wallet.reserved_balance == payout.total_debit_amount
    assert wallet.available_balance == FUNDED - payout.total_debit_amount
    assert payout.status == PayoutStatus.RESERVED
    return payout


def dispatch_assert(stack: Stack, wallet: Wallet, payout: Payout) -> None:
    """The worker sent one transfer for the payout's reference and captured it once; the wallet
    reconciles with its ledger and its funding."""
    wait_for(
        lambda: Payout.objects.filter(pk=payout.pk, status=PayoutStatus.SUCCESSFUL).exists(),
        timeout=DISPATCH_TIMEOUT,
        what=f"the worker to settle {payout.internal_reference}",
    )
    assert stack.provider.posts_to_transfer(payout.internal_reference) == 1
    assert stack.provider.posts_to_transfer() == 1
    debits = LedgerEntry.objects.filter(
        wallet_id=wallet.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
    )
    assert [entry.payout_id for entry in debits] == [payout.pk]
    totals = wallet_totals(wallet=wallet)
    assert totals.balanced, totals
    assert totals.funded == FUNDED
    assert totals.captured == payout.total_debit_amount
    assert totals.reserved == Decimal("0.00")
    assert totals.available + totals.reserved + totals.captured == totals.funded


def outcomes(history: Sequence[Operation]) -> Counter[Outcome]:
    return Counter(op.outcome for op in history)


@pytest.mark.django_db(transaction=True)
def test_identical_concurrent_creates_are_explained_by_one_payout(
    merchant_account: MerchantCreated, stack: Stack
) -> None:
    wallet = funded_wallet(merchant_account, LIVE_MODE, str(FUNDED))
    key = "lin-identical"
    plan = {f"c{n:02d}": [Attempt(payout_body(key, AMOUNT))] for n in range(CLIENTS)}

    with stack.worker_held():
        history = Round(stack, merchant_account.live_key.plaintext, plan).start().join()
        with diagnosed(history):
            server_quiet(stack, len(history))
            verdict = history_check(history)
            assert verdict.ok, verdict.explanation
            assert outcomes(history) == {Outcome.CREATED: 1, Outcome.REPLAYED: CLIENTS - 1}
            payout = reservation_assert(wallet, key, verdict)

    with diagnosed(history):
        dispatch_assert(stack, wallet, payout)


@pytest.mark.django_db(transaction=True)
def test_the_same_key_with_different_amounts_is_one_payout_and_409s_for_the_others(
    merchant_account: MerchantCreated, stack: Stack
) -> None:
    wallet = funded_wallet(merchant_account, LIVE_MODE, str(FUNDED))
    key = "lin-mixed"
    plan = {
        f"c{n:02d}": [Attempt(payout_body(key, OTHER_AMOUNT if n % 4 == 1 else AMOUNT))]
        for n in range(CLIENTS)
    }

    with stack.worker_held():
        history = Round(stack, merchant_account.live_key.plaintext, plan).start().join()
        with diagnosed(history):
            server_quiet(stack, len(history))
            verdict = history_check(history)
            assert verdict.ok, verdict.explanation
            creator = verdict.creator
            assert creator is not None
            same = sum(1 for op in history if op.params == creator.params)
            assert outcomes(history) == {
                Outcome.CREATED: 1,
                Outcome.REPLAYED: same - 1,
                Outcome.CONFLICT: CLIENTS - same,
            }
            payout = reservation_assert(wallet, key, verdict)
            assert payout.amount == Decimal(creator.params["amount"])

    with diagnosed(history):
        dispatch_assert(stack, wallet, payout)


@pytest.mark.django_db(transaction=True)
def test_retries_after_client_timeouts_are_explained_by_one_payout(
    merchant_account: MerchantCreated, stack: Stack
) -> None:
    """While the payouts table is under a SHARE lock every create waits at its insert, so the
    impatient clients' first requests deterministically time out on their side, still in
    flight on the server; their retries race with them once the lock is released."""
    wallet = funded_wallet(merchant_account, LIVE_MODE, str(FUNDED))
    key = "lin-retry"
    body = payout_body(key, AMOUNT)
    impatient = {f"c{n:02d}" for n in range(0, 12, 3)}
    plan = {
        f"c{n:02d}": (
            [Attempt(body, LOST_TIMEOUT), Attempt(body)]
            if f"c{n:02d}" in impatient
            else [Attempt(body)]
        )
        for n in range(12)
    }

    with stack.worker_held():
        with psycopg.connect(database_url_for_processes("linearizability-lock")) as blocker:
            blocker.execute(f"LOCK TABLE {Payout._meta.db_table} IN SHARE MODE")
            clients = Round(stack, merchant_account.live_key.plaintext, plan).start()
            for client in impatient:
                assert clients.first_attempt_done[client].wait(timeout=ROUND_TIMEOUT)
            time.sleep(0.3)  # the retries reach the server while the lock is held
            blocker.rollback()
        history = clients.join()
        with diagnosed(history):
            server_quiet(stack, len(history))
            verdict = history_check(history)
            assert verdict.ok, verdict.explanation
            assert sorted(op.client for op in verdict.unknown) == sorted(impatient)
            assert all("timed out" in (op.error or "") for op in verdict.unknown)
            answered = [op for op in history if op.outcome is not Outcome.UNKNOWN]
            assert sorted(op.client for op in answered) == sorted(
                [client for client in plan if client not in impatient]
                + [f"{client}-retry1" for client in impatient]
            )
            assert outcomes(answered)[Outcome.REPLAYED] >= len(answered) - 1
            payout = reservation_assert(wallet, key, verdict)

    with diagnosed(history):
        dispatch_assert(stack, wallet, payout)
