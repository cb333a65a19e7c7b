"""The deterministic simulator of the money core: a Hypothesis state machine whose rules are the
operations merchants, customers, providers, workers, sweepers and finance staff perform, run
against the real services and task bodies, with crashes injected at named points. After every
step the invariants are checked; at the end the world is healed and driven to quiescence, and
every payout must be final and agree with what the provider really did.

Two payout providers carry the payouts (``routing``): a send that certainly moved no money
fails over to the other; outages and slow answers are rules of their own.

A failing run prints the shortened sequence of steps (Hypothesis shrinks it) and, under
``make simulate``, the seed that reproduces it.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import requests
import responses
from celery.exceptions import Retry
from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections, transaction
from django.db.models import Count
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

from collections_app import services as collection_services
from collections_app.models import CollectionTransaction, PaymentStatus, TransactionAttempt
from collections_app.tasks import transactions_expire_task
from core.exceptions import ApplicationError, ConflictError
from merchants.models import Mode
from merchants.services import merchant_create
from payouts import services as payout_services
from payouts import tasks as payout_tasks
from payouts.models import FINAL_STATUSES, PENDING_STATUSES, Payout, PayoutStatus
from tests.merchants.factories import WebhookSettingsFactory
from tests.payment_items.factories import PaymentItemFactory
from tests.simulation.controls import ControlsRules
from tests.simulation.money_in import MONEY_IN_TASKS, MoneyInRules
from tests.simulation.routing import RoutingRules
from tests.simulation.world import (
    CrashPoint,
    ProviderHandle,
    ReceiverAnswer,
    Script,
    ScriptedProvider,
    SecondProviderHandle,
    SimBroker,
    SimClock,
    SimulatedCrash,
    WebhookReceiver,
)
from wallets.exceptions import (
    FundingReferenceConflictError,
    InsufficientBalanceError,
    WalletInactiveError,
)
from wallets.models import LedgerEntry, LedgerEntryType, WalletStatus
from wallets.selectors import payout_fee_calculate, wallet_get, wallet_totals
from wallets.services import funding_receive, wallet_status_set
from webhooks import tasks as webhook_tasks
from webhooks.models import DeliveryStatus, Event, WebhookDelivery

HOOK_URL = "https://merchant.example.com/hooks"
CALLBACK_URL = "https://merchant.example.com/payments/callback"
VISIBILITY_TIMEOUT = timedelta(seconds=300)
ITEM_PRICE = Decimal("7000.00")

amounts = st.one_of(
    st.sampled_from([Decimal(v) for v in ("0.07", "1.13", "59.96", "506.17", "8188.62")]),
    st.integers(min_value=1, max_value=5_000_000).map(lambda kobo: Decimal(kobo).scaleb(-2)),
)
fundings = st.one_of(
    st.sampled_from([Decimal(v) for v in ("100000.00", "250000.37", "1000000.00", "5000.13")]),
    st.integers(min_value=1, max_value=100_000_000).map(lambda k: Decimal(k).scaleb(-2)),
)
_sequence = itertools.count(1)


@dataclass
class Environment:
    """What the test fixture hands the machine: the patched outside world."""

    clock: SimClock
    broker: SimBroker
    provider: ScriptedProvider
    providers: dict[str, ScriptedProvider]
    receiver: WebhookReceiver
    tasks: dict[str, Any]
    start: datetime
    history: list[str] = field(default_factory=list)
    stats: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str:
        lines = [f"{count:6d}  {what}" for what, count in sorted(self.stats.items())]
        lines += [
            f"{n:6d}  webhook receiver answered {k}" for k, n in self.receiver.answered.items()
        ]
        lines.append(f"{self.broker.published:6d}  messages published")
        return "\n".join(lines)


ENVIRONMENT: Environment | None = None


def _confirm(collection: CollectionTransaction, **kwargs: Any) -> Any:
    return collection_services.transaction_confirm(collection=collection, **kwargs)


class MoneyCoreMachine(RoutingRules, MoneyInRules, ControlsRules, RuleBasedStateMachine):
    payouts = Bundle("payouts")
    funding_refs = Bundle("funding_refs")
    keys = Bundle("keys")
    collections = Bundle("collections")

    def __init__(self) -> None:
        super().__init__()
        assert ENVIRONMENT is not None, "the simulation fixture sets the environment"
        self.env = ENVIRONMENT
        # Every sequence starts from the same world and leaves nothing behind: its database
        # work is rolled back at the end, so a replayed sequence sees exactly what it saw.
        self.env.history.clear()
        self.env.clock.current = self.env.start
        self.env.broker.reset()
        for provider in self.env.providers.values():
            provider.reset()
        self.env.receiver.reset()
        payout_tasks.dispatch_wake.reset()
        self._sequence_atomic = transaction.atomic()
        self._sequence_atomic.__enter__()
        self.final_seen: dict[int, str] = {}
        self.key_params: dict[str, tuple[str, Decimal]] = {}
        self.key_payout: dict[str, int] = {}

    # --- the world ---------------------------------------------------------------------------

    @initialize()
    def open_merchant(self) -> None:
        number = next(_sequence)
        account = merchant_create(name=f"Sim {number}", email=f"sim{number}@example.com")
        self.merchant = account.merchant
        self.wallet = wallet_get(merchant=self.merchant, mode=Mode.TEST)
        self.payout_wallet_ids = [self.wallet.pk]
        WebhookSettingsFactory(merchant=self.merchant, mode=Mode.TEST, url=HOOK_URL)
        self.item = PaymentItemFactory(merchant=self.merchant, mode=Mode.TEST, amount=ITEM_PRICE)
        self.finance = get_user_model().objects.create_user(username=f"finance-{number}")
        self._committed(
            lambda: funding_receive(
                account_number=self.wallet.static_account_number,
                amount=Decimal("500000.00"),
                reference=f"SIM-OPENING-{number}",
            )
        )
        self._money_in_open()
        self._controls_open(creating_key_id=account.test_key.secret_key.pk)

    def _log(self, text: str) -> None:
        self.env.history.append(f"[{self.env.clock.now():%H:%M:%S}] {text}")

    def _event(self, text: str) -> None:
        """Counted in the run's statistics: what the sequences actually explored."""
        self.env.stats[text] += 1

    def _committed(self, operation: Any, *, lose_queued: bool = False) -> Any:
        """Runs one step as its own unit of work: the tasks its commits queue are published
        when it ends, or lost (a crash after the commit, before the publish)."""
        connection = connections[DEFAULT_DB_ALIAS]
        start = len(connection.run_on_commit)
        try:
            return operation()
        finally:
            callbacks = connection.run_on_commit[start:]
            del connection.run_on_commit[start:]
            if lose_queued:
                self._log(f"   crash: {len(callbacks)} queued task(s) lost")
                self._event(f"crash: {CrashPoint.AFTER_SETTLEMENT_BEFORE_ENQUEUE}")
            else:
                for _savepoints, callback, _robust in callbacks:
                    callback()

    # --- merchants and money in --------------------------------------------------------------

    @rule(target=funding_refs, amount=fundings)
    def fund(self, amount: Decimal) -> tuple[str, Decimal]:
        reference = f"SIM-FUND-{next(_sequence)}"
        result = self._committed(
            lambda: funding_receive(
                account_number=self.wallet.static_account_number,
                amount=amount,
                reference=reference,
            )
        )
        assert result.duplicate is False
        self._log(f"fund {amount} ({reference})")
        self._event("fund")
        return reference, amount

    @rule(funding=funding_refs, same_amount=st.booleans())
    def replay_funding(self, funding: tuple[str, Decimal], same_amount: bool) -> None:
        reference, amount = funding
        if same_amount:
            result = funding_receive(
                account_number=self.wallet.static_account_number,
                amount=amount,
                reference=reference,
            )
            assert result.duplicate is True, f"funding {reference} credited twice"
        else:
            try:
                funding_receive(
                    account_number=self.wallet.static_account_number,
                    amount=amount + Decimal("0.01"),
                    reference=reference,
                )
            except FundingReferenceConflictError:
                pass
            else:
                raise AssertionError(f"funding {reference} replayed with another amount")
        self._log(f"replay funding {reference} (same amount: {same_amount})")

    @rule(active=st.sampled_from([True, True, True, False]))
    def set_wallet_status(self, active: bool) -> None:
        status = WalletStatus.ACTIVE if active else WalletStatus.INACTIVE
        wallet_status_set(wallet_id=self.wallet.pk, status=status)
        self._log(f"wallet {status}")

    @rule(amount=amounts)
    def quote(self, amount: Decimal) -> None:
        from payouts.selectors import payout_quote

        quote = payout_quote(amount=amount)
        assert quote.total_debit_amount == quote.amount + quote.fee_amount
        assert quote.amount == amount

    # --- payouts -----------------------------------------------------------------------------

    def _create(self, *, key: str, account: str, amount: Decimal) -> Payout | None:
        wallet = type(self.wallet).objects.get(pk=self.wallet.pk)
        try:
            result = self._committed(
                lambda: payout_services.payout_create(
                    merchant=self.merchant,
                    mode=Mode.TEST,
                    account_number=account,
                    bank_code="058",
                    amount=amount,
                    idempotency_key=key,
                )
            )
        except InsufficientBalanceError:
            total = amount + payout_fee_calculate(amount=amount)
            assert wallet.available_balance < total, "refused although the balance covers it"
            self._log(f"create {key} {amount}: insufficient balance")
            self._event("create: insufficient balance")
            return None
        except WalletInactiveError:
            assert wallet.status == WalletStatus.INACTIVE
            self._log(f"create {key} {amount}: wallet inactive")
            self._event("create: wallet inactive")
            return None
        payout = result.payout
        if key in self.key_payout:
            assert result.duplicate, f"key {key} created a second payout"
            assert payout.pk == self.key_payout[key], f"replay of {key} returned another payout"
        else:
            assert not result.duplicate
            self.key_payout[key] = payout.pk
            self.key_params[key] = (account, amount)
        self._log(f"create {key} {amount} → payout {payout.pk} (duplicate {result.duplicate})")
        self._event("create: replay" if result.duplicate else "create: new payout")
        return payout

    @rule(target=payouts, amount=amounts, script=st.sampled_from(list(Script)))
    def create_payout(self, amount: Decimal, script: Script) -> Any:
        key = f"sim-key-{next(_sequence)}"
        payout = self._create(key=key, account="0123456789", amount=amount)
        if payout is None:
            return multiple()
        self.env.provider.scripts[payout.internal_reference] = script
        self._event(f"payout script: {script}")
        self._log(f"   provider script for payout {payout.pk}: {script}")
        return payout.pk

    @precondition(lambda self: bool(self.key_payout))
    @rule(data=st.data(), same=st.booleans())
    def replay_create(self, data: st.DataObject, same: bool) -> None:
        key = data.draw(st.sampled_from(sorted(self.key_payout)))
        account, amount = self.key_params[key]
        if same:
            self._create(key=key, account=account, amount=amount)
            return
        try:
            self._committed(
                lambda: payout_services.payout_create(
                    merchant=self.merchant,
                    mode=Mode.TEST,
                    account_number=account,
                    bank_code="058",
                    amount=amount + Decimal("1.00"),
                    idempotency_key=key,
                )
            )
        except ConflictError:
            self._log(f"create {key} with other parameters: 409")
        else:
            raise AssertionError(f"key {key} reused with other parameters was accepted")

    @rule()
    def create_for_an_unresolvable_account(self) -> None:
        try:
            payout_services.payout_create(
                merchant=self.merchant,
                mode=Mode.TEST,
                account_number="0000000000",
                bank_code="058",
                amount=Decimal("10.00"),
                idempotency_key=f"sim-bad-{next(_sequence)}",
            )
        except (ApplicationError, InsufficientBalanceError, WalletInactiveError):
            return
        raise AssertionError("a payout to an unresolvable account was accepted")

    @rule(payout_id=payouts)
    def requery_from_the_api(self, payout_id: int) -> None:
        payout = Payout.objects.get(pk=payout_id)
        try:
            payout = self._committed(lambda: payout_services.payout_requery(payout=payout))
        except ConflictError:
            assert payout.status in FINAL_STATUSES
            return
        self._log(f"API requery payout {payout_id} → {payout.status}")
        self._event(f"API requery → {payout.status}")

    @rule(payout_id=consumes(payouts))
    def finance_resolves(self, payout_id: int) -> None:
        """Finance settles an ambiguous payout from the bank statement (the provider's truth);
        nothing is decided while the statement shows nothing final."""
        payout = Payout.objects.get(pk=payout_id)
        truth = self.payout_money_truth(payout_id)
        if payout.status != PayoutStatus.AMBIGUOUS or truth not in ("success", "failed"):
            return
        to_status = PayoutStatus.SUCCESSFUL if truth == "success" else PayoutStatus.FAILED
        self._committed(
            lambda: payout_services.payout_resolve_manually(
                payout_id=payout_id,
                to_status=to_status,
                reason="matched against the provider statement",
                resolved_by=self.finance,
            )
        )
        self._log(f"finance resolves payout {payout_id} as {to_status}")
        self._event(f"finance resolves as {to_status}")

    # --- collections -------------------------------------------------------------------------

    @rule(target=collections, channel=st.sampled_from(["card", "bank", "bank-transfer"]))
    def initialize_collection(self, channel: str) -> int:
        reference = f"sim-order-{next(_sequence)}"
        result = self._committed(
            lambda: collection_services.transaction_initialize(
                merchant=self.merchant,
                mode=Mode.TEST,
                payment_item_id=self.item.pk,
                transaction_reference=reference,
                channel=channel,
                amount=ITEM_PRICE,
                customer_info=collection_services.CustomerInfo(
                    email="ada@example.com",
                    phone_number="08031234567",
                    first_name="Ada",
                    last_name="Obi",
                ),
                callback_url=CALLBACK_URL,
            )
        )
        collection = result.transaction
        self._log(f"initialize collection {collection.pk} ({channel})")
        return collection.pk

    @rule(
        collection_id=collections,
        outcome=st.sampled_from(["paid", "paid", "failed", "cancelled"]),
        source=st.sampled_from(["checkout", "provider_webhook", "test_helper", "provider_verify"]),
        crash=st.booleans(),
    )
    def confirm_collection(
        self, collection_id: int, outcome: str, source: str, crash: bool
    ) -> None:
        collection = CollectionTransaction.objects.get(pk=collection_id)
        self._committed(
            lambda: _confirm(collection, outcome=outcome, source=source),
            lose_queued=crash,
        )
        self._log(f"confirm collection {collection_id} {outcome} via {source}")
        self._event(f"collection confirmation {outcome}")

    @rule()
    def expire_collections(self) -> None:
        self.env.clock.advance(timedelta(hours=25))
        self._committed(lambda: transactions_expire_task.run())
        self._log("25 h later: expiry sweep")

    # --- time, broker, workers, sweepers -----------------------------------------------------

    @rule(seconds=st.sampled_from([1, 30, 130, 200, 400, 3600, 6 * 3600]))
    def advance_time(self, seconds: int) -> None:
        self.env.clock.advance(timedelta(seconds=seconds))
        self._log(f"time +{seconds}s")

    @rule(answers=st.lists(st.sampled_from(list(ReceiverAnswer)), min_size=1, max_size=3))
    def receiver_will_answer(self, answers: list[ReceiverAnswer]) -> None:
        self.env.receiver.answers.extend(answers)

    @precondition(lambda self: bool(self.env.broker.due()))
    @rule(data=st.data(), duplicate=st.booleans())
    def worker_takes_a_message(self, data: st.DataObject, duplicate: bool) -> None:
        message = data.draw(st.sampled_from(self.env.broker.due()), label="message")
        self._deliver(message, duplicate=duplicate)

    @precondition(lambda self: bool(self.env.broker.due()))
    @rule()
    def worker_takes_the_oldest_message(self) -> None:
        self._deliver(self.env.broker.due()[0])

    @precondition(lambda self: bool(self.env.broker.due()))
    @rule(data=st.data(), crash=st.sampled_from(list(CrashPoint)), lose=st.booleans())
    def worker_crashes_on_a_message(
        self, data: st.DataObject, crash: CrashPoint, lose: bool
    ) -> None:
        due = self.env.broker.due()
        dispatch_tasks = (
            payout_tasks.payout_dispatch_task.name,
            payout_tasks.payouts_dispatch_round_task.name,
        )
        dispatches = [m for m in due if m.task_name in dispatch_tasks]
        if (
            crash
            in (
                CrashPoint.AFTER_CLAIM_BEFORE_PROVIDER,
                CrashPoint.AFTER_PROVIDER_BEFORE_SETTLEMENT,
            )
            and dispatches
        ):
            due = dispatches
        message = data.draw(st.sampled_from(due), label="message")
        self._deliver(message, crash=crash, lose_on_crash=lose)

    def _deliver(
        self,
        message: Any,
        *,
        crash: CrashPoint | None = None,
        duplicate: bool = False,
        lose_on_crash: bool = False,
    ) -> None:
        broker, receiver = self.env.broker, self.env.receiver
        broker.take(message)
        task = self.env.tasks[message.task_name]
        self.providers_crash_next(crash)
        receiver.crash_next = crash == CrashPoint.DURING_WEBHOOK_DELIVERY
        lose_queued = crash == CrashPoint.AFTER_SETTLEMENT_BEFORE_ENQUEUE
        try:
            outcome = self._committed(
                lambda: task.run(*message.args, **message.kwargs), lose_queued=lose_queued
            )
        except SimulatedCrash as crashed:
            self._event(f"crash: {crashed}")
            if lose_on_crash:
                broker.lost += 1
                self._log(f"worker crash in {message} ({crashed}); message lost")
            else:
                broker.redeliver_later(message, after=VISIBILITY_TIMEOUT)
                self._log(f"worker crash in {message} ({crashed}); redelivered later")
            return
        except Retry:
            broker.publish(message.task_name, message.args, message.kwargs, countdown=30)
            self._log(f"{message}: retry in 30 s")
            return
        except (payout_tasks.DispatchDeferredError, OperationalError) as error:
            broker.publish(message.task_name, message.args, message.kwargs, countdown=10)
            self._log(f"{message}: deferred ({error}); retry in 10 s")
            return
        finally:
            self.providers_crash_next(None)
            receiver.crash_next = False
        self._log(f"worker ran {message} → {outcome}")
        label = "a settlement" if str(outcome).startswith("STL_") else outcome
        self._event(f"{message.task_name.rsplit('.', 1)[-1]} → {label}")
        if duplicate:  # at-least-once: the same message again
            broker.publish(message.task_name, message.args, message.kwargs)

    @rule(
        crash=st.sampled_from(
            [
                None,
                None,
                CrashPoint.AFTER_CLAIM_BEFORE_PROVIDER,
                CrashPoint.AFTER_PROVIDER_BEFORE_SETTLEMENT,
                CrashPoint.AFTER_SETTLEMENT_BEFORE_ENQUEUE,
            ]
        )
    )
    def beat_dispatch_round(self, crash: CrashPoint | None = None) -> None:
        """Beat's batch dispatch, in a process that may die at a named point."""
        self.providers_crash_next(crash)
        try:
            summary = self._committed(
                lambda: payout_tasks.payouts_dispatch_round_task.run(),
                lose_queued=crash == CrashPoint.AFTER_SETTLEMENT_BEFORE_ENQUEUE,
            )
        except SimulatedCrash as crashed:
            self._event(f"crash in a batch dispatch: {crashed}")
            self._log(f"beat: batch dispatch crashed ({crashed})")
            return
        finally:
            self.providers_crash_next(None)
        if "0 payout(s) claimed" not in summary:
            self._event("batch dispatch claimed payouts")
        self._log(f"beat: {summary}")

    @rule()
    def beat_dispatch_stuck(self) -> None:
        summary = self._committed(lambda: payout_tasks.payouts_dispatch_stuck_task.run())
        self._log(f"beat: {summary}")

    @rule()
    def beat_requery_due(self) -> None:
        summary = self._committed(lambda: payout_tasks.payouts_requery_due_task.run())
        self._log(f"beat: {summary}")

    @rule()
    def beat_webhook_sweep(self) -> None:
        count = self._committed(lambda: webhook_tasks.webhook_deliveries_sweep_task.run())
        self._log(f"beat: {count} delivery(ies) queued")

    # --- invariants --------------------------------------------------------------------------

    @invariant()
    def wallet_is_exact(self) -> None:
        if hasattr(self, "wallet"):
            self._wallet_exact(self.wallet.pk)

    def _wallet_exact(self, wallet_id: int) -> None:
        """Also the platform's wallet (``money_in``), where subaccount shares wait."""
        totals = wallet_totals(wallet=type(self.wallet)(pk=wallet_id))
        name = f"wallet {wallet_id}"
        assert totals.available >= 0 and totals.reserved >= 0, f"{name}: negative balance"
        assert totals.balanced, (
            f"{name}: available + reserved + captured + refunded ≠ funded + credited, "
            f"or a balance ≠ its ledger ({totals})"
        )
        pending_total = sum(
            Payout.objects.filter(wallet_id=wallet_id, status__in=PENDING_STATUSES).values_list(
                "total_debit_amount", flat=True
            ),
            Decimal("0.00"),
        )
        assert totals.reserved == pending_total, (
            f"{name}: reserved {totals.reserved} ≠ pending payouts' debits {pending_total}"
        )

    @invariant()
    def payouts_settle_once_and_have_a_way_out(self) -> None:
        if not hasattr(self, "wallet"):
            return
        entries: dict[int, dict[str, int]] = defaultdict(dict)
        for row in (
            LedgerEntry.objects.filter(
                wallet_id__in=self.payout_wallet_ids, payout_id__isnull=False
            )
            .values("payout_id", "entry_type")
            .annotate(n=Count("id"))
        ):
            entries[row["payout_id"]][row["entry_type"]] = row["n"]
        rows = Payout.objects.filter(wallet_id__in=self.payout_wallet_ids).values_list(
            "pk", "status", "next_requery_at"
        )
        for payout_id, status, next_requery in rows:
            name = f"payout {payout_id}"
            counts = entries.get(payout_id, {})
            captured = counts.get(LedgerEntryType.PAYOUT_DEBIT, 0)
            released = counts.get(LedgerEntryType.PAYOUT_REVERSAL, 0)
            assert counts.get(LedgerEntryType.PAYOUT_RESERVE, 0) == 1, f"{name}: reserved ≠ once"
            assert captured <= 1 and released <= 1, f"{name}: captured or released twice"
            assert not (captured and released), f"{name}: both captured and released"
            assert (status == PayoutStatus.SUCCESSFUL) == bool(captured), f"{name}: capture"
            assert (status == PayoutStatus.FAILED) == bool(released), f"{name}: release"
            if payout_id in self.final_seen:
                assert status == self.final_seen[payout_id], (
                    f"{name}: final status {self.final_seen[payout_id]} changed to {status}"
                )
            elif status in FINAL_STATUSES:
                self.final_seen[payout_id] = status
            if status in (PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS):
                assert next_requery is not None, f"{name}: {status} with no requery scheduled"
        # What the providers received and hold of each payout: ``attempts_keep_the_money_rule``.

    @invariant()
    def collections_are_paid_once(self) -> None:
        if not hasattr(self, "merchant"):
            return
        applied_paid = (
            TransactionAttempt.objects.filter(
                transaction__merchant=self.merchant, applied=True, outcome=PaymentStatus.PAID
            )
            .values("transaction_id")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
        )
        assert not applied_paid.exists(), f"paid more than once: {list(applied_paid)}"
        events = (
            Event.objects.filter(merchant=self.merchant)
            .exclude(transaction=None, payout=None)
            .values("transaction_id", "payout_id", "event_type")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
        )
        assert not events.exists(), f"an event recorded twice: {list(events)}"

    @invariant()
    def every_delivery_carries_the_same_bytes(self) -> None:
        for event_id, bodies in self.env.receiver.bodies.items():
            assert len(bodies) == 1, f"event {event_id} delivered with different bytes"

    # --- the end: heal, drain, and check that nothing is stuck -------------------------------

    def teardown(self) -> None:
        try:
            if hasattr(self, "wallet"):
                self._drain_and_check()
        finally:
            transaction.set_rollback(True)
            self._sequence_atomic.__exit__(None, None, None)

    def _drain_and_check(self) -> None:
        env = self.env
        for provider in env.providers.values():
            provider.heal()
        env.receiver.answers.clear()
        for _round in range(40):
            env.clock.advance(timedelta(hours=1))
            self._money_in_drain_round()
            self._controls_drain_round()
            self.beat_dispatch_round()
            self.beat_dispatch_stuck()
            self.beat_requery_due()
            self.beat_webhook_sweep()
            for _ in range(500):
                due = env.broker.due()
                if not due:
                    break
                self._deliver(due[0])
            for payout in Payout.objects.filter(
                wallet_id__in=self.payout_wallet_ids, status=PayoutStatus.AMBIGUOUS
            ):
                truth = self.payout_money_truth(payout.pk)
                if truth is None:  # the statement proves the transfer never happened
                    self._committed(
                        lambda payout=payout: payout_services.payout_resolve_manually(
                            payout_id=payout.pk,
                            to_status=PayoutStatus.FAILED,
                            reason="no such transfer on the provider statement",
                            resolved_by=self.finance,
                        )
                    )
            pending = self._money_in_busy() or (
                Payout.objects.filter(
                    wallet_id__in=self.payout_wallet_ids, status__in=PENDING_STATUSES
                ).exists()
            )
            deliveries = WebhookDelivery.objects.filter(
                event__merchant=self.merchant, status=DeliveryStatus.PENDING
            ).exists()
            if not pending and not deliveries and not env.broker.due():
                break
        self.wallet_is_exact()
        self.payouts_settle_once_and_have_a_way_out()
        self._money_in_final_checks()
        payouts = Payout.objects.filter(wallet_id__in=self.payout_wallet_ids)
        stuck = list(payouts.filter(status__in=PENDING_STATUSES).values_list("pk", "status"))
        assert not stuck, f"payouts never reached a final status: {stuck}"
        for payout_id, status in payouts.values_list("pk", "status"):
            self._event(f"payout ended {status}")
            truth = self.payout_money_truth(payout_id)
            expected = {"success": PayoutStatus.SUCCESSFUL, "failed": PayoutStatus.FAILED}
            assert status == expected.get(truth, PayoutStatus.FAILED), (
                f"payout {payout_id} ended {status}; the provider says {truth}"
            )
        undelivered = WebhookDelivery.objects.filter(
            event__merchant=self.merchant, status=DeliveryStatus.PENDING
        ).count()
        assert undelivered == 0, f"{undelivered} webhook delivery(ies) never finished"
        for recorded in Event.objects.filter(merchant=self.merchant):
            bodies = env.receiver.bodies.get(recorded.event_id, set())
            assert bodies <= {recorded.body_bytes}, f"event {recorded.event_id}: other bytes sent"
            self._event("event delivered" if bodies else "event not delivered")


