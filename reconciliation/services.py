"""Reconciliation writes: importing a statement (parse, match, classify, store), clearing an
exception with a note, re-checking exceptions against our current records, and turning a
statement line that proves an ambiguous payout's outcome into a proposed manual resolution.

Matching: each statement line is matched to a payout of the run's mode by our reference
(``internal_reference``), else the reference of one of its later attempts
(``PayoutAttempt.reference``, ``<internal_reference>-<n>`` after a failover), else the provider's
reference (``provider_reference``), else the NIP session id, and classified:

* ``matched``: same amount, and the statuses agree (both successful; both failed; the provider
  still pending while ours is still pending; a payout of ours returned after success agrees
  with successful and with failed/reversed);
* ``amount_mismatch``: the amounts differ (whatever the statuses say);
* ``status_mismatch``: the provider says successful and ours is failed or not final, or the
  provider says failed and ours is successful or not final, or the provider is still pending
  while ours is final;
* ``not_ours``: no payout of ours has the line's references;
* ``duplicate``: an earlier line of the same statement matched the same payout;
* ``missing``: a payout of ours that reached the provider (``dispatched_at``) during the
  statement's period, from a provider the statement covers, that no line matched.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from audit.permissions import staff_permission_require
from audit.services import audit_record
from core.dates import local_day_bounds
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from core.money import format_amount_display
from merchants.models import Mode
from payouts.models import Payout, PayoutStatus
from payouts.services import payout_nip_session_ids_record, payout_resolution_propose
from reconciliation.formats import (
    StatementFormatSpec,
    StatementLine,
    format_get,
    statement_parse,
    statement_period,
)
from reconciliation.models import (
    MatchCategory,
    ReconciliationItem,
    ReconciliationRun,
    StatementStatus,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.http import HttpRequest

logger = logging.getLogger(__name__)

LOOKUP_BATCH = 5000  # references per lookup query: bounded IN lists and result sets
CREATE_BATCH = 1000
NOTE_MIN_LENGTH = 10
PAYOUT_FIELDS = (  # in the order of ``PayoutView``
    "id",
    "internal_reference",
    "provider_reference",
    "nip_session_id",
    "provider_name",
    "amount",
    "status",
    "dispatched_at",
    "returned_at",
)
# Our statuses a provider's "pending" agrees with: the transfer is still in flight on both sides.
IN_FLIGHT = (
    PayoutStatus.RESERVED,
    PayoutStatus.PROCESSING,
    PayoutStatus.DISPATCHED,
    PayoutStatus.AMBIGUOUS,
)
AGREEING_STATUSES: dict[str, tuple[str, ...]] = {
    StatementStatus.SUCCESSFUL: (PayoutStatus.SUCCESSFUL,),
    StatementStatus.FAILED: (PayoutStatus.FAILED,),
    StatementStatus.PENDING: IN_FLIGHT,
}

# A payout returned after success (successful, then sent back by the bank) agrees with a
# statement taken before the return (successful) and with one taken after it (reversed: failed).
RETURNED_AGREES_WITH = (StatementStatus.SUCCESSFUL, StatementStatus.FAILED)


@dataclass(frozen=True)
class StatementImportResult:
    run: ReconciliationRun
    duplicate: bool


@dataclass(frozen=True)
class Classification:
    category: str
    detail: str


# --- Classification ----------------------------------------------------------------------------


def line_classify(
    *,
    statement_status: str,
    statement_amount: Decimal,
    payout_status: str,
    payout_amount: Decimal,
    payout_returned: bool = False,
) -> Classification:
    """How one statement line compares with the payout it matched (see the module docstring)."""
    if statement_amount != payout_amount:
        return Classification(
            MatchCategory.AMOUNT_MISMATCH,
            f"statement {format_amount_display(statement_amount)}, ours "
            f"{format_amount_display(payout_amount)}",
        )
    if payout_returned and statement_status in RETURNED_AGREES_WITH:
        return Classification(MatchCategory.MATCHED, "")
    if payout_status in AGREEING_STATUSES[statement_status]:
        return Classification(MatchCategory.MATCHED, "")
    return Classification(
        MatchCategory.STATUS_MISMATCH, f"statement {statement_status}, ours {payout_status}"
    )


@dataclass(frozen=True)
class PayoutView:
    """What matching reads of a payout (plain values: no model instance per line)."""

    id: int
    internal_reference: str
    provider_reference: str
    nip_session_id: str
    provider_name: str
    amount: Decimal
    status: str
    dispatched_at: datetime | None
    returned_at: datetime | None


def _payout_line_classify(
    payout: PayoutView | Payout, *, statement_status: str, statement_amount: Decimal
) -> Classification:
    """``line_classify`` of a statement line against what we hold of its payout."""
    return line_classify(
        statement_status=statement_status,
        statement_amount=statement_amount,
        payout_status=payout.status,
        payout_amount=payout.amount,
        payout_returned=payout.returned_at is not None,
    )


def _payouts_by(path: str, values: Iterable[str], *, mode: str) -> dict[str, PayoutView]:
    """The payouts of ``mode`` whose ``path`` (a field, or a later attempt's reference through
    ``attempts__reference``) is one of ``values``, by that value."""
    wanted = sorted({value for value in values if value})
    found: dict[str, PayoutView] = {}
    for start in range(0, len(wanted), LOOKUP_BATCH):
        batch = wanted[start : start + LOOKUP_BATCH]
        rows = (
            Payout.objects.filter(mode=mode, **{f"{path}__in": batch})
            .annotate(looked_up=F(path))
            .values_list(*PAYOUT_FIELDS, "looked_up")
        )
        for *row, looked_up in rows:
            found[looked_up] = PayoutView(*row)
    return found


def _line_item(
    run: ReconciliationRun, line: StatementLine, payout: PayoutView | None, matched_by: str
) -> ReconciliationItem:
    return ReconciliationItem(
        run=run,
        line_number=line.line_number,
        raw=line.raw,
        statement_reference=line.reference,
        statement_provider_reference=line.provider_reference,
        statement_session_id=line.session_id,
        statement_amount=line.amount,
        statement_status=line.status,
        statement_status_raw=line.status_raw,
        statement_at=line.at,
        statement_account_number=line.account_number,
        statement_bank=line.bank,
        payout_id=payout.id if payout else None,
        matched_by=matched_by,
        our_amount=payout.amount if payout else None,
        our_status=payout.status if payout else "",
    )


# (what a payout is looked up by, the line's field, the item's ``matched_by``), in this order.
LOOKUPS = (
    ("internal_reference", "reference", "internal_reference"),
    ("attempts__reference", "reference", "attempt_reference"),
    ("provider_reference", "provider_reference", "provider_reference"),
    ("nip_session_id", "session_id", "nip_session_id"),
)


def _payouts_for_lines(
    lines: list[StatementLine], *, mode: str
) -> list[tuple[PayoutView | None, str]]:
    """Each line's payout and the field that found it: by our reference first; the lines still
    unmatched by a later attempt's reference, then by the provider's reference, then by the NIP
    session id."""
    found: list[tuple[PayoutView | None, str]] = [(None, "")] * len(lines)
    for path, line_field, matched_by in LOOKUPS:
        pending = [index for index, (payout, _by) in enumerate(found) if payout is None]
        if not pending:
            break
        by_value = _payouts_by(
            path, (getattr(lines[index], line_field) for index in pending), mode=mode
        )
        for index in pending:
            payout = by_value.get(getattr(lines[index], line_field))
            if payout is not None:
                found[index] = (payout, matched_by)
    return found


def statement_match(
    *,
    run: ReconciliationRun,
    spec: StatementFormatSpec,
    lines: list[StatementLine],
) -> tuple[list[ReconciliationItem], dict[int, str]]:
    """The run's items (one per line, then one per missing payout) and the NIP session ids the
    matched lines show, by payout id. Reads only."""
    items: list[ReconciliationItem] = []
    first_line_of: dict[int, int] = {}
    session_ids: dict[int, str] = {}
    for line, (payout, matched_by) in zip(
        lines, _payouts_for_lines(lines, mode=run.mode), strict=True
    ):
        item = _line_item(run, line, payout, matched_by)
        if payout is None:
            item.category = MatchCategory.NOT_OURS
            item.detail = "no payout of ours has this reference, transfer code or session id"
        elif payout.id in first_line_of:
            item.category = MatchCategory.DUPLICATE
            item.detail = f"line {first_line_of[payout.id]} already matched this payout"
        else:
            first_line_of[payout.id] = line.line_number
            outcome = _payout_line_classify(
                payout, statement_status=line.status, statement_amount=line.amount
            )
            item.category, item.detail = outcome.category, outcome.detail
            if outcome.category == MatchCategory.MATCHED and line.session_id:
                session_ids[payout.id] = line.session_id
        items.append(item)
    items.extend(_missing_items(run=run, spec=spec, matched_ids=set(first_line_of)))
    return items, session_ids


def _missing_items(
    *, run: ReconciliationRun, spec: StatementFormatSpec, matched_ids: set[int]
) -> list[ReconciliationItem]:
    start, end = local_day_bounds(run.period_start, run.period_end)
    expected = Payout.objects.filter(mode=run.mode, dispatched_at__gte=start, dispatched_at__lt=end)
    if spec.provider_names is not None:
        expected = expected.filter(provider_name__in=spec.provider_names)
    rows = expected.order_by("dispatched_at", "id").values_list(*PAYOUT_FIELDS)
    items = []
    for row in rows.iterator(chunk_size=2000):
        payout = PayoutView(*row)
        if payout.id in matched_ids or payout.dispatched_at is None:
            continue
        items.append(
            ReconciliationItem(
                run=run,
                category=MatchCategory.MISSING,
                detail=f"sent to {payout.provider_name} on "
                f"{timezone.localtime(payout.dispatched_at):%Y-%m-%d %H:%M}; ours {payout.status}",
                payout_id=payout.id,
                our_amount=payout.amount,
                our_status=payout.status,
            )
        )
    return items


# --- Import ------------------------------------------------------------------------------------


def file_sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _run_for_hash(digest: str) -> ReconciliationRun | None:
    """The run that imported this file, unless voided (a voided file may be imported again)."""
    return ReconciliationRun.objects.filter(file_sha256=digest, voided_at__isnull=True).first()


def statement_modes_found(*, lines: list[StatementLine]) -> set[str]:
    """The modes of the payouts the lines' references name (by our reference, the provider's
    reference or the NIP session id): one mode when the file is all test or all live."""
    modes: set[str] = set()
    for path, line_field, _matched_by in LOOKUPS:
        values = sorted({getattr(line, line_field) for line in lines if getattr(line, line_field)})
        for start in range(0, len(values), LOOKUP_BATCH):
            batch = values[start : start + LOOKUP_BATCH]
            modes.update(
                Payout.objects.filter(**{f"{path}__in": batch})
                .order_by()
                .values_list("mode", flat=True)
                .distinct()
            )
        if len(modes) > 1:
            break
    return modes


def statement_mode_detect(*, content: bytes, statement_format: str) -> str | None:
    """The mode a statement file belongs to, from its references: ``test`` or ``live`` when
    every payout it names is of that mode; ``None`` when it names none of ours or both modes
    (then the importer must choose). A file that cannot be read raises the parser's 400."""
    lines = statement_parse(spec=format_get(statement_format), content=content)
    modes = statement_modes_found(lines=lines)
    return modes.pop() if len(modes) == 1 else None


