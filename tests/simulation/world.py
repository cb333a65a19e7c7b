"""The simulated world around the real money core: a clock the simulator moves, a broker that
delivers Celery messages when and as often as the simulator says (at least once, in any order),
two payout providers whose answers the simulator scripts (each may be down, refusing every
connection, or slow, answering after the service gave up), and a merchant's webhook receiver.

Only the outside is simulated: the service's own code (services, task bodies, sweepers, the
database) runs for real. A crash is a ``SimulatedCrash`` raised at a named point; it derives
from ``BaseException`` so no ``except Exception`` in the service can swallow it, exactly like a
process that dies there.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from core.provider_exchange import ProviderExchange
from payouts.providers.base import TransferOutcome, TransferRequest, TransferResult


class SimulatedCrash(BaseException):  # noqa: N818 - a crash, not an error the code handles
    """The process running this step died here."""


class CrashPoint(StrEnum):
    AFTER_CLAIM_BEFORE_PROVIDER = "after the claim, before the provider call"
    AFTER_PROVIDER_BEFORE_SETTLEMENT = "after the provider call, before the settlement commits"
    AFTER_SETTLEMENT_BEFORE_ENQUEUE = "after the settlement commits, before its tasks are queued"
    DURING_WEBHOOK_DELIVERY = "during a webhook delivery, after the receiver got it"


# --- clock -------------------------------------------------------------------------------------


@dataclass
class SimClock:
    current: datetime

    def now(self) -> datetime:
        return self.current

    def advance(self, delta: timedelta) -> None:
        self.current += delta


# --- broker ------------------------------------------------------------------------------------


@dataclass
class Message:
    number: int
    task_name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    eta: datetime

    def __str__(self) -> str:
        return f"#{self.number} {self.task_name.rsplit('.', 1)[-1]}{self.args}"


@dataclass
class SimBroker:
    """Messages published by the service, delivered when the simulator picks them."""

    clock: SimClock
    queue: list[Message] = field(default_factory=list)
    published: int = 0
    lost: int = 0

    def publish(
        self, task_name: str, args: tuple[Any, ...], kwargs: dict[str, Any], **options: Any
    ) -> None:
        eta = self.clock.now()
        countdown = options.get("countdown")
        if countdown:
            eta += timedelta(seconds=float(countdown))
        self.published += 1
        self.queue.append(Message(self.published, task_name, tuple(args), dict(kwargs), eta))

    def reset(self) -> None:
        self.queue.clear()
        self.published = 0
        self.lost = 0

    def due(self) -> list[Message]:
        now = self.clock.now()
        return [message for message in self.queue if message.eta <= now]

    def take(self, message: Message) -> None:
        self.queue.remove(message)

    def redeliver_later(self, message: Message, *, after: timedelta) -> None:
        """An unacknowledged message (acks_late) comes back after the visibility timeout."""
        message.eta = self.clock.now() + after
        self.queue.append(message)


# --- payout provider ---------------------------------------------------------------------------


class Script(StrEnum):
    """How the provider will treat one payout's transfer."""

    SUCCESS = "accepted, then successful"
    REJECTED = "rejected before a transfer existed"
    NOT_SENT_THEN_SUCCESS = "timeout before the request left, then accepted"
    UNKNOWN_AFTER_SEND_SUCCESS = "timeout after it was sent (it succeeded)"
    UNKNOWN_AFTER_SEND_FAILURE = "timeout after it was sent (it failed)"
    UNKNOWN_NEVER_ARRIVED = "timeout; the request never arrived"
    PENDING_THEN_SUCCESS = "pending, then successful"
    PENDING_THEN_FAILURE = "pending, then failed"
    FAILED = "accepted, then failed (reversed)"


@dataclass
class Transfer:
    reference: str
    amount: Decimal
    status: str  # "pending", "success", "failed"
    pending_reads_left: int = 0


_ATTEMPT_SUFFIX = re.compile(r"^(?P<payout>.+)-\d+$")


