"""Payout reads: the quote, the merchant's list and details, what the sweepers must look at,
and each provider's health (its attempts of the circuit window)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Max, Model, Q, QuerySet, Subquery, Sum, Window
from django.db.models.functions import TruncDate
from django.utils import timezone as django_timezone

from core.api.created_range import CreatedRangeFilters
from core.api.list_filters import filters_given
from core.api.pagination import Page, page_items
from core.dates import local_isoformat
from core.db import quoted_column, quoted_table
from core.exceptions import NotFoundError
from core.money import CURRENCY_NGN, round_amount
from payouts.models import (
    AttemptOutcome,
    CircuitState,
    Payout,
    PayoutAttempt,
    PayoutBatch,
    PayoutCountChange,
    PayoutDailyCount,
    PayoutProviderCircuit,
    PayoutStatus,
    payout_dispatchable_q,
)
from payouts.providers.registry import PROVIDER_CLASSES
from payouts.rules import payout_currency_validate
from wallets.models import Wallet
from wallets.selectors import payout_fee_calculate

if TYPE_CHECKING:
    from merchants.models import Merchant

PAYOUT_NOT_FOUND_MESSAGE = "Payout not found"
MAX_DATABASE_ID = 2**63 - 1


@dataclass(frozen=True)
class PayoutQuote:
    amount: Decimal
    fee_amount: Decimal
    total_debit_amount: Decimal
    currency: str


def payout_quote(*, amount: Decimal, currency: str = CURRENCY_NGN) -> PayoutQuote:
    """Fee and total debit for a prospective payout; reserves nothing."""
    payout_currency_validate(currency=currency)
    fee_amount = payout_fee_calculate(amount=amount)
    return PayoutQuote(
        amount=round_amount(amount),
        fee_amount=fee_amount,
        total_debit_amount=round_amount(amount + fee_amount),
        currency=CURRENCY_NGN,
    )


@dataclass(frozen=True)
class PayoutListFilters(CreatedRangeFilters):
    status: str | None = None
    reference: str | None = None
    currency: str = CURRENCY_NGN
    batch_id: int | None = None  # extension: the payouts a bulk request created


# The columns the Payout resource shows (``payouts.api.serializers.PayoutOutputSerializer``):
# a list page reads these only, not the provider's raw answers or the dispatch bookkeeping.
PAYOUT_RESOURCE_FIELDS = (
    "id",
    "internal_reference",
    "idempotency_key",
    "account_number",
    "account_name",
    "bank_code",
    "bank_name",
    "currency",
    "amount",
    "fee_amount",
    "total_debit_amount",
    "status",
    "narration",
    "error_message",
    "nip_session_id",
    "returned_at",
    "return_reason",
    "created_at",
    "completed_at",
    "updated_at",
    "approval_status",
    "approved_at",
    "scheduled_for",
)


def _wallet_id_subquery(*, merchant: Merchant, mode: str) -> Subquery:
    return Subquery(Wallet.objects.filter(merchant=merchant, mode=mode).values("pk")[:1])


def _payout_filters_apply(
    queryset: QuerySet[Payout], filters: PayoutListFilters
) -> QuerySet[Payout]:
    # Another merchant's or mode's batch holds none of this wallet's payouts: an empty list.
    queryset = filters_given(
        queryset,
        batch_id=filters.batch_id,
        status=filters.status,
        **filters.created_lookups(),
    )
    if filters.reference:
        reference = filters.reference
        queryset = queryset.filter(
            Q(internal_reference=reference)
            | Q(idempotency_key=reference)
            | Q(nip_session_id=reference)
            | Q(account_number=reference)
            | Q(account_name__icontains=reference)
        )
    return queryset


def payout_list(
    *,
    merchant: Merchant,
    mode: str,
    filters: PayoutListFilters | None = None,
    wallet_id: int | None = None,
) -> QuerySet[Any]:
    """The merchant's payouts of one mode, newest first (a currency other than NGN is a 400),
    as rows of the resource's columns (``PAYOUT_RESOURCE_FIELDS``): named tuples whose
    attributes are the fields', read without building a model instance per payout.

    Scoped by ``wallet_id = (SELECT id FROM wallet …)`` so PostgreSQL evaluates the wallet once
    and walks ``payout_wallet_newest_idx``/``payout_wallet_status_idx`` in order; by
    ``wallet_id`` itself when the caller has read the merchant's wallet of ``mode`` already (the
    key authentication reads it with the key), which spares compiling the subquery. How many
    there are: ``payout_list_total``.
    """
    filters = filters or PayoutListFilters()
    payout_currency_validate(currency=filters.currency)
    wallet: int | Subquery = (
        _wallet_id_subquery(merchant=merchant, mode=mode) if wallet_id is None else wallet_id
    )
    queryset = Payout.objects.filter(wallet_id=wallet)
    queryset = _payout_filters_apply(queryset, filters).order_by("-created_at", "-id")
    return queryset.values_list(*PAYOUT_RESOURCE_FIELDS, named=True)


# The payout counts' day (``PayoutDailyCount.day``): the calendar day at UTC+01:00, Lagos time,
# exactly as the triggers of migration 0007 compute it on both backends.
COUNT_DAY_UTC_OFFSET = timedelta(hours=1)
_ONE_DAY = timedelta(days=1)
_ONE_MICROSECOND = timedelta(microseconds=1)


def count_day(instant: datetime) -> date:
    """The counts' day of an aware instant."""
    return (instant.astimezone(UTC) + COUNT_DAY_UTC_OFFSET).date()


