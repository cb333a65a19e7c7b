"""Reads of reconciliation runs and their items, with each exception's state worked out in SQL.

An exception's state follows from what was done to it, so it never goes stale:

* ``cleared``: someone cleared it with a note (or a re-check found our record now agrees);
* ``resolved``: the manual resolution proposed from it was approved (the payout settled);
* ``proposed``: a manual resolution proposed from it waits for a second person;
* ``open``: none of these (a rejected proposal leaves it open again);
* ``voided``: its statement import was voided (imported by mistake): never to work, whatever
  else it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django.db import models
from django.db.models import Case, CharField, Count, IntegerField, QuerySet, Value, When

from payouts.models import ResolutionDecision
from reconciliation.models import MatchCategory, ReconciliationItem, ReconciliationRun

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class ItemState(TypedDict):
        state: str

    ItemsWithState = QuerySet[WithAnnotations[ReconciliationItem, ItemState]]


class ExceptionState(models.TextChoices):
    OPEN = "open", "Open"
    PROPOSED = "proposed", "Resolution proposed"
    RESOLVED = "resolved", "Resolved (approved)"
    CLEARED = "cleared", "Cleared with a note"
    MATCHED = "matched", "Matched (no action)"
    VOIDED = "voided", "Import voided (no action)"


UNRESOLVED_STATES: tuple[str, ...] = (ExceptionState.OPEN, ExceptionState.PROPOSED)

STATE_CASE = Case(
    When(run__voided_at__isnull=False, then=Value(ExceptionState.VOIDED.value)),
    When(category=MatchCategory.MATCHED, then=Value(ExceptionState.MATCHED.value)),
    When(cleared_at__isnull=False, then=Value(ExceptionState.CLEARED.value)),
    When(
        resolution_proposal__decision=ResolutionDecision.APPROVED,
        then=Value(ExceptionState.RESOLVED.value),
    ),
    When(resolution_proposal__decision="", then=Value(ExceptionState.PROPOSED.value)),
    default=Value(ExceptionState.OPEN.value),
    output_field=CharField(),
)


# The exceptions list's order: what needs finance's action first (a difference in amount or
# status, a line twice), then lines that are not ours, then ours the statement lacks (usually a
# timing difference), matched lines last.
CATEGORY_PRIORITY: tuple[str, ...] = (
    MatchCategory.AMOUNT_MISMATCH,
    MatchCategory.STATUS_MISMATCH,
    MatchCategory.DUPLICATE,
    MatchCategory.NOT_OURS,
    MatchCategory.MISSING,
    MatchCategory.MATCHED,
)
CATEGORY_RANK = Case(
    *(When(category=category, then=Value(rank)) for rank, category in enumerate(CATEGORY_PRIORITY)),
    default=Value(len(CATEGORY_PRIORITY)),
    output_field=IntegerField(),
)


def item_list(*, run_id: int | None = None) -> ItemsWithState:
    """Items with their ``state`` annotated, their payout and run joined."""
    queryset = ReconciliationItem.objects.select_related(
        "run", "payout", "resolution_proposal", "cleared_by"
    ).annotate(state=STATE_CASE)
    if run_id is not None:
        queryset = queryset.filter(run_id=run_id)
    return queryset


def item_state_filter(
    queryset: QuerySet[ReconciliationItem], states: tuple[str, ...]
) -> ItemsWithState:
    return queryset.annotate(state=STATE_CASE).filter(state__in=states)


def exceptions_unresolved(*, run_id: int | None = None, mode: str | None = None) -> ItemsWithState:
    """The exceptions still to work: open, or waiting for a proposed resolution's approval."""
    queryset = ReconciliationItem.objects.exclude(category=MatchCategory.MATCHED).filter(
        cleared_at__isnull=True
    )
    if run_id is not None:
        queryset = queryset.filter(run_id=run_id)
    if mode is not None:
        queryset = queryset.filter(run__mode=mode)
    return item_state_filter(queryset, UNRESOLVED_STATES)


def exceptions_unresolved_count(*, mode: str | None = None) -> dict[str, int]:
    """``{"open": n, "proposed": m}`` over every run (of ``mode`` when given)."""
    counts = dict.fromkeys(UNRESOLVED_STATES, 0)
    rows = exceptions_unresolved(mode=mode).order_by().values("state").annotate(count=Count("id"))
    for row in rows:
        counts[row["state"]] = row["count"]
    return counts


def run_state_counts(*, run: ReconciliationRun) -> dict[str, int]:
    """How many of the run's items are in each state."""
    counts = dict.fromkeys(ExceptionState.values, 0)
    rows = item_list(run_id=run.pk).order_by().values("state").annotate(count=Count("id"))
    for row in rows:
        counts[row["state"]] = row["count"]
    return counts


def run_is_complete(*, run: ReconciliationRun) -> bool:
    """Every line matched or explained: no exception open or waiting for approval."""
    return not exceptions_unresolved(run_id=run.pk).exists()