def payout_reference_of(reference: str) -> str:
    """The payout's reference behind an attempt's (``<internal_reference>-<n>``)."""
    match = _ATTEMPT_SUFFIX.match(reference)
    return match.group("payout") if match else reference


@dataclass
class ScriptedProvider:
    """A Paystack-like provider holding the ground truth of every transfer. It does NOT dedupe
    by reference: a second initiate that arrives creates a second transfer, so the service alone
    must make sure it never sends one again once an earlier send may have arrived.

    A payout's script follows it to whichever provider an attempt goes to (the two providers
    share ``scripts`` and ``payout_calls``): "first call" means the payout's first send.
    ``down``: every connection is refused (an initiate never leaves: not sent; a verify cannot
    be asked: unknown). ``slow``: the transfer is made but its answer comes after the service
    gave up (unknown)."""

    name: str = "simulated"
    scripts: dict[str, Script] = field(default_factory=dict)
    # The script of an unscripted transfer to this account (a subaccount's bank).
    account_scripts: dict[str, Script] = field(default_factory=dict)
    transfers: dict[str, Transfer] = field(default_factory=dict)
    arrivals: Counter[str] = field(default_factory=Counter)
    initiate_calls: Counter[str] = field(default_factory=Counter)
    payout_calls: Counter[str] = field(default_factory=Counter)
    crash_next_initiate: CrashPoint | None = None
    healed: bool = False
    down: bool = False
    slow: bool = False

    def reset(self) -> None:
        self.scripts.clear()
        self.account_scripts.clear()
        self.transfers.clear()
        self.arrivals.clear()
        self.initiate_calls.clear()
        self.payout_calls.clear()
        self.crash_next_initiate = None
        self.healed = False
        self.down = False
        self.slow = False

    def heal(self) -> None:
        self.healed = True
        self.down = False
        self.slow = False

    def partner(self, name: str) -> ScriptedProvider:
        """A second provider sharing this one's scripts (a payout's script follows it)."""
        return ScriptedProvider(
            name=name,
            scripts=self.scripts,
            account_scripts=self.account_scripts,
            payout_calls=self.payout_calls,
        )

    def _result(self, outcome: TransferOutcome, reference: str, message: str) -> TransferResult:
        return TransferResult(
            outcome=outcome,
            provider_reference=f"TRF_{reference[-12:]}" if reference in self.transfers else "",
            message=message,
            raw=(ProviderExchange(operation="simulated", http_status=200, body={"m": message}),),
        )

    def initiate_transfer(self, request: TransferRequest) -> TransferResult:
        reference = request.reference
        payout_reference = payout_reference_of(reference)
        self.initiate_calls[reference] += 1
        crash, self.crash_next_initiate = self.crash_next_initiate, None
        if crash == CrashPoint.AFTER_CLAIM_BEFORE_PROVIDER:
            raise SimulatedCrash(crash)
        if self.down:
            return self._result(TransferOutcome.NOT_SENT, reference, "connection refused")
        self.payout_calls[payout_reference] += 1
        if payout_reference not in self.scripts and request.account_number in self.account_scripts:
            self.scripts[payout_reference] = self.account_scripts[request.account_number]
        script = self.scripts.get(payout_reference, Script.SUCCESS)
        first_call = self.payout_calls[payout_reference] == 1
        if script == Script.NOT_SENT_THEN_SUCCESS and first_call and not self.healed:
            return self._result(TransferOutcome.NOT_SENT, reference, "connect timeout")
        if script == Script.UNKNOWN_NEVER_ARRIVED and first_call and not self.healed:
            return self._result(TransferOutcome.UNKNOWN, reference, "read timeout")
        if script == Script.REJECTED:
            self.arrivals[reference] += 1
            return self._result(TransferOutcome.REJECTED, reference, "invalid recipient")
        self.arrivals[reference] += 1
        status = {
            Script.FAILED: "failed",
            Script.UNKNOWN_AFTER_SEND_FAILURE: "failed",
            Script.PENDING_THEN_SUCCESS: "pending",
            Script.PENDING_THEN_FAILURE: "pending",
        }.get(script, "success")
        reads = 2 if status == "pending" else 0
        self.transfers[reference] = Transfer(reference, request.amount, status, reads)
        if crash == CrashPoint.AFTER_PROVIDER_BEFORE_SETTLEMENT:
            raise SimulatedCrash(crash)
        if (
            script in (Script.UNKNOWN_AFTER_SEND_SUCCESS, Script.UNKNOWN_AFTER_SEND_FAILURE)
            or self.slow
        ):
            return self._result(TransferOutcome.UNKNOWN, reference, "read timeout")
        return self._answer(self.transfers[reference])

    def _answer(self, transfer: Transfer) -> TransferResult:
        outcome = {
            "success": TransferOutcome.SUCCESSFUL,
            "failed": TransferOutcome.FAILED,
            "pending": TransferOutcome.PENDING,
        }[transfer.status]
        return self._result(outcome, transfer.reference, transfer.status)

    def verify_transfer(self, *, reference: str) -> TransferResult:
        if self.down:
            return self._result(TransferOutcome.UNKNOWN, reference, "connection refused")
        transfer = self.transfers.get(reference)
        if transfer is None:
            return self._result(TransferOutcome.NOT_FOUND, reference, "not found")
        if transfer.status == "pending":
            if transfer.pending_reads_left > 0 and not self.healed:
                transfer.pending_reads_left -= 1
            else:
                script = self.scripts.get(payout_reference_of(reference))
                transfer.status = "failed" if script == Script.PENDING_THEN_FAILURE else "success"
        return self._answer(transfer)

    def truth(self, reference: str) -> str | None:
        """What happened to the money: "success", "failed", "pending", or None (no transfer)."""
        transfer = self.transfers.get(reference)
        return None if transfer is None else transfer.status