def count_day_start(day: date) -> datetime:
    """The instant the counts' ``day`` begins."""
    return datetime.combine(day, time.min, tzinfo=UTC) - COUNT_DAY_UTC_OFFSET


# Window edges this close to the ends of the calendar are read as open (or, facing the other
# way, as holding nothing): no payout is created in year 1 or 9999, and a day's bounds there
# would overflow ``datetime``.
_CALENDAR_START = datetime.min.replace(tzinfo=UTC) + 2 * _ONE_DAY
_CALENDAR_END = datetime.max.replace(tzinfo=UTC) - 2 * _ONE_DAY


def _count_window(
    filters: PayoutListFilters,
) -> tuple[datetime | None, datetime | None] | None:
    """The creation window ``[start, stop)`` of ``filters`` (``None`` on a side: open), or
    ``None`` for a window that holds no payout."""
    start, end = filters.created_from, filters.created_to
    if (start is not None and start >= _CALENDAR_END) or (
        end is not None and end <= _CALENDAR_START
    ):
        return None
    if start is not None and start <= _CALENDAR_START:
        start = None
    if end is not None and end >= _CALENDAR_END:
        end = None
    stop = None if end is None else end + _ONE_MICROSECOND
    if start is not None and stop is not None and stop <= start:
        return None
    return start, stop


