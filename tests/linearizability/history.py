"""A linearizability checker for idempotent payout creation with one idempotency key.

A *history* is every create request that clients sent with one key on one wallet: for each, the
request parameters (the body without the key), the monotonic time the client invoked it, the time
it completed, and what came back (the HTTP status and parsed body, or the transport error).

The sequential model of the key is one register, empty at first:

- empty, create(P) → the key now holds (P, a new payout X); answer 202, ``duplicate: false``, X.
- holds (P, X), create(P) → answer 202, ``duplicate: true``, X.
- holds (P, X), create(Q) with Q ≠ P → answer 409.

The history is linearizable when each operation can be given one instant inside its interval
(from invocation to completion) so that, taken in that order, the model gives the recorded
answers. Operations whose answer is unknown to the client (a timeout, a dropped connection, or a
5xx after which a commit cannot be ruled out) may or may not have taken effect: their interval
has no end, and they may be left out entirely. Their answers constrain nothing.

Only the creation changes the register, so the search collapses to direct conditions. The
history is explained by ONE payout if and only if:

1. Every answer is one the model gives: 202 carrying ``data.payout`` and a boolean
   ``data.duplicate``, or 409. Anything else (400, 404, a 202 without a payout) is a violation.
2. Every 202 carries the same payout: one id, ``internal_reference``, ``amount``, ``fee_amount``
   and ``total_debit_amount``.
3. At most one answer says ``duplicate: false``; that operation is the creator.
4. The creator's parameters are the payout's: every 202 went to a request with the creator's
   parameters, the payout's ``amount`` is the one they asked for, and no 409 went to a request
   with those parameters.
5. The creator is linearized before every other operation that had an answer, which is possible
   unless one of them COMPLETED before the creator was INVOKED (strictly: intervals that only
   touch are concurrent). A replay or a 409 that finished before the creation began has no
   sequential explanation.
6. When no answer says ``duplicate: false`` but some 202 or 409 came back, the creator is an
   unknown operation: one with the replays' parameters, different from every 409's, invoked no
   later than every answered operation completed. Without such a candidate the answers refer to
   a payout nobody created.

Different parameters under one key: "same" and "different" are relative to the creator, not to
the majority nor to the first request sent. A request with other parameters may be the creator if
it could have been linearized first (rule 5); then it is the requests with the majority's
parameters that must answer 409. Parameters are compared as given; callers send them in one
spelling (the service treats ``"100"`` and ``"100.00"`` alike, this checker does not).

``history_check`` returns a ``Verdict`` whose ``explanation`` names the first violated rule
with the operations involved; ``history_summary`` renders a history for a failure message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

PAYOUT_IDENTITY_FIELDS = ("id", "internal_reference", "amount", "fee_amount", "total_debit_amount")


class Outcome(StrEnum):
    CREATED = "created"  # 202, duplicate false
    REPLAYED = "replayed"  # 202, duplicate true
    CONFLICT = "conflict"  # 409
    UNKNOWN = "unknown"  # no answer, or a 5xx: may or may not have taken effect
    UNEXPECTED = "unexpected"  # an answer the model never gives


@dataclass(frozen=True)
class Operation:
    """One create request as the client saw it. ``status`` is None when no HTTP answer came
    back; ``error`` then says why (e.g. ``"TimeoutError: timed out"``)."""

    client: str
    params: Mapping[str, Any]
    invoked_at: float
    completed_at: float
    status: int | None = None
    body: Mapping[str, Any] | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        if self.completed_at < self.invoked_at:
            raise ValueError(f"{self.client}: completed at {self.completed_at} before invoked")
        if self.status is None and self.error is None:
            raise ValueError(f"{self.client}: neither a status nor an error")

    @property
    def latency(self) -> float:
        return self.completed_at - self.invoked_at

    @property
    def outcome(self) -> Outcome:
        if self.status is None or self.status >= 500:
            return Outcome.UNKNOWN
        if self.status == 409:
            return Outcome.CONFLICT
        if 200 <= self.status < 300:
            duplicate = _data(self).get("duplicate")
            if isinstance(self.payout, Mapping) and isinstance(duplicate, bool):
                return Outcome.REPLAYED if duplicate else Outcome.CREATED
        return Outcome.UNEXPECTED

    @property
    def payout(self) -> Mapping[str, Any] | None:
        payout = _data(self).get("payout")
        return payout if isinstance(payout, Mapping) else None

    def payout_identity(self) -> tuple[Any, ...]:
        payout = self.payout or {}
        return tuple(payout.get(name) for name in PAYOUT_IDENTITY_FIELDS)

    def describe(self, origin: float = 0.0, shown: Sequence[str] | None = None) -> str:
        """One line: client, parameters (only ``shown`` ones if given), interval relative to
        ``origin``, answer."""
        answer = self.error if self.status is None else str(self.status)
        if self.outcome in (Outcome.CREATED, Outcome.REPLAYED):
            payout = self.payout or {}
            answer += f" {self.outcome.value} payout {payout.get('id')}"
            answer += f" {payout.get('internal_reference')}"
        elif self.status is not None and self.outcome is not Outcome.CONFLICT:
            answer += f" {_short(self.body)}"
        return (
            f"{self.client} {_params_text(self.params, shown)} "
            f"[{self.invoked_at - origin:+.3f}s, {self.completed_at - origin:+.3f}s] {answer}"
        )


@dataclass(frozen=True)
class Verdict:
    ok: bool
    explanation: str
    creator: Operation | None = None
    payout: Mapping[str, Any] | None = None
    unknown: tuple[Operation, ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return self.ok


def history_check(history: Sequence[Operation]) -> Verdict:
    """Whether ``history`` (every create with one key) is explained by one payout; see the
    module docstring for the rules, checked in their order."""
    operations = sorted(history, key=lambda op: (op.invoked_at, op.completed_at, op.client))
    origin = operations[0].invoked_at if operations else 0.0
    unknown = tuple(op for op in operations if op.outcome is Outcome.UNKNOWN)

    shown = _shown_params(operations)

    def violation(message: str, *involved: Operation) -> Verdict:
        lines = [message, *(f"  {op.describe(origin, shown)}" for op in involved)]
        return Verdict(ok=False, explanation="\n".join(lines), unknown=unknown)

    for op in operations:
        if op.outcome is Outcome.UNEXPECTED:
            return violation("an answer the idempotent create never gives:", op)

    answered = [op for op in operations if op.outcome in (Outcome.CREATED, Outcome.REPLAYED)]
    conflicts = [op for op in operations if op.outcome is Outcome.CONFLICT]

    for op in answered[1:]:
        if op.payout_identity() != answered[0].payout_identity():
            return violation(
                "two payouts under one key: the answers carry different "
                f"{'/'.join(PAYOUT_IDENTITY_FIELDS)}",
                answered[0],
                op,
            )

    creators = [op for op in answered if op.outcome is Outcome.CREATED]
    if len(creators) > 1:
        return violation("more than one answer says duplicate: false", *creators)
    creator = creators[0] if creators else None

    reference = creator or (answered[0] if answered else None)
    if reference is not None:
        for op in answered:
            if op.params != reference.params:
                return violation(
                    "a 202 answered a request whose parameters differ from the payout's request",
                    reference,
                    op,
                )
        if not _same_amount(reference.params.get("amount"), (reference.payout or {}).get("amount")):
            return violation(
                "the payout's amount is not the amount its request asked for", reference
            )
        for op in conflicts:
            if op.params == reference.params:
                return violation(
                    "a 409 answered a request with the same parameters as the payout's",
                    reference,
                    op,
                )

    effective = sorted(answered + conflicts, key=lambda op: (op.completed_at, op.client))
    if creator is not None:
        for op in effective:
            if op is not creator and op.completed_at < creator.invoked_at:
                return violation(
                    "an answer completed before the creating request was invoked: no order "
                    "consistent with real time explains it",
                    op,
                    creator,
                )
        return Verdict(
            ok=True,
            explanation=f"one payout, created by {creator.describe(origin, shown)}",
            creator=creator,
            payout=creator.payout,
            unknown=unknown,
        )

    if not effective:
        return Verdict(
            ok=True,
            explanation="no answer refers to a payout: zero or one payout, created unseen",
            unknown=unknown,
        )

    first_completion = effective[0].completed_at
    candidates = [
        op
        for op in unknown
        if (reference is None or op.params == reference.params)
        and all(op.params != conflict.params for conflict in conflicts)
        and op.invoked_at <= first_completion
    ]
    if not candidates:
        return violation(
            "answers refer to a payout that no operation could have created (no duplicate: "
            "false answer, and no unknown operation fits as its creator)",
            effective[0],
            *unknown,
        )
    return Verdict(
        ok=True,
        explanation=(
            "one payout, created by an operation whose answer was lost: "
            + " or ".join(op.client for op in candidates)
        ),
        payout=reference.payout if reference is not None else None,
        unknown=unknown,
    )


def history_summary(history: Sequence[Operation]) -> str:
    """Counts per status and outcome, the creator's interval, the slowest operation, and one
    line per operation in invocation order (times relative to the first invocation)."""
    operations = sorted(history, key=lambda op: (op.invoked_at, op.completed_at, op.client))
    if not operations:
        return "empty history"
    origin = operations[0].invoked_at
    shown = _shown_params(operations)
    statuses = Counter("no answer" if op.status is None else str(op.status) for op in operations)
    outcomes = Counter(op.outcome.value for op in operations)
    slowest = max(operations, key=lambda op: op.latency)
    creators = [op for op in operations if op.outcome is Outcome.CREATED]
    lines = [
        f"{len(operations)} operations; statuses: "
        + ", ".join(f"{status}×{count}" for status, count in sorted(statuses.items()))
        + "; outcomes: "
        + ", ".join(f"{outcome}×{count}" for outcome, count in sorted(outcomes.items())),
        "creator: "
        + (
            "; ".join(
                f"{op.client} invoked {op.invoked_at - origin:+.3f}s, "
                f"completed {op.completed_at - origin:+.3f}s"
                for op in creators
            )
            or "none answered duplicate: false"
        ),
        f"max latency: {slowest.latency:.3f}s ({slowest.client})",
        "operations:",
        *(f"  {op.describe(origin, shown)}" for op in operations),
    ]
    return "\n".join(lines)


def _data(op: Operation) -> Mapping[str, Any]:
    data = (op.body or {}).get("data")
    return data if isinstance(data, Mapping) else {}


def _same_amount(requested: Any, answered: Any) -> bool:
    if requested is None:
        return True
    try:
        return Decimal(str(requested)) == Decimal(str(answered))
    except InvalidOperation:
        return False


def _params_text(params: Mapping[str, Any], shown: Sequence[str] | None) -> str:
    names = list(params) if shown is None else [name for name in shown if name in params]
    return " ".join(f"{name}={params[name]}" for name in names)


def _shown_params(operations: Sequence[Operation]) -> tuple[str, ...]:
    """The parameters whose values differ between operations, else ``amount``."""
    names = dict.fromkeys(name for op in operations for name in op.params)
    varying = tuple(
        name for name in names if len({repr(op.params.get(name)) for op in operations}) > 1
    )
    return varying or ("amount",)


def _short(body: Mapping[str, Any] | None, limit: int = 160) -> str:
    text = str(dict(body)) if body is not None else "(no body)"
    return text if len(text) <= limit else text[: limit - 1] + "…"