def statement_import(
    *,
    content: bytes,
    file_name: str,
    statement_format: str,
    mode: str | None = None,
    imported_by: User | None = None,
    actor_label: str = "",
    period: tuple[date, date] | None = None,
    request: HttpRequest | None = None,
) -> StatementImportResult:
    """Imports one statement file as one run. Idempotent on the file's SHA-256: the same file
    again answers the first run with ``duplicate=True`` and stores nothing. A file that cannot
    be read stops with a 400 naming the line and the column; nothing is stored.

    ``period`` (first and last Lagos day) defaults to the days the lines fall on; it bounds the
    search for payouts of ours the statement lacks.

    ``mode`` is the importer's choice; ``None`` takes the mode of the payouts the file's
    references name, and is refused (400 naming ``mode``) when they name none of ours or both
    modes: a statement is never matched against a mode nobody chose.
    """
    if mode is not None and mode not in Mode.values:
        raise ApplicationError(f"mode: must be one of {', '.join(Mode.values)}")
    spec = format_get(statement_format)
    digest = file_sha256(content)
    existing = _run_for_hash(digest)
    if existing is not None:
        return StatementImportResult(run=existing, duplicate=True)
    started = time.monotonic()
    lines = statement_parse(spec=spec, content=content)
    if mode is None:
        modes = statement_modes_found(lines=lines)
        if len(modes) != 1:
            found = "both test and live payouts" if modes else "no payout of ours"
            raise ApplicationError(f"mode: the file's references name {found}; choose test or live")
        mode = modes.pop()
    period_start, period_end = period or statement_period(lines)
    if period_end < period_start:
        raise ApplicationError("period_end: must not be earlier than period_start")
    try:
        with transaction.atomic():
            run = ReconciliationRun.objects.create(
                statement_format=spec.key,
                mode=mode,
                file_name=file_name[:255],
                file_sha256=digest,
                period_start=period_start,
                period_end=period_end,
                line_count=len(lines),
                imported_by=imported_by,
                imported_via="admin" if imported_by is not None else "command",
            )
            items, session_ids = statement_match(run=run, spec=spec, lines=lines)
            ReconciliationItem.objects.bulk_create(items, batch_size=CREATE_BATCH)
            counts = dict.fromkeys(MatchCategory.values, 0)
            for item in items:
                counts[item.category] += 1
            run.category_counts = counts
            run.duration_ms = int((time.monotonic() - started) * 1000)
            run.save(update_fields=["category_counts", "duration_ms"])
            recorded = payout_nip_session_ids_record(session_ids=session_ids)
            audit_record(
                actor=imported_by if imported_by is not None else actor_label or "manage.py",
                action="reconciliation.reconciliationrun.import",
                obj=run,
                after={
                    "file_name": run.file_name,
                    "file_sha256": digest,
                    "statement_format": spec.key,
                    "mode": mode,
                    "period": f"{period_start}..{period_end}",
                    "lines": len(lines),
                    "session_ids_recorded": recorded,
                    **counts,
                },
                request=request,
            )
    except IntegrityError:
        # The same file imported at the same moment by someone else: theirs is the run.
        existing = _run_for_hash(digest)
        if existing is None:
            raise
        return StatementImportResult(run=existing, duplicate=True)
    logger.info(
        "statement %s imported as run %s: %s lines, %s", file_name, run.pk, len(lines), counts
    )
    return StatementImportResult(run=run, duplicate=False)