@dataclass
class _TotalStatement:
    """The list total's one statement, built term by term: ``SELECT a + b - c``, each term a
    scalar subquery of one wallet (and status). Written by hand, from the models' table and
    column names and placeholders only (every value is a parameter): the ORM took several
    times the database's own time to compile the total, on every page."""

    wallet_id: int
    status: str | None
    terms: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)

    def _where(self, model: type[Model], extra: list[str], extra_params: list[Any]) -> str:
        where = [
            f"{quoted_column(model, 'wallet', connection)} = %s",
            *([f"{quoted_column(model, 'status', connection)} = %s"] if self.status else []),
            *extra,
        ]
        self.params.extend([self.wallet_id, *([self.status] if self.status else []), *extra_params])
        return " AND ".join(where)

    def add_days(self, days: list[tuple[str, date]]) -> None:
        """The counts and the unfolded changes of the days ``day <op> bound`` for each pair."""
        adapt = connection.ops.adapt_datefield_value
        for model, summed in ((PayoutDailyCount, "count"), (PayoutCountChange, "delta")):
            day = quoted_column(model, "day", connection)
            where = self._where(
                model,
                [f"{day} {operator} %s" for operator, _day in days],
                [adapt(bound) for _operator, bound in days],
            )
            sign = " + " if self.terms else ""
            total = f"COALESCE(SUM({quoted_column(model, summed, connection)}), 0)"
            table = quoted_table(model, connection)
            self.terms.append(f"{sign}(SELECT {total} FROM {table} WHERE {where})")  # noqa: S608

    def count_created(self, lower: datetime, upper: datetime, *, sign: str) -> None:
        """The payouts created in ``[lower, upper)``, added (``+``) or taken off (``-``)."""
        adapt = connection.ops.adapt_datetimefield_value
        created_at = quoted_column(Payout, "created_at", connection)
        where = self._where(
            Payout,
            [f"{created_at} >= %s", f"{created_at} < %s"],
            [adapt(lower), adapt(upper)],
        )
        table = quoted_table(Payout, connection)
        self.terms.append(f" {sign} (SELECT COUNT(*) FROM {table} WHERE {where})")  # noqa: S608

    def run(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT " + "".join(self.terms), self.params)
            return int(cursor.fetchone()[0])


def _window_edge(
    at: datetime, *, opens: bool
) -> tuple[tuple[str, date], tuple[datetime, datetime, str] | None]:
    """How a window edge at ``at`` (``opens``: the window's start, else its end) meets its day:
    the comparison that keeps that day's count in the sum of whole days or leaves it out, and
    the payouts to count to make up for it (``None`` on a day boundary): the day is left out
    and its part inside the window added (``+``), or kept and its part outside taken off
    (``-``), whichever part is the shorter."""
    day = count_day(at)
    day_start, next_day_start = count_day_start(day), count_day_start(day + _ONE_DAY)
    if at == day_start:
        return (">=" if opens else "<", day), None
    before, after = (day_start, at), (at, next_day_start)
    inside, outside = (after, before) if opens else (before, after)
    if inside[1] - inside[0] < outside[1] - outside[0]:
        return (">" if opens else "<", day), (*inside, "+")
    return (">=" if opens else "<=", day), (*outside, "-")


def payout_list_total(*, wallet_id: int | None, filters: PayoutListFilters | None = None) -> int:
    """Exactly how many payouts ``payout_list`` holds for the wallet and ``filters``, read from
    the per-day counts rather than by counting the payouts, in one statement (one snapshot).

    Whole days inside the creation window are summed from the counts (``PayoutDailyCount``
    and the changes not folded into them yet, ``PayoutCountChange``). A window edge inside a
    day is counted from the payouts themselves, on whichever side of the edge is the shorter
    part of that day: the part inside the window is added, or the day is summed and the part
    outside taken off. So a window of whole Lagos days (dates without a time) costs two short
    sums, any other at most two short index range counts more. ``reference`` and ``batch_id``
    are counted directly: they select few payouts, through their own indexes.
    """
    filters = filters or PayoutListFilters()
    payout_currency_validate(currency=filters.currency)
    if wallet_id is None:
        return 0
    if filters.reference or filters.batch_id is not None:
        payouts = Payout.objects.filter(wallet_id=wallet_id)
        return _payout_filters_apply(payouts, filters).count()
    window = _count_window(filters)
    if window is None:
        return 0
    start, stop = window
    total = _TotalStatement(wallet_id=wallet_id, status=filters.status)
    days: list[tuple[str, date]] = []
    corrections: list[tuple[datetime, datetime, str]] = []
    for edge, opens in ((start, True), (stop, False)):
        if edge is not None:
            day_bound, correction = _window_edge(edge, opens=opens)
            days.append(day_bound)
            if correction is not None:
                corrections.append(correction)
    total.add_days(days)
    for lower, upper, sign in corrections:
        total.count_created(lower, upper, sign=sign)
    return total.run()


def payout_list_page(
    *,
    merchant: Merchant,
    mode: str,
    wallet_id: int | None,
    filters: PayoutListFilters | None = None,
    page: int,
    limit: int,
) -> Page:
    """One page of ``payout_list`` with its exact ``total`` (``payout_list_total``); a page past
    the total is not read. Deep pages are read by ``OFFSET`` with the deferred join
    (``core.api.pagination.page_items``)."""
    filters = filters or PayoutListFilters()
    rows = payout_list(merchant=merchant, mode=mode, filters=filters, wallet_id=wallet_id)
    offset = (page - 1) * limit
    total = payout_list_total(wallet_id=wallet_id, filters=filters)
    items = page_items(rows, offset=offset, limit=limit) if offset < total else []
    return Page(items=items, page=page, limit=limit, total=total)


COUNT_DAY_ZONE = timezone(COUNT_DAY_UTC_OFFSET)


def payout_counts_recount() -> dict[tuple[int, str, date], int]:
    """What every per-day count should be, from the payouts themselves: ``(wallet_id, status,
    day) -> count``, one grouped query over the whole table."""
    rows = (
        Payout.objects.annotate(day=TruncDate("created_at", tzinfo=COUNT_DAY_ZONE))
        .order_by()
        .values_list("wallet_id", "status", "day")
        .annotate(count=Count("id"))
    )
    return {(wallet_id, status, day): count for wallet_id, status, day, count in rows}


def payout_counts_stored() -> dict[tuple[int, str, date], int]:
    """The per-day counts as a list total reads them: the folded counts plus the changes not
    folded into them yet, in one statement (zero totals left out)."""
    folded = PayoutDailyCount.objects.order_by().values_list("wallet_id", "status", "day", "count")
    pending = (
        PayoutCountChange.objects.order_by()
        .values_list("wallet_id", "status", "day")
        .annotate(total=Sum("delta"))
    )
    totals: dict[tuple[int, str, date], int] = {}
    for wallet_id, status, day, count in folded.union(pending, all=True):
        key = (wallet_id, status, day)
        totals[key] = totals.get(key, 0) + count
    return {key: total for key, total in totals.items() if total}


@contextmanager
def _one_snapshot() -> Iterator[None]:
    """Outside any transaction: a REPEATABLE READ transaction, so the reads inside see the same
    writes."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


@dataclass(frozen=True)
class PayoutCountMismatch:
    wallet_id: int
    status: str
    day: date
    stored: int
    counted: int

    def as_dict(self) -> dict[str, object]:
        return {
            "wallet_id": self.wallet_id,
            "status": self.status,
            "day": self.day.isoformat(),
            "stored": self.stored,
            "counted": self.counted,
        }


def payout_counts_mismatches(
    *,
    stored: dict[tuple[int, str, date], int] | None = None,
    counted: dict[tuple[int, str, date], int] | None = None,
) -> list[PayoutCountMismatch]:
    """Every (wallet, status, day) whose stored count differs from the payouts counted now
    (``stored`` and ``counted``, when given, instead of reading them)."""
    with _one_snapshot():
        stored = payout_counts_stored() if stored is None else stored
        counted = payout_counts_recount() if counted is None else counted
    return [
        PayoutCountMismatch(
            wallet_id=key[0],
            status=key[1],
            day=key[2],
            stored=stored.get(key, 0),
            counted=counted.get(key, 0),
        )
        for key in sorted(stored.keys() | counted.keys())
        if stored.get(key, 0) != counted.get(key, 0)
    ]


def payout_get(*, merchant: Merchant, mode: str, payout_id: int) -> Payout:
    """One payout of the merchant in this mode; 404 for another merchant's or mode's."""
    payout = Payout.objects.filter(pk=payout_id, merchant=merchant, mode=mode).first()
    if payout is None:
        raise NotFoundError(PAYOUT_NOT_FOUND_MESSAGE)
    return payout


def payout_attempt_list(*, payout: Payout) -> list[PayoutAttempt]:
    """The payout's sends to providers, oldest first (the prefetched ones when there are)."""
    return sorted(payout.attempts.all(), key=lambda attempt: attempt.number)


PAYOUT_BATCH_NOT_FOUND_MESSAGE = "Payout batch not found"


def payout_batch_get(*, merchant: Merchant, mode: str, batch_id: int) -> PayoutBatch:
    """One bulk request of the merchant in this mode; 404 for another merchant's or mode's."""
    batch = None
    if 0 < batch_id <= MAX_DATABASE_ID:
        batch = PayoutBatch.objects.filter(pk=batch_id, merchant=merchant, mode=mode).first()
    if batch is None:
        raise NotFoundError(PAYOUT_BATCH_NOT_FOUND_MESSAGE)
    return batch


def payout_batch_status_counts(*, batch: PayoutBatch) -> dict[str, int]:
    """How many of the batch's payouts are in each of the six statuses now (zeros included);
    one grouped query on ``payout_batch_idx``."""
    counts = dict.fromkeys(PayoutStatus.values, 0)
    rows = (
        Payout.objects.filter(batch=batch)
        .order_by()
        .values_list("status")
        .annotate(count=Count("id"))
    )
    for status, count in rows:
        counts[status] = count
    return counts


def payout_ids_due_for_requery(*, now: datetime, limit: int) -> list[int]:
    """``ambiguous`` and long-``dispatched`` payouts whose next requery time has come."""
    return list(
        Payout.objects.filter(
            status__in=(PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS),
            next_requery_at__lte=now,
        )
        .order_by("next_requery_at", "id")
        .values_list("pk", flat=True)[:limit]
    )


def payouts_stuck_for_dispatch(
    *, now: datetime, older_than: timedelta, claim_timeout: timedelta, limit: int
) -> list[tuple[int, str]]:
    """``(id, status)`` of the ``reserved`` payouts older than ``older_than`` (their dispatch
    message was lost) and the ``processing`` payouts whose claim is stale or was released (the
    worker died or the provider could not be reached), oldest first. A held payout (approval
    pending, or its scheduled time not come) is not stuck; once released it counts from its
    approval or scheduled time, not from its creation."""
    return list(
        Payout.objects.filter(
            Q(status=PayoutStatus.RESERVED, created_at__lte=now - older_than)
            & payout_dispatchable_q(now=now, since=older_than)
            | Q(status=PayoutStatus.PROCESSING, dispatch_claimed_at__isnull=True)
            | Q(status=PayoutStatus.PROCESSING, dispatch_claimed_at__lte=now - claim_timeout)
        )
        .order_by("created_at", "id")
        .values_list("pk", "status")[:limit]
    )


def payout_ids_stuck_for_dispatch(
    *, now: datetime, older_than: timedelta, claim_timeout: timedelta, limit: int
) -> list[int]:
    """The ids of ``payouts_stuck_for_dispatch``."""
    stuck = payouts_stuck_for_dispatch(
        now=now, older_than=older_than, claim_timeout=claim_timeout, limit=limit
    )
    return [payout_id for payout_id, _status in stuck]


@dataclass(frozen=True)
class PayoutsWaiting:
    """The payouts a sweeper leaves for a later run: how many, and the first to fall due."""

    count: int
    next_due_at: datetime | None = None
    next_reference: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "count": self.count,
            "next_due_at": local_isoformat(self.next_due_at) or None,
            "next_payout": self.next_reference or None,
        }


