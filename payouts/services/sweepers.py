"""Sweepers and ops: requery due payouts, dispatch stuck ones, and one payout now at an
operator's request; each reports what it did and what waits."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audit.services import audit_record
from core.dates import local_isoformat, local_text
from core.exceptions import ConflictError
from core.money import format_amount
from payouts import tasks
from payouts.exceptions import DispatchDeferredError
from payouts.models import (
    FINAL_STATUSES,
    Payout,
    PayoutStatus,
    payout_is_held,
)
from payouts.selectors import (
    PayoutsWaiting,
    payout_ids_due_for_requery,
    payouts_stuck_for_dispatch,
    payouts_waiting_for_requery,
    payouts_waiting_to_be_stuck,
)
from payouts.services.dispatch import (
    DispatchStep,
    claim_is_stale,
    dispatch_round_size,
    payout_dispatch,
    payouts_dispatch_round,
)
from payouts.services.requery import payout_requery
from payouts.services.timing import (
    dispatch_claim_timeout,
    requery_escalate_after,
    seconds_setting,
)

logger = logging.getLogger(__name__)


REQUERY_LEASE = timedelta(seconds=120)
DEFAULT_SWEEP_LIMIT = 500
REQUERYABLE_STATUSES = (PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS)
DEFERRED_OUTCOME = "deferred (provider unreachable)"


def dispatch_stuck_after() -> timedelta:
    return seconds_setting("PAYOUT_DISPATCH_STUCK_AFTER", 120)


def _duration_text(value: timedelta) -> str:
    """``2 min``, ``1 h``, ``90 s``."""
    seconds = int(value.total_seconds())
    if seconds and seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds and seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


@dataclass
class SweepReport:
    """What a sweeper run considered, what it did and what it leaves waiting: the one home of
    the wording of the ops summary (and the beat task's result) and of the ``--json`` object."""

    name: str
    selected: int = 0
    outcomes: dict[str, int] | None = None
    errors: int = 0
    waiting: PayoutsWaiting | None = None

    # Outcomes in the order the summary names them, and how it names them.
    OUTCOME_ORDER: ClassVar[tuple[str, ...]] = (
        PayoutStatus.SUCCESSFUL,
        PayoutStatus.FAILED,
        PayoutStatus.AMBIGUOUS,
        PayoutStatus.DISPATCHED,
        PayoutStatus.PROCESSING,
        "already final",
        "skipped",
        DEFERRED_OUTCOME,
        "queued",
    )
    OUTCOME_LABELS: ClassVar[dict[str, str]] = {}

    def count(self, outcome: str, times: int = 1) -> None:
        if times <= 0:
            return
        self.outcomes = self.outcomes or {}
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + times

    def _considered_text(self) -> str:
        return f"Considered {self.selected} payout(s)"

    def _waiting_text(self) -> str:
        return ""

    def _outcomes_text(self) -> str:
        outcomes = self.outcomes or {}
        order = {name: index for index, name in enumerate(self.OUTCOME_ORDER)}
        names = sorted(outcomes, key=lambda name: (order.get(name, len(order)), name))
        labels = self.OUTCOME_LABELS
        return ", ".join(f"{outcomes[name]} {labels.get(name, name)}" for name in names)

    def summary(self) -> str:
        done = self._outcomes_text()
        text = f"{self._considered_text()}{': ' + done if done else ''}; {self.errors} error(s)."
        waiting = self._waiting_text()
        return f"{text} {waiting}" if waiting else text

    def as_dict(self) -> dict[str, Any]:
        return {
            "sweeper": self.name,
            "considered": self.selected,
            "outcomes": dict(self.outcomes or {}),
            "errors": self.errors,
            "waiting": None if self.waiting is None else self.waiting.as_dict(),
        }


@dataclass
class RequerySweepReport(SweepReport):
    name: str = "requery_ambiguous"
    # Unresolved past PAYOUT_REQUERY_ESCALATE_AFTER: all of them (overdue), and those that
    # crossed it in this run (escalated).
    overdue: int = 0
    escalated: int = 0

    OUTCOME_LABELS: ClassVar[dict[str, str]] = {
        PayoutStatus.AMBIGUOUS: "still ambiguous",
        PayoutStatus.DISPATCHED: "still dispatched",
    }

    def _considered_text(self) -> str:
        return f"Considered {self.selected} due payout(s)"

    def summary(self) -> str:
        overdue = (
            f" Overdue: {self.overdue} payout(s) unresolved past "
            f"{_duration_text(requery_escalate_after())} ({self.escalated} newly escalated)."
        )
        return super().summary() + overdue

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "overdue": self.overdue, "escalated": self.escalated}

    def _waiting_text(self) -> str:
        waiting = self.waiting
        if waiting is None:
            return ""
        if not waiting.count:
            return "Waiting: no ambiguous or dispatched payout is due later."
        return (
            f"Waiting: {waiting.count} ambiguous or dispatched payout(s) not yet due, next due "
            f"{local_text(waiting.next_due_at)} (payout {waiting.next_reference})."
        )


