"""Payout reads: the quote, the merchant's list and details, and what the sweepers must look
at."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

from django.db.models import Count, Q, QuerySet, Subquery, Window

from core.dates import local_isoformat
from core.exceptions import NotFoundError
from core.money import CURRENCY_NGN, round_amount
from payouts.models import Payout, PayoutBatch, PayoutStatus
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
class PayoutListFilters:
    status: str | None = None
    created_from: datetime | None = None  # inclusive
    created_to: datetime | None = None  # inclusive
    reference: str | None = None
    currency: str = CURRENCY_NGN
    batch_id: int | None = None  # extension: the payouts a bulk request created


def _wallet_id_subquery(*, merchant: Merchant, mode: str) -> Subquery:
    return Subquery(Wallet.objects.filter(merchant=merchant, mode=mode).values("pk")[:1])


def payout_list(
    *, merchant: Merchant, mode: str, filters: PayoutListFilters | None = None
) -> QuerySet[Payout]:
    """The merchant's payouts of one mode, newest first (a currency other than NGN is a 400).

    Scoped by ``wallet_id = (SELECT id FROM wallet …)`` so PostgreSQL evaluates the wallet once
    and walks ``payout_wallet_newest_idx``/``payout_wallet_status_idx`` in order.
    """
    filters = filters or PayoutListFilters()
    payout_currency_validate(currency=filters.currency)
    queryset = Payout.objects.filter(wallet_id=_wallet_id_subquery(merchant=merchant, mode=mode))
    if filters.batch_id is not None:
        # Another merchant's or mode's batch holds none of this wallet's payouts: an empty list.
        queryset = queryset.filter(batch_id=filters.batch_id)
    if filters.status:
        queryset = queryset.filter(status=filters.status)
    if filters.created_from is not None:
        queryset = queryset.filter(created_at__gte=filters.created_from)
    if filters.created_to is not None:
        queryset = queryset.filter(created_at__lte=filters.created_to)
    if filters.reference:
        reference = filters.reference
        queryset = queryset.filter(
            Q(internal_reference=reference)
            | Q(idempotency_key=reference)
            | Q(nip_session_id=reference)
            | Q(account_number=reference)
            | Q(account_name__icontains=reference)
        )
    return queryset.order_by("-created_at", "-id")


def payout_get(*, merchant: Merchant, mode: str, payout_id: int) -> Payout:
    """One payout of the merchant in this mode; 404 for another merchant's or mode's."""
    payout = Payout.objects.filter(pk=payout_id, merchant=merchant, mode=mode).first()
    if payout is None:
        raise NotFoundError(PAYOUT_NOT_FOUND_MESSAGE)
    return payout


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
    worker died or the provider could not be reached), oldest first."""
    return list(
        Payout.objects.filter(
            Q(status=PayoutStatus.RESERVED, created_at__lte=now - older_than)
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
        Payout.objects.filter(status=PayoutStatus.RESERVED, created_at__gt=now - older_than),
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
