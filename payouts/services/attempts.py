"""Payout attempts: each send of a payout to a provider, under a reference of its own.

A dispatch claim sends the payout's attempt that may still succeed (in flight: an earlier claim
may have sent it, so the provider is asked first), or makes a new one to the provider routing
picks (``payouts.services.routing``) when every earlier attempt certainly moved no money
(``not_sent``, ``rejected``). An answer is kept on its attempt; an attempt that could succeed
follows its payout (``dispatched`` → pending, ``ambiguous`` → unknown, final → final), so the
database's one-could-succeed rule holds whatever path settles the payout.

Attempt rows are written only under their payout's row lock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from core.db import rows_update
from payouts.models import (
    COULD_SUCCEED_OUTCOMES,
    AttemptOutcome,
    Payout,
    PayoutAttempt,
    PayoutStatus,
)
from payouts.providers.base import TransferResult
from payouts.services.routing import RoutingTable

ATTEMPT_RESPONSES_KEPT = 20
ATTEMPT_FIELDS = (
    "outcome",
    "provider_reference",
    "session_id",
    "message",
    "provider_responses",
    "completed_at",
)
# What an attempt that could succeed says while its payout stands in each status.
OUTCOME_BY_PAYOUT_STATUS: dict[str, str] = {
    PayoutStatus.PROCESSING: AttemptOutcome.IN_FLIGHT,
    PayoutStatus.DISPATCHED: AttemptOutcome.PENDING,
    PayoutStatus.AMBIGUOUS: AttemptOutcome.UNKNOWN,
    PayoutStatus.SUCCESSFUL: AttemptOutcome.SUCCESSFUL,
    PayoutStatus.FAILED: AttemptOutcome.FAILED,
}


def attempt_reference(payout: Payout, number: int) -> str:
    """Attempt 1 keeps the payout's reference (what earlier payouts were sent under); attempt
    ``n`` is ``<internal_reference>-<n>``."""
    return payout.internal_reference if number == 1 else f"{payout.internal_reference}-{number}"


def payout_attempts_for_claim(
    payouts: Sequence[Payout],
    *,
    retaken: Sequence[int],
    table: RoutingTable | Callable[[], RoutingTable],
    now: datetime,
) -> dict[int, tuple[PayoutAttempt, tuple[str, ...]]]:
    """For each claimed (locked) payout: the attempt this claim sends and the providers of its
    earlier attempts. The attempt that may still succeed is sent again (after a check); else a
    new attempt goes to the provider routing picks, and the payout's ``provider_name`` follows
    it. ``retaken``: the payouts that were ``processing`` already (only they can have
    attempts: one that was ``reserved`` until this claim was never sent). One read (none when
    nothing was retaken) and one insert whatever the count."""
    held: dict[int, list[PayoutAttempt]] = {}
    if retaken:
        for attempt in PayoutAttempt.objects.filter(payout_id__in=retaken).order_by(
            "payout_id", "number"
        ):
            held.setdefault(attempt.payout_id, []).append(attempt)
    chosen: dict[int, tuple[PayoutAttempt, tuple[str, ...]]] = {}
    new: list[PayoutAttempt] = []
    for payout in payouts:
        earlier = held.get(payout.pk, [])
        tried = tuple(attempt.provider_name for attempt in earlier)
        open_attempt = next((a for a in earlier if a.outcome in COULD_SUCCEED_OUTCOMES), None)
        if open_attempt is not None:
            chosen[payout.pk] = (open_attempt, tried)
            continue
        number = earlier[-1].number + 1 if earlier else 1
        if not isinstance(table, RoutingTable):
            table = table()  # read only when a new attempt is routed
        attempt = PayoutAttempt(
            payout=payout,
            number=number,
            provider_name=table.pick(payout, tried=tried),
            reference=attempt_reference(payout, number),
            created_at=now,
        )
        payout.provider_name = attempt.provider_name
        payout.verify_before_send = False  # a new reference: nothing was ever sent under it
        new.append(attempt)
        chosen[payout.pk] = (attempt, tried)
    PayoutAttempt.objects.bulk_create(new)
    return chosen


def attempt_answer_record(attempt: PayoutAttempt, result: TransferResult) -> None:
    """Keeps the raw exchange of an answer on its attempt (the last ``ATTEMPT_RESPONSES_KEPT``)
    and what the provider said of the transfer, in memory."""
    if result.raw:
        responses = list(attempt.provider_responses or [])
        responses.extend(exchange.as_dict() for exchange in result.raw)
        attempt.provider_responses = responses[-ATTEMPT_RESPONSES_KEPT:]
    if result.provider_reference:
        attempt.provider_reference = result.provider_reference[:100]
    if result.session_id:
        attempt.session_id = result.session_id[:64]
    if result.message:
        attempt.message = result.message[:255]


def attempt_close(attempt: PayoutAttempt, *, outcome: str, now: datetime) -> None:
    """The attempt certainly moved no money (``not_sent``, ``rejected``), in memory."""
    attempt.outcome = outcome
    attempt.completed_at = now


def attempt_follow_payout(attempt: PayoutAttempt, payout: Payout, *, now: datetime) -> None:
    """The attempt that could succeed says what its payout now stands at, in memory."""
    attempt.outcome = OUTCOME_BY_PAYOUT_STATUS.get(payout.status, attempt.outcome)
    if payout.status in (PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED):
        attempt.completed_at = attempt.completed_at or now


def attempts_write(attempts: Sequence[PayoutAttempt]) -> None:
    rows_update(list(attempts), ATTEMPT_FIELDS)


def payout_attempt_current(payout: Payout) -> PayoutAttempt | None:
    """The payout's attempt that may still succeed (or has), if any: the one every question
    about the transfer goes to, by its provider and reference."""
    return (
        PayoutAttempt.objects.filter(payout=payout, outcome__in=COULD_SUCCEED_OUTCOMES)
        .order_by("-number")
        .first()
    )


def payouts_final_attempts_close(
    payouts: Sequence[Payout], *, now: datetime, followed: frozenset[int] = frozenset()
) -> None:
    """The attempts that could still succeed of payouts that just ended final follow them
    (every settling path: a provider's answer, a person's resolution), so no attempt of a
    failed payout is left as if it could still move money. One update per final status, for
    the payouts whose attempts the caller did not bring up to date itself (``followed``)."""
    for status in (PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED):
        ids = [
            payout.pk for payout in payouts if payout.status == status and payout.pk not in followed
        ]
        if ids:
            PayoutAttempt.objects.filter(
                payout_id__in=ids,
                outcome__in=(
                    AttemptOutcome.IN_FLIGHT,
                    AttemptOutcome.PENDING,
                    AttemptOutcome.UNKNOWN,
                ),
            ).update(outcome=OUTCOME_BY_PAYOUT_STATUS[status], completed_at=now)