@transaction.atomic
def statement_import_void(
    *,
    run_id: int,
    reason: str,
    voided_by: User,
    request: HttpRequest | None = None,
) -> ReconciliationRun:
    """Voids a statement import made by mistake (the wrong mode, the wrong file): its lines
    leave the exceptions queue and the dashboard, and the same file may be imported again. The
    run and its lines stay, for the record. Needs ``reconciliation.import_statement`` and a
    written reason; audited. Refused while a resolution proposed from one of its lines waits
    for approval (reject it first)."""
    staff_permission_require(
        voided_by, "reconciliation.import_statement", message="You may not void statement imports"
    )
    reason = _note_clean(reason, field="reason")
    run = ReconciliationRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise NotFoundError("No such statement import")
    if run.voided_at is not None:
        raise ConflictError("This statement import was already voided")
    if run.items.filter(resolution_proposal__decision="").exists():
        raise ConflictError(
            "A resolution proposed from one of this import's lines waits for approval; "
            "reject it before voiding the import"
        )
    run.voided_at = timezone.now()
    run.voided_by = voided_by
    run.void_reason = reason
    run.save(update_fields=["voided_at", "voided_by", "void_reason"])
    audit_record(
        actor=voided_by,
        action="reconciliation.reconciliationrun.void",
        obj=run,
        before={"state": "imported", "mode": run.mode, "file_sha256": run.file_sha256},
        after={"state": "voided"},
        reason=reason,
        request=request,
    )
    return run