def _payouts_waiting(
    queryset: QuerySet[Payout], *, due_field: str, due_after: timedelta = timedelta(0)
) -> PayoutsWaiting:
    """One query: the first payout by ``due_field`` and, through a window, how many there are."""
    first = (
        queryset.annotate(waiting=Window(Count("id")))
        .order_by(due_field, "id")
        .values_list("waiting", due_field, "internal_reference")
        .first()
    )
    if first is None:
        return PayoutsWaiting(count=0)
    count, due_at, reference = first
    return PayoutsWaiting(count=count, next_due_at=due_at + due_after, next_reference=reference)


def payouts_waiting_for_requery(*, now: datetime, excluding: Sequence[int] = ()) -> PayoutsWaiting:
    """``ambiguous`` and ``dispatched`` payouts whose next requery time is still ahead (but for
    ``excluding``: those just handed to the workers under a lease)."""
    queryset = Payout.objects.filter(
        status__in=(PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS), next_requery_at__gt=now
    )
    if excluding:
        queryset = queryset.exclude(pk__in=excluding)
    return _payouts_waiting(queryset, due_field="next_requery_at")


def payouts_waiting_to_be_stuck(*, now: datetime, older_than: timedelta) -> PayoutsWaiting:
    """``reserved`` payouts younger than ``older_than`` (left to the worker); each counts as
    stuck once ``older_than`` after its creation."""
    return _payouts_waiting(
        Payout.objects.filter(
            payout_dispatchable_q(now=now),
            status=PayoutStatus.RESERVED,
            created_at__gt=now - older_than,
        ),
        due_field="created_at",
        due_after=older_than,
    )