@dataclass
class DispatchSweepReport(SweepReport):
    name: str = "dispatch_stuck"
    older_than: timedelta = timedelta(0)
    stuck_reserved: int = 0
    stale_processing: int = 0

    def _considered_text(self) -> str:
        return (
            f"Considered {self.selected} stuck payout(s) ({self.stuck_reserved} reserved for "
            f"over {_duration_text(self.older_than)}, {self.stale_processing} processing with a "
            f"stale or released claim)"
        )

    def _waiting_text(self) -> str:
        waiting = self.waiting
        if waiting is None:
            return ""
        younger = f"younger than {_duration_text(self.older_than)}"
        if not waiting.count:
            return f"Waiting: no reserved payout {younger}."
        return (
            f"Waiting: {waiting.count} reserved payout(s) {younger}, the next becomes stuck at "
            f"{local_text(waiting.next_due_at)} (payout {waiting.next_reference})."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            **super().as_dict(),
            "older_than_seconds": int(self.older_than.total_seconds()),
            "considered_reserved": self.stuck_reserved,
            "considered_processing": self.stale_processing,
        }


ProgressCallback = Callable[[int, int], None]


def payouts_requery_escalate(*, now: datetime) -> tuple[int, int]:
    """Marks the dispatched and ambiguous payouts sent more than
    ``PAYOUT_REQUERY_ESCALATE_AFTER`` ago without a final answer as escalated
    (``requery_escalated_at``), logging one WARNING per payout when it crosses (never again on
    later sweeps). They stay requeried hourly: never failed without a final answer. Returns
    (newly escalated, overdue in all)."""
    cutoff = now - requery_escalate_after()
    unresolved = Payout.objects.filter(status__in=REQUERYABLE_STATUSES)
    with transaction.atomic():
        crossing = list(
            unresolved.filter(requery_escalated_at__isnull=True)
            .filter(
                Q(dispatched_at__lte=cutoff) | Q(dispatched_at__isnull=True, created_at__lte=cutoff)
            )
            .select_for_update(skip_locked=True)
            .values_list("pk", "internal_reference", "status")
        )
        if crossing:
            Payout.objects.filter(pk__in=[pk for pk, _reference, _status in crossing]).update(
                requery_escalated_at=now
            )
    for _pk, reference, status in crossing:
        logger.warning(
            "payout %s still %s past %s without a final answer: escalated to finance",
            reference,
            status,
            _duration_text(requery_escalate_after()),
        )
    overdue = unresolved.filter(requery_escalated_at__isnull=False).count()
    return len(crossing), overdue


def payouts_requery_due(
    *,
    now: datetime | None = None,
    limit: int = DEFAULT_SWEEP_LIMIT,
    enqueue: bool = False,
    progress: ProgressCallback | None = None,
) -> RequerySweepReport:
    """Requeries ``dispatched`` and ``ambiguous`` payouts that are due (on
    ``PAYOUT_REQUERY_SCHEDULE``: 60–90 s after sending, then ~3, 10, 30 min, then hourly),
    escalates those unresolved past ``PAYOUT_REQUERY_ESCALATE_AFTER``
    (``payouts_requery_escalate``), and reports those not yet due and those overdue.

    ``enqueue=True`` (Celery beat) leases each payout for a while and hands it to the worker;
    otherwise (management command) each is requeried here.
    """
    now = now or timezone.now()
    report = RequerySweepReport()
    report.escalated, report.overdue = payouts_requery_escalate(now=now)
    payout_ids = payout_ids_due_for_requery(now=now, limit=limit)
    report.selected = len(payout_ids)
    if enqueue:
        Payout.objects.filter(pk__in=payout_ids, status__in=REQUERYABLE_STATUSES).update(
            next_requery_at=now + REQUERY_LEASE
        )
    for index, payout_id in enumerate(payout_ids, start=1):
        try:
            if enqueue:
                tasks.payout_requery_task.delay(payout_id)
                report.count("queued")
            else:
                payout = Payout.objects.get(pk=payout_id)
                if payout.status in FINAL_STATUSES:
                    report.count("already final")
                else:
                    report.count(payout_requery(payout=payout).status)
        except Exception:
            logger.exception("requery of payout %s failed", payout_id)
            report.errors += 1
        if progress is not None:
            progress(index, len(payout_ids))
    # The leased ones are with the workers, not waiting.
    report.waiting = payouts_waiting_for_requery(now=now, excluding=payout_ids if enqueue else ())
    return report