# --- Working the exceptions ---------------------------------------------------------------------


def _note_clean(note: str, *, field: str = "note") -> str:
    """``note`` stripped; a 400 naming ``field`` when it is shorter than ``NOTE_MIN_LENGTH``."""
    note = (note or "").strip()
    if len(note) < NOTE_MIN_LENGTH:
        raise ApplicationError(
            f"{field}: a {field} of at least {NOTE_MIN_LENGTH} characters is required"
        )
    return note


def _clear(
    item: ReconciliationItem,
    *,
    note: str,
    user: User,
    action: str,
    request: HttpRequest | None,
) -> None:
    item.cleared_at = timezone.now()
    item.cleared_by = user
    item.clear_note = note
    item.save(update_fields=["cleared_at", "cleared_by", "clear_note"])
    audit_record(
        actor=user,
        action=action,
        obj=item,
        before={"category": item.category, "state": "open"},
        after={"state": "cleared", "payout_id": item.payout_id},
        reason=note,
        request=request,
    )


def _clearable(items: Iterable[ReconciliationItem]) -> list[ReconciliationItem]:
    """Exceptions not cleared yet and with no proposal waiting or approved."""
    return [
        item
        for item in items
        if item.category != MatchCategory.MATCHED
        and item.cleared_at is None
        and (
            item.resolution_proposal_id is None or item.resolution_proposal.decision == "rejected"  # type: ignore[union-attr]
        )
    ]