def payout_find(*, identifier: str) -> Payout | None:
    """The payout an operator names: by its numeric id, or by its internal reference."""
    identifier = identifier.strip()
    if identifier.isascii() and identifier.isdigit():
        if not 0 < int(identifier) <= MAX_DATABASE_ID:
            return None
        return Payout.objects.filter(pk=int(identifier)).first()
    return Payout.objects.filter(internal_reference=identifier).first()


# --- Provider health -------------------------------------------------------------------------


def circuit_window() -> timedelta:
    """``PAYOUT_CIRCUIT_WINDOW``: how far back a provider's attempts count towards its health."""
    value = getattr(settings, "PAYOUT_CIRCUIT_WINDOW", None)
    if value is None:
        return timedelta(seconds=300)
    return value if isinstance(value, timedelta) else timedelta(seconds=value)


@dataclass(frozen=True)
class ProviderHealth:
    """A provider's recent attempts and its circuit, as the back office shows them."""

    provider_name: str
    state: str
    attempts: int
    answered: int
    unknown: int
    not_sent: int
    rejected: int
    last_attempt_at: datetime | None
    opened_at: datetime | None

    def rate(self, count: int) -> float:
        return count / self.answered if self.answered else 0.0

    @property
    def failure_rate(self) -> float:
        return self.rate(self.unknown + self.not_sent + self.rejected)