def payouts_dispatch_stuck(
    *,
    now: datetime | None = None,
    older_than: timedelta | None = None,
    limit: int = DEFAULT_SWEEP_LIMIT,
    enqueue: bool = False,
    progress: ProgressCallback | None = None,
) -> DispatchSweepReport:
    """Dispatches ``reserved`` payouts whose dispatch message was lost (older than
    ``older_than``, default ``PAYOUT_DISPATCH_STUCK_AFTER``) and ``processing`` payouts whose
    claim went stale, and reports the younger ``reserved`` ones left to the worker.

    Both go through dispatch rounds on their ids (``payouts_dispatch_round`` with
    ``retake_stale``): a reserved one was never sent; a stale claim may have reached the
    provider, so the round asks the provider by reference before sending it again. With
    ``enqueue`` (beat), one run of the round task is published for the reserved ones and one
    dispatch task for each stale claim. Dispatch is idempotent, so racing the worker is
    harmless."""
    now = now or timezone.now()
    older_than = dispatch_stuck_after() if older_than is None else older_than
    report = DispatchSweepReport(older_than=older_than)
    stuck = payouts_stuck_for_dispatch(
        now=now, older_than=older_than, claim_timeout=dispatch_claim_timeout(), limit=limit
    )
    report.selected = len(stuck)
    reserved = [payout_id for payout_id, status in stuck if status == PayoutStatus.RESERVED]
    stale = [payout_id for payout_id, status in stuck if status != PayoutStatus.RESERVED]
    report.stuck_reserved, report.stale_processing = len(reserved), len(stale)
    done = 0

    def advanced(count: int) -> None:
        nonlocal done
        for _payout in range(count):
            done += 1
            if progress is not None:
                progress(done, len(stuck))

    if enqueue:
        # Beat: one run of the round task takes the reserved ones (as the lost wake would
        # have); each stale claim gets a task of its own (a round of one that verifies it).
        if reserved:
            try:
                tasks.payouts_dispatch_round_task.apply_async()
                report.count("queued", times=len(reserved))
            except Exception:
                logger.exception("could not queue a dispatch round for %s payout(s)", len(reserved))
                report.errors += len(reserved)
            advanced(len(reserved))
        for payout_id in stale:
            try:
                tasks.payout_dispatch_task.apply_async(
                    args=[payout_id],  # type: ignore[arg-type]  # celery takes any sequence; celery-types say tuple
                    kwargs={"allow_retry": False},
                )
                report.count("queued")
            except Exception:
                logger.exception("could not queue the dispatch of payout %s", payout_id)
                report.errors += 1
            advanced(1)
    else:
        # Here: rounds over the stuck ids, which retake the stale claims and verify them with
        # the provider before sending anything again.
        stuck_ids = [payout_id for payout_id, _status in stuck]
        size = dispatch_round_size()
        for start in range(0, len(stuck_ids), size):
            chunk = stuck_ids[start : start + size]
            try:
                round_report = payouts_dispatch_round(
                    limit=len(chunk), payout_ids=chunk, retake_stale=True
                )
            except Exception:
                logger.exception("dispatch round of %s stuck payout(s) failed", len(chunk))
                report.errors += len(chunk)
            else:
                for outcome, times in round_report.outcomes.items():
                    deferred = outcome == DispatchStep.DEFERRED
                    report.count(DEFERRED_OUTCOME if deferred else outcome, times=times)
                # Not claimed: another attempt took them over since they were selected.
                report.count("skipped", times=len(chunk) - round_report.claimed)
            advanced(len(chunk))
    report.waiting = payouts_waiting_to_be_stuck(now=now, older_than=older_than)
    return report


# One payout, now, at an operator's request (``requery_ambiguous --id``, ``dispatch_stuck --id``):
# recorded in the audit trail with the command-line actor.