@transaction.atomic
def reconciliation_items_clear(
    *,
    item_ids: Iterable[int],
    note: str,
    cleared_by: User,
    request: HttpRequest | None = None,
) -> int:
    """Clears the open exceptions among ``item_ids`` with ``note`` (why the difference is
    explained: a timing difference, a transfer from another product, …). Needs
    ``reconciliation.clear_exception``; each clearing is audited. Returns how many."""
    staff_permission_require(
        cleared_by,
        "reconciliation.clear_exception",
        message="You may not clear reconciliation exceptions",
    )
    note = _note_clean(note)
    items = (
        ReconciliationItem.objects.select_for_update(of=("self",))
        .select_related("resolution_proposal")
        .filter(pk__in=list(item_ids))
        .order_by("pk")
    )
    clearable = _clearable(items)
    for item in clearable:
        _clear(
            item,
            note=note,
            user=cleared_by,
            action="reconciliation.reconciliationitem.clear",
            request=request,
        )
    return len(clearable)


@transaction.atomic
def reconciliation_items_recheck(
    *,
    item_ids: Iterable[int],
    checked_by: User,
    request: HttpRequest | None = None,
) -> int:
    """Compares the open exceptions among ``item_ids`` that have a statement line and a payout
    with the payout as it is now (a requery or an approved resolution may have settled it);
    those that now agree are cleared with a note saying so. Returns how many."""
    staff_permission_require(
        checked_by,
        "reconciliation.clear_exception",
        message="You may not clear reconciliation exceptions",
    )
    items = (
        ReconciliationItem.objects.select_for_update(of=("self",))
        .select_related("payout", "resolution_proposal")
        .filter(pk__in=list(item_ids), payout__isnull=False, statement_amount__isnull=False)
        .exclude(category=MatchCategory.DUPLICATE)
        .order_by("pk")
    )
    cleared = 0
    for item in _clearable(items):
        payout = item.payout
        if payout is None or item.statement_amount is None:  # excluded by the query
            continue
        outcome = _payout_line_classify(
            payout, statement_status=item.statement_status, statement_amount=item.statement_amount
        )
        if outcome.category != MatchCategory.MATCHED:
            continue
        _clear(
            item,
            note=f"Re-checked: our payout is now {payout.status} and agrees with the statement.",
            user=checked_by,
            action="reconciliation.reconciliationitem.recheck",
            request=request,
        )
        cleared += 1
    return cleared