def provider_attempt_counts(
    provider_names: Iterable[str], *, since: dict[str, datetime]
) -> dict[str, dict[str, Any]]:
    """Per provider: its attempts since ``since[name]``, answered ones, and each bad outcome."""
    counted: dict[str, dict[str, Any]] = {}
    for name in provider_names:
        counted[name] = PayoutAttempt.objects.filter(
            provider_name=name, created_at__gte=since[name]
        ).aggregate(
            attempts=Count("id"),
            answered=Count("id", filter=~Q(outcome=AttemptOutcome.IN_FLIGHT)),
            unknown=Count("id", filter=Q(outcome=AttemptOutcome.UNKNOWN)),
            not_sent=Count("id", filter=Q(outcome=AttemptOutcome.NOT_SENT)),
            rejected=Count("id", filter=Q(outcome=AttemptOutcome.REJECTED)),
            last_attempt_at=Max("created_at"),
        )
    return counted


def attempts_counted_since(circuit: PayoutProviderCircuit | None, *, now: datetime) -> datetime:
    """Where a provider's health window starts: the window's start, or its circuit's last
    closing if later (failures before a closing no longer count)."""
    start = now - circuit_window()
    if circuit is not None and circuit.closed_at is not None and circuit.closed_at > start:
        return circuit.closed_at
    return start


def provider_health_list(*, now: datetime | None = None) -> list[ProviderHealth]:
    """Every payout provider's health (``payouts.services.circuits``): its circuit and its
    attempts in the window, and its last attempt ever."""
    now = now or django_timezone.now()
    circuits = {circuit.provider_name: circuit for circuit in PayoutProviderCircuit.objects.all()}
    names = sorted(set(PROVIDER_CLASSES) | set(circuits))
    since = {name: attempts_counted_since(circuits.get(name), now=now) for name in names}
    counted = provider_attempt_counts(names, since=since)
    last = dict(
        PayoutAttempt.objects.values("provider_name")
        .annotate(last=Max("created_at"))
        .values_list("provider_name", "last")
    )
    return [
        ProviderHealth(
            provider_name=name,
            state=circuits[name].state if name in circuits else CircuitState.CLOSED,
            attempts=counted[name]["attempts"],
            answered=counted[name]["answered"],
            unknown=counted[name]["unknown"],
            not_sent=counted[name]["not_sent"],
            rejected=counted[name]["rejected"],
            last_attempt_at=last.get(name),
            opened_at=circuits[name].opened_at if name in circuits else None,
        )
        for name in names
    ]