@dataclass(frozen=True)
class PayoutForcedResult:
    """What one forced requery or dispatch did: the wording of its ops line and JSON."""

    action: str  # "requery" or "dispatch"
    payout: Payout
    from_status: str
    outcome: str  # the payout's status afterwards, "skipped" or DEFERRED_OUTCOME

    @property
    def failed(self) -> bool:
        return self.outcome == DEFERRED_OUTCOME

    def summary(self) -> str:
        payout = self.payout
        verb = "Requeried" if self.action == "requery" else "Dispatched"
        if self.outcome == "skipped":
            return (
                f"Payout {payout.internal_reference} (#{payout.pk}) was not dispatched: another "
                f"worker took it first (it was {self.from_status})."
            )
        text = (
            f"{verb} payout {payout.internal_reference} (#{payout.pk}) now: "
            f"{self.from_status} → {self.outcome}"
        )
        if self.outcome in REQUERYABLE_STATUSES and payout.next_requery_at is not None:
            return f"{text}; next automatic requery {local_text(payout.next_requery_at)}."
        return f"{text}."

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "payout_id": self.payout.pk,
            "payout": self.payout.internal_reference,
            "amount": format_amount(self.payout.amount),
            "from_status": self.from_status,
            "outcome": self.outcome,
            "next_requery_at": local_isoformat(self.payout.next_requery_at) or None,
        }


def _forced_record(*, result: PayoutForcedResult, actor: str) -> None:
    payout = result.payout
    audit_record(
        actor=actor,
        action=f"payouts.payout.{result.action}_now",
        obj=payout,
        before={"status": result.from_status},
        after={"status": payout.status, "outcome": result.outcome},
        reason=f"forced {result.action} from the command line",
    )


def payout_requery_now(*, payout: Payout, actor: str) -> PayoutForcedResult:
    """Asks the provider about one ``dispatched``/``ambiguous`` payout now, whatever its next
    requery time, and settles it from the answer (as ``payout_requery``); recorded in the audit
    trail as ``actor``'s. A payout in any other status is a 409 naming its status."""
    if payout.status not in REQUERYABLE_STATUSES:
        raise ConflictError(
            f"Payout {payout.internal_reference} (#{payout.pk}) is {payout.status}: only a "
            f"dispatched or ambiguous payout is requeried"
        )
    from_status = payout.status
    requeried = payout_requery(payout=payout)
    result = PayoutForcedResult(
        action="requery", payout=requeried, from_status=from_status, outcome=requeried.status
    )
    _forced_record(result=result, actor=actor)
    return result


def payout_dispatch_now(*, payout: Payout, actor: str) -> PayoutForcedResult:
    """Dispatches one ``reserved`` payout, or a ``processing`` one whose claim went stale or
    was released, now, through ``payout_dispatch`` (idempotent: the provider is asked by
    reference first when an earlier attempt may have sent it); recorded in the audit trail as
    ``actor``'s. A payout being dispatched right now, or in any other status, is a 409 naming
    its status."""
    label = f"Payout {payout.internal_reference} (#{payout.pk})"
    if payout.status == PayoutStatus.PROCESSING and not claim_is_stale(payout, now=timezone.now()):
        raise ConflictError(
            f"{label} is processing: a worker claimed it at "
            f"{local_text(payout.dispatch_claimed_at)} and is dispatching it"
        )
    if payout.status not in (PayoutStatus.RESERVED, PayoutStatus.PROCESSING):
        raise ConflictError(
            f"{label} is {payout.status}: only a reserved payout, or a processing one whose "
            f"claim went stale, is dispatched"
        )
    if payout_is_held(payout, now=timezone.now()):
        raise ConflictError(
            f"{label} is held by the merchant (approval {payout.approval_status}, scheduled "
            f"for {local_text(payout.scheduled_for)}): it is dispatched once released"
        )
    from_status = payout.status
    try:
        dispatched = payout_dispatch(payout_id=payout.pk)
    except DispatchDeferredError:
        payout.refresh_from_db()
        result = PayoutForcedResult(
            action="dispatch", payout=payout, from_status=from_status, outcome=DEFERRED_OUTCOME
        )
    else:
        if dispatched is None:
            payout.refresh_from_db()
        result = PayoutForcedResult(
            action="dispatch",
            payout=dispatched or payout,
            from_status=from_status,
            outcome="skipped" if dispatched is None else dispatched.status,
        )
    _forced_record(result=result, actor=actor)
    return result
