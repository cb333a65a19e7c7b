"""Dispatch: sending payouts to their providers, in rounds. A round claims payouts
(``reserved → processing``), sends them outside any transaction and applies the answers in one
transaction; a single payout's dispatch (a task, a sweeper, an operator) is a round of one, so
there is one way to claim, to send and to settle.

Each send is a ``PayoutAttempt`` (``payouts.services.attempts``): the claim picks the route of a
new attempt, the send goes to the attempt's provider under the attempt's reference, and the
answer is kept on the attempt. Failover: an attempt that certainly moved no money (``not_sent``,
or a ``rejected`` refusal) lets the payout go to another provider, at once in the same round
when one not tried yet is available. A timeout or a pending answer stays with its provider until
a final answer; a transfer that existed and failed is never sent elsewhere (the payout fails).

The payouts table is the outbox: a create commits the payout ``reserved`` and wakes the
dispatcher on commit (``payouts.tasks.payout_dispatch_wake``); beat runs a round every few
seconds too, so a wake lost to the broker only delays dispatch.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.db import rows_update
from core.metrics import dispatch_round_count, provider_outcome_count
from payouts.exceptions import DispatchDeferredError
from payouts.models import (
    AttemptOutcome,
    Payout,
    PayoutAttempt,
    PayoutStatus,
    payout_dispatchable_q,
)
from payouts.providers.base import (
    TransferOutcome,
    TransferRequest,
    TransferResult,
    initiate_transfers,
)
from payouts.providers.registry import provider_get
from payouts.services.attempts import (
    attempt_answer_record,
    attempt_close,
    attempt_follow_payout,
    attempts_write,
    payout_attempts_for_claim,
)
from payouts.services.circuits import circuits_record
from payouts.services.routing import RoutingTable, routing_table_load
from payouts.services.settle import (
    PayoutFinalEffects,
    payout_fail,
    payouts_settled_write,
    provider_answer_record,
    provider_answer_settle,
)
from payouts.services.timing import dispatch_claim_timeout
from payouts.state_machine import payout_transition

logger = logging.getLogger(__name__)


class DispatchStep(StrEnum):
    SKIPPED = "skipped"
    APPLIED = "applied"
    DEFERRED = "deferred"
    FAILOVER = "failover"  # no money moved and another provider is free: sent again at once


# How many times one round sends a payout to another provider after a certain non-send.
FAILOVER_PASSES = 3


@dataclass(frozen=True)
class DispatchClaim:
    """A payout this round holds (``processing``, claimed at ``attempt``), the
    ``payout_attempt`` it sends (its provider and reference; ``tried``: the providers of the
    payout's earlier attempts), and whether an earlier claim may have sent it (the provider is
    asked by reference before sending)."""

    payout: Payout
    attempt: int
    payout_attempt: PayoutAttempt
    tried: tuple[str, ...] = ()
    verify_before_send: bool = False


def dispatch_round_size() -> int:
    """``PAYOUT_DISPATCH_ROUND_SIZE``: how many payouts one round claims at most."""
    return int(getattr(settings, "PAYOUT_DISPATCH_ROUND_SIZE", 50))


def claim_is_stale(payout: Payout, *, now: datetime) -> bool:
    """A ``processing`` payout's claim is free to retake: released (``NOT_SENT``) or older than
    ``PAYOUT_DISPATCH_CLAIM_TIMEOUT`` (its worker died or its round ran out of time)."""
    claimed_at = payout.dispatch_claimed_at
    return claimed_at is None or claimed_at <= now - dispatch_claim_timeout()


CLAIM_FIELDS = (
    "status",
    "provider_name",
    "dispatch_attempts",
    "dispatch_claimed_at",
    "verify_before_send",
)


@transaction.atomic
def payouts_dispatch_claim(
    *,
    limit: int,
    older_than: timedelta | None = None,
    payout_ids: Sequence[int] | None = None,
    retake_stale: bool = False,
) -> list[DispatchClaim]:
    """Claims up to ``limit`` payouts for a round, oldest id first, in one transaction: one
    locking read that skips rows another claim holds, so concurrent rounds take disjoint
    payouts, and one update.

    ``reserved`` payouts (created ``older_than`` ago or earlier, and of ``payout_ids``, when
    given) move to ``processing``. With ``retake_stale`` (a round on given ids: a task, the
    sweeper, an operator), a ``processing`` payout whose claim went stale or was released is
    retaken too; if its claim went stale, an earlier attempt may have sent the transfer, so it is
    marked ``verify_before_send`` and the provider is asked by reference before anything is sent
    again (a released claim keeps the mark as it was).

    Each claimed payout gets the attempt it sends (``payout_attempts_for_claim``): its attempt
    that may still succeed, else a new one routed by the active rules and the circuits."""
    now = timezone.now()
    claimable = Q(status=PayoutStatus.RESERVED)
    # The merchant's controls: a payout awaiting approval or its scheduled time is never
    # claimed. Checked under the row lock this read takes, so a cancel or an expiry that
    # committed first wins (payouts.services.controls).
    claimable &= payout_dispatchable_q(now=now)
    if retake_stale:
        stale = Q(dispatch_claimed_at__isnull=True) | Q(
            dispatch_claimed_at__lte=now - dispatch_claim_timeout()
        )
        claimable |= Q(status=PayoutStatus.PROCESSING) & stale
    payouts = Payout.objects.select_for_update(skip_locked=True).filter(claimable)
    if older_than is not None:
        payouts = payouts.filter(created_at__lte=now - older_than)
    if payout_ids is not None:
        payouts = payouts.filter(pk__in=list(payout_ids))
    claimed = list(payouts.order_by("id")[:limit])
    retaken = [payout.pk for payout in claimed if payout.status == PayoutStatus.PROCESSING]
    for payout in claimed:
        if payout.status == PayoutStatus.RESERVED:
            payout_transition(payout=payout, to_status=PayoutStatus.PROCESSING)
        elif payout.dispatch_claimed_at is not None:
            payout.verify_before_send = True
        payout.dispatch_attempts += 1
        payout.dispatch_claimed_at = now
        payout.updated_at = now
    sends = payout_attempts_for_claim(
        claimed, retaken=retaken, table=lambda: routing_table_load(now=now), now=now
    )
    rows_update(claimed, (*CLAIM_FIELDS, "updated_at"))
    return [
        DispatchClaim(
            payout=payout,
            attempt=payout.dispatch_attempts,
            payout_attempt=sends[payout.pk][0],
            tried=sends[payout.pk][1],
            verify_before_send=payout.verify_before_send,
        )
        for payout in claimed
    ]


def transfer_request(payout: Payout, *, reference: str | None = None) -> TransferRequest:
    """What is sent for ``payout``, under ``reference`` (its attempt's; by default the
    payout's own)."""
    return TransferRequest(
        reference=reference or payout.internal_reference,
        account_number=payout.account_number,
        account_name=payout.account_name,
        bank_code=payout.bank_code,
        amount=payout.amount,
        currency=payout.currency,
        narration=payout.narration,
    )


@dataclass(frozen=True)
class DispatchAnswer:
    """A provider's answer to one claim, and whether the payout must still be verified before
    any later send (its earlier attempt could not be ruled out)."""

    result: TransferResult
    verify_before_send: bool


def _earlier_transfer_check(claim: DispatchClaim) -> DispatchAnswer | None:
    """For a claim an earlier attempt may have sent: the provider's answer about that transfer
    (settled from it, never sent again), ``NOT_SENT`` when the provider cannot be asked
    (nothing is sent), or ``None`` when it has no such transfer (send it)."""
    sent = claim.payout_attempt
    earlier = provider_get(sent.provider_name).verify_transfer(reference=sent.reference)
    if earlier.outcome == TransferOutcome.NOT_FOUND:
        return None
    if earlier.outcome == TransferOutcome.UNKNOWN:
        not_sent = TransferResult(
            outcome=TransferOutcome.NOT_SENT,
            message=f"could not check for an earlier transfer: {earlier.message}",
            raw=earlier.raw,
        )
        return DispatchAnswer(result=not_sent, verify_before_send=True)
    return DispatchAnswer(result=earlier, verify_before_send=True)


def payouts_dispatch_send(
    claims: Sequence[DispatchClaim], *, send_by: float, clock: Callable[[], float]
) -> dict[int, DispatchAnswer]:
    """Sends the claimed payouts, outside any transaction; the answers by payout id.

    A claim that may have been sent before is verified first (``_earlier_transfer_check``);
    the rest go provider by provider (its bulk call when it has one). A provider whose call
    raises leaves its payouts unanswered: claimed, they wait for the claim to go stale and the
    ``dispatch_stuck`` sweeper, which verifies them before sending anything again.

    Nothing is started once ``clock`` reaches ``send_by`` (half the claim timeout after the
    claim): those payouts answer ``NOT_SENT``, so their claims are released. A slow provider
    thus never leaves a send in flight when the sweeper may retake its claim as stale, and a
    payout is never sent by two rounds."""
    answers: dict[int, DispatchAnswer] = {}
    to_send: list[DispatchClaim] = []
    for claim in claims:
        if not claim.verify_before_send:
            to_send.append(claim)
            continue
        try:
            checked = _earlier_transfer_check(claim)
        except Exception:
            logger.exception(
                "payout %s: the check for an earlier transfer raised; left for the sweeper",
                claim.payout.internal_reference,
            )
            continue
        if checked is None:
            to_send.append(claim)
        else:
            answers[claim.payout.pk] = checked
    by_provider: dict[str, list[DispatchClaim]] = {}
    for claim in to_send:
        by_provider.setdefault(claim.payout_attempt.provider_name, []).append(claim)
    for provider_name, group in by_provider.items():
        try:
            results = initiate_transfers(
                provider_get(provider_name),
                [
                    transfer_request(claim.payout, reference=claim.payout_attempt.reference)
                    for claim in group
                ],
                send_by=send_by,
                clock=clock,
            )
        except Exception:
            logger.exception(
                "dispatch round: %s payout(s) of provider %s unanswered; the dispatch_stuck "
                "sweeper will verify them",
                len(group),
                provider_name,
            )
            provider_outcome_count(provider_name, "error", len(group))
            continue
        for claim, result in zip(group, results, strict=True):
            provider_outcome_count(provider_name, result.outcome)
            answers[claim.payout.pk] = DispatchAnswer(result=result, verify_before_send=False)
    return answers


def _answer_apply(
    payout: Payout,
    *,
    claim: DispatchClaim,
    answer: DispatchAnswer,
    table: Callable[[], RoutingTable],
    now: datetime,
    effects: PayoutFinalEffects,
) -> DispatchStep:
    """The provider's answer to the claim (dispatch attempt ``claim.attempt``), applied to the
    locked payout and the attempt it sent, in memory: kept for audit only if another claim took
    over meanwhile; a ``NOT_SENT`` releases the claim (the attempt closed, unless an earlier
    send could not be ruled out); a refusal closes the attempt and fails the payout, unless
    another provider not tried yet may carry it (``FAILOVER``); any other answer dispatches it
    and settles it as far as the answer tells (``provider_answer_settle``), its money and event
    into ``effects``, the attempt following the payout."""
    result, attempt = answer.result, claim.payout_attempt
    provider_answer_record(payout, result)
    attempt_answer_record(attempt, result)
    if payout.status != PayoutStatus.PROCESSING or payout.dispatch_attempts != claim.attempt:
        logger.warning(
            "payout %s: dispatch attempt %s answered after another took over (%s); kept for audit",
            payout.internal_reference,
            claim.attempt,
            payout.status,
        )
        return DispatchStep.SKIPPED
    payout.verify_before_send = answer.verify_before_send
    tried = (*claim.tried, attempt.provider_name)
    if result.outcome == TransferOutcome.NOT_SENT:
        payout.dispatch_claimed_at = None  # free for the next attempt
        if answer.verify_before_send:
            return DispatchStep.DEFERRED  # an earlier send is not ruled out: the attempt stays
        attempt_close(attempt, outcome=AttemptOutcome.NOT_SENT, now=now)
        if table().has_untried(payout, tried=tried):
            return DispatchStep.FAILOVER
        return DispatchStep.DEFERRED
    if result.outcome == TransferOutcome.REJECTED:
        attempt_close(attempt, outcome=AttemptOutcome.REJECTED, now=now)
        if table().has_untried(payout, tried=tried):
            payout.dispatch_claimed_at = None
            return DispatchStep.FAILOVER
        payout_fail(payout, now=now, message=result.message, effects=effects)
    else:
        payout_transition(payout=payout, to_status=PayoutStatus.DISPATCHED)
        payout.dispatched_at = now
        provider_answer_settle(payout, result, now=now, from_requery=False, effects=effects)
        attempt_follow_payout(attempt, payout, now=now)
    logger.info("payout %s dispatched: %s", payout.internal_reference, payout.status)
    return DispatchStep.APPLIED


@transaction.atomic
def payouts_dispatch_apply(
    *, claims: Mapping[int, DispatchClaim], answers: Mapping[int, DispatchAnswer]
) -> list[tuple[DispatchStep, Payout]]:
    """Applies a round's answers in one transaction: the payouts locked in id order, each
    answer applied (``_answer_apply``), their attempts written in one update, then the payouts
    written the one way every settling path writes (``payouts_settled_write``: the captures and
    releases of every wallet together, the events of the payouts that ended in one insert, the
    payouts in one update), and the providers' circuits brought up to date."""
    payouts = list(Payout.objects.select_for_update().filter(pk__in=list(answers)).order_by("pk"))
    now = timezone.now()
    effects = PayoutFinalEffects()
    table = functools.cache(lambda: routing_table_load(now=now))  # read on a non-send only
    steps = [
        (
            _answer_apply(
                payout,
                claim=claims[payout.pk],
                answer=answers[payout.pk],
                table=table,
                now=now,
                effects=effects,
            ),
            payout,
        )
        for payout in payouts
    ]
    # A claim another one took over no longer speaks for its attempt (kept on the payout).
    sent = [
        claims[payout.pk].payout_attempt for step, payout in steps if step != DispatchStep.SKIPPED
    ]
    attempts_write(sent)
    effects.attempts_followed.update(attempt.payout_id for attempt in sent)
    payouts_settled_write(payouts, effects=effects, now=now)
    circuits_record(
        outcomes=[
            (attempt.provider_name, attempt.outcome)
            for attempt in sent
            if attempt.outcome != AttemptOutcome.IN_FLIGHT
        ],
        now=now,
    )
    return steps


@dataclass
class DispatchRoundReport:
    """What one round did: how many payouts it claimed (``limit`` the most it could), and how
    each ended the round (its status, ``deferred`` when the provider was not reached,
    ``skipped`` when another attempt had taken it over, ``unanswered`` when the provider call
    raised: those wait for the ``dispatch_stuck`` sweeper). ``payouts`` holds the payouts the
    round applied an answer to, as they ended it."""

    limit: int
    claimed: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    payouts: dict[int, Payout] = field(default_factory=dict)

    @property
    def full(self) -> bool:
        """The round took as many payouts as it could: more may be waiting."""
        return self.claimed >= self.limit

    def count(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1

    def summary(self) -> str:
        parts = ", ".join(f"{n} {o}" for o, n in sorted(self.outcomes.items()))
        return f"dispatch_round: {self.claimed} payout(s) claimed{': ' + parts if parts else ''}"


def payouts_dispatch_round(
    *,
    limit: int | None = None,
    older_than: timedelta | None = None,
    payout_ids: Sequence[int] | None = None,
    retake_stale: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> DispatchRoundReport:
    """One round of dispatch over up to ``limit`` (default ``PAYOUT_DISPATCH_ROUND_SIZE``)
    payouts, oldest first, in three steps whose statements do not grow with the round:

    1. claim (``payouts_dispatch_claim``): one transaction moves them to ``processing``;
    2. send (``payouts_dispatch_send``): outside any transaction, a payout an earlier attempt
       may have sent is verified with its provider first; the rest go to their providers, in
       one bulk call when the provider has one, none started later than half the claim timeout
       after the claim (``clock`` tells the time; the rest answer ``NOT_SENT`` and are
       released);
    3. apply (``payouts_dispatch_apply``): one transaction applies every answer, money moved
       once per wallet, the events recorded in one insert.

    A payout whose attempt certainly moved no money while a provider it has not tried is
    available (``DispatchStep.FAILOVER``) is claimed again at once and sent there as a new
    attempt, up to ``FAILOVER_PASSES`` times; the report counts how each payout ended.

    What a crash or a failed step leaves behind is a ``processing`` payout whose claim goes
    stale, or one whose claim a ``NOT_SENT`` released: a round with ``retake_stale`` on its id
    (the ``dispatch_stuck`` sweeper, ``payout_dispatch``) takes it again and verifies it before
    sending. Concurrent rounds take disjoint payouts.
    """
    limit = dispatch_round_size() if limit is None else limit
    if limit < 1:
        raise ValueError("limit: must be at least 1")
    report = DispatchRoundReport(limit=limit)
    # Taken before the claim, so the deadline is at most half the timeout after it.
    send_by = clock() + dispatch_claim_timeout().total_seconds() / 2
    claims = payouts_dispatch_claim(
        limit=limit, older_than=older_than, payout_ids=payout_ids, retake_stale=retake_stale
    )
    report.claimed = len(claims)
    if not claims:
        dispatch_round_count(claimed=0, outcomes={})
        return report
    endings: dict[int, str] = {}
    for _pass in range(FAILOVER_PASSES + 1):
        answers = payouts_dispatch_send(claims, send_by=send_by, clock=clock)
        steps = payouts_dispatch_apply(
            claims={claim.payout.pk: claim for claim in claims}, answers=answers
        )
        failover: list[int] = []
        for claim in claims:
            if claim.payout.pk not in answers:
                endings[claim.payout.pk] = "unanswered"
        for step, payout in steps:
            report.payouts[payout.pk] = payout
            endings[payout.pk] = payout.status if step == DispatchStep.APPLIED else str(step)
            if step == DispatchStep.FAILOVER:
                endings[payout.pk] = str(DispatchStep.DEFERRED)
                failover.append(payout.pk)
        if not failover:
            break
        # No money moved and another provider is free: a new attempt goes to it now.
        send_by = clock() + dispatch_claim_timeout().total_seconds() / 2
        claims = payouts_dispatch_claim(limit=len(failover), payout_ids=failover, retake_stale=True)
        if not claims:
            break
    for ending in endings.values():
        report.count(ending)
    dispatch_round_count(claimed=report.claimed, outcomes=report.outcomes)
    logger.info("%s", report.summary())
    return report


def payout_dispatch(*, payout_id: int) -> Payout | None:
    """Dispatches one payout now: a round of one on its id (``payouts_dispatch_round`` with
    ``retake_stale``). Idempotent: does nothing (``None``) unless the payout is ``reserved``,
    or ``processing`` with a stale or released claim, and no other round holds it.

    When an earlier attempt may have sent the transfer, the provider is asked by reference
    first: a transfer it holds is settled from its answer and never sent again; if it cannot be
    asked, nothing is sent. Raises ``DispatchDeferredError`` when nothing reached the provider
    (or its call raised), for the task to retry."""
    report = payouts_dispatch_round(limit=1, payout_ids=[payout_id], retake_stale=True)
    if not report.claimed:
        return None
    payout = report.payouts.get(payout_id)
    if payout is None or report.outcomes.get(DispatchStep.DEFERRED):
        raise DispatchDeferredError(
            f"payout {payout_id}: provider not reached ({report.summary()})"
        )
    return payout