class ProviderHandle:
    """Registered as the "simulated" payout provider class: every instantiation hands out the
    running world's provider, so its ground truth survives across calls."""

    current: ScriptedProvider | None = None

    def __new__(cls) -> ScriptedProvider:  # type: ignore[misc]
        if cls.current is None:
            raise RuntimeError("no simulated world is running")
        return cls.current


class SecondProviderHandle(ProviderHandle):
    """Registered as "simulated-b", the provider payouts fail over to."""

    current: ScriptedProvider | None = None


def payout_truths(
    providers: dict[str, ScriptedProvider], attempts: list[tuple[str, str]]
) -> list[str | None]:
    """What each of a payout's attempts (provider, reference) did to the money, as the
    providers' own books say: "success", "failed", "pending", or None (no transfer)."""
    return [providers[name].truth(reference) for name, reference in attempts]


def payout_truth(truths: list[str | None]) -> str | None:
    """The payout's money as the providers' books say: "success" if a transfer of it succeeded,
    "pending" if one still may, "failed" if one failed, None if none exists."""
    for state in ("success", "pending", "failed"):
        if state in truths:
            return state
    return None


# --- webhook receiver --------------------------------------------------------------------------


class ReceiverAnswer(StrEnum):
    OK = "2xx"
    ERROR = "5xx"
    TIMEOUT = "timeout"
    HOSTILE = "a hostile body (NUL bytes, invalid UTF-8, 1 MB)"


@dataclass
class WebhookReceiver:
    """The merchant's server: records every body it received per event id."""

    rng: random.Random
    answers: list[ReceiverAnswer] = field(default_factory=list)
    bodies: dict[str, set[bytes]] = field(default_factory=lambda: defaultdict(set))
    received: Counter[str] = field(default_factory=Counter)
    answered: Counter[str] = field(default_factory=Counter)
    crash_next: bool = False

    def reset(self) -> None:
        self.answers.clear()
        self.bodies.clear()
        self.received.clear()
        self.crash_next = False

    def next_answer(self) -> ReceiverAnswer:
        return self.answers.pop(0) if self.answers else ReceiverAnswer.OK