def proposable_status(item: ReconciliationItem) -> str | None:
    """The outcome the statement proves for the item's payout, when a resolution may be
    proposed from it: a line whose payout is ``ambiguous``, with the same amount and a final
    status (successful or failed). ``None`` otherwise."""
    payout = item.payout
    if (
        payout is None
        or payout.status != PayoutStatus.AMBIGUOUS
        or item.category not in (MatchCategory.STATUS_MISMATCH,)
        or item.statement_amount != payout.amount
        or item.statement_status not in (StatementStatus.SUCCESSFUL, StatementStatus.FAILED)
    ):
        return None
    return (
        PayoutStatus.SUCCESSFUL
        if item.statement_status == StatementStatus.SUCCESSFUL
        else (PayoutStatus.FAILED)
    )


def proposal_reason_default(item: ReconciliationItem) -> str:
    run = item.run
    session = f", NIP session id {item.statement_session_id}" if item.statement_session_id else ""
    amount = format_amount_display(item.statement_amount) if item.statement_amount else "—"
    return (
        f"Statement {run.file_name} (import #{run.pk}, {run.get_statement_format_display()}) "
        f"line {item.line_number}: {item.statement_status_raw} ({item.statement_status}) for "
        f"{amount}{session}."
    )


@transaction.atomic
def reconciliation_item_propose_resolution(
    *,
    item_id: int,
    reason: str,
    proposed_by: User,
    request: HttpRequest | None = None,
) -> ReconciliationItem:
    """Proposes settling the item's ambiguous payout as the statement shows (successful or
    failed), with the line's references as evidence, through the payouts' two-person flow
    (``payouts.services.payout_resolution_propose``: needs ``payouts.propose_resolution``; a
    different user approves). The item then shows ``proposed``, and ``resolved`` once approved.
    """
    item = (
        ReconciliationItem.objects.select_for_update(of=("self",))
        .select_related("run", "payout", "resolution_proposal")
        .filter(pk=item_id)
        .first()
    )
    if item is None:
        raise NotFoundError("Reconciliation line not found")
    if item.cleared_at is not None:
        raise ConflictError("This exception was already cleared")
    if item.resolution_proposal_id is not None and item.resolution_proposal.decision != "rejected":  # type: ignore[union-attr]
        raise ConflictError("A resolution was already proposed from this line")
    proposed_status = proposable_status(item)
    if proposed_status is None:
        raise ConflictError(
            "Only a line that proves an ambiguous payout's outcome (same amount, final status) "
            "can become a proposed resolution"
        )
    payout = item.payout
    if payout is None:  # proposable_status needs a payout
        raise ConflictError("This line has no payout")
    session_id = item.statement_session_id
    proposal = payout_resolution_propose(
        payout_id=payout.pk,
        proposed_status=proposed_status,
        reason=reason,
        proposed_by=proposed_by,
        provider_reference=item.statement_provider_reference or payout.provider_reference,
        nip_session_id=session_id if session_id.isascii() and session_id.isalnum() else "",
        request=request,
    )
    item.resolution_proposal = proposal
    item.save(update_fields=["resolution_proposal"])
    audit_record(
        actor=proposed_by,
        action="reconciliation.reconciliationitem.propose_resolution",
        obj=item,
        after={"proposal_id": proposal.pk, "payout_id": payout.pk, "status": proposed_status},
        reason=reason,
        request=request,
    )
    return item