def receiver_callback(receiver: WebhookReceiver) -> Any:
    """The ``responses`` callback standing in for the merchant's server."""

    def answer(request: requests.PreparedRequest) -> tuple[int, dict[str, str], bytes]:
        body = request.body if isinstance(request.body, bytes) else (request.body or "").encode()
        event_id = body.split(b'"id":"', 1)[-1].split(b'"', 1)[0].decode(errors="replace")
        receiver.received[event_id] += 1
        receiver.bodies[event_id].add(body)
        if receiver.crash_next:
            receiver.crash_next = False
            raise SimulatedCrash(CrashPoint.DURING_WEBHOOK_DELIVERY)
        kind = receiver.next_answer()
        receiver.answered[kind] += 1
        if kind == ReceiverAnswer.ERROR:
            return 503, {}, b"busy"
        if kind == ReceiverAnswer.TIMEOUT:
            raise requests.ReadTimeout("simulated read timeout")
        if kind == ReceiverAnswer.HOSTILE:
            return 200, {"Content-Type": "text/plain"}, b"\x00\xff\xfe ok \x00" + b"A" * 1_000_000
        return 200, {}, b"ok"

    return answer


def environment_open(
    *, seed: int, monkeypatch: Any, settings: Any, mock: responses.RequestsMock
) -> Environment:
    """Installs the simulated outside world and returns it."""
    from django.utils import timezone

    from core import ssrf

    global ENVIRONMENT
    start = timezone.now().replace(microsecond=0)
    clock = SimClock(current=start)
    broker = SimBroker(clock=clock)
    provider = ScriptedProvider()
    second = provider.partner("simulated-b")
    receiver = WebhookReceiver(rng=random.Random(seed))
    monkeypatch.setattr(timezone, "now", clock.now)
    # The wake's interval runs on the simulated clock: a run is deterministic.
    monkeypatch.setattr(payout_tasks.dispatch_wake, "clock", lambda: clock.now().timestamp())
    monkeypatch.setattr(ssrf, "system_resolver", lambda host, port: ["93.184.216.34"])
    from payouts.providers import registry

    monkeypatch.setitem(
        registry.PROVIDER_CLASSES, "simulated", "tests.simulation.world.ProviderHandle"
    )
    monkeypatch.setitem(
        registry.PROVIDER_CLASSES, "simulated-b", "tests.simulation.world.SecondProviderHandle"
    )
    settings.PAYOUT_PROVIDER_BY_MODE = {"test": "simulated", "live": "simulated"}
    settings.PAYOUT_FAILOVER_PROVIDERS_BY_MODE = {"test": ["simulated-b"], "live": []}
    ProviderHandle.current = provider
    SecondProviderHandle.current = second
    tasks = {
        task.name: task
        for task in (
            payout_tasks.payout_dispatch_task,
            payout_tasks.payouts_dispatch_round_task,
            payout_tasks.payout_requery_task,
            webhook_tasks.webhook_delivery_send_task,
            *MONEY_IN_TASKS,
        )
    }
    for task in tasks.values():

        def apply_async(
            args: Any = (), kwargs: Any = None, _name: str = task.name, **options: Any
        ) -> None:
            broker.publish(_name, tuple(args or ()), dict(kwargs or {}), **options)

        monkeypatch.setattr(task, "apply_async", apply_async)
        monkeypatch.setattr(
            task,
            "delay",
            lambda *args, _name=task.name, **kwargs: broker.publish(_name, args, kwargs),
        )
    callback = receiver_callback(receiver)
    for url in (HOOK_URL, CALLBACK_URL):
        mock.add_callback(responses.POST, url, callback=callback)
    providers = {provider.name: provider, second.name: second}
    ENVIRONMENT = Environment(clock, broker, provider, providers, receiver, tasks, start)
    return ENVIRONMENT
