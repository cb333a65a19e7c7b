"""Collection reads, scoped to the merchant and the key's mode; one query per route."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Prefetch, QuerySet, Window

from collections_app.models import (
    CollectionTransaction,
    PaymentStatus,
    TransactionAttempt,
    TransactionSplitEntry,
)
from core.dates import local_isoformat
from merchants.models import Merchant

MAX_REFERENCE_LENGTH = 40


def _reference_possible(reference: str) -> bool:
    """Whether ``reference`` could name a transaction at all: our references are at most 40
    printable characters, so anything else (NUL, control characters, lone surrogates, which
    no database would even accept in a query) is simply unknown, without a query."""
    return len(reference) <= MAX_REFERENCE_LENGTH and reference.isprintable()


def _transactions(*, merchant: Merchant, mode: str) -> QuerySet[CollectionTransaction]:
    return CollectionTransaction.objects.filter(merchant=merchant, mode=mode).select_related(
        "payment_item__category",
        "payment_item__sub_category",
        "customer",
        "business",
    )


def transaction_get_for_status(
    *, merchant: Merchant, mode: str, reference: str
) -> CollectionTransaction | None:
    """The merchant's transaction with its item, customer and business (one query)."""
    if not _reference_possible(reference):
        return None
    return _transactions(merchant=merchant, mode=mode).filter(reference=reference).first()


def transaction_get_for_search(
    *, merchant: Merchant, mode: str, reference: str
) -> CollectionTransaction | None:
    """As ``transaction_get_for_status`` plus the split entries with subaccount and bank."""
    if not _reference_possible(reference):
        return None
    entries = TransactionSplitEntry.objects.select_related("subaccount__bank").order_by("id")
    return (
        _transactions(merchant=merchant, mode=mode)
        .prefetch_related(Prefetch("split_entries", queryset=entries))
        .filter(reference=reference)
        .first()
    )


def transaction_get(
    *, merchant: Merchant, mode: str, reference: str
) -> CollectionTransaction | None:
    if not _reference_possible(reference):
        return None
    return CollectionTransaction.objects.filter(
        merchant=merchant, mode=mode, reference=reference
    ).first()


def transaction_get_for_checkout(*, reference: str) -> CollectionTransaction | None:
    """The transaction behind a hosted checkout link, with what the page shows (one query).
    Not scoped to a merchant: the unguessable reference in the link is the customer's access."""
    if not _reference_possible(reference):
        return None
    return (
        CollectionTransaction.objects.select_related("merchant", "business", "payment_item")
        .filter(reference=reference)
        .first()
    )


def transaction_attempt_last(*, collection: CollectionTransaction) -> TransactionAttempt | None:
    """The transaction's latest confirmation attempt (the hosted checkout shows a declined
    card's outcome from it)."""
    return TransactionAttempt.objects.filter(transaction_id=collection.pk).order_by("-id").first()


def transaction_get_for_provider(*, mode: str, reference: str) -> CollectionTransaction | None:
    """The transaction a provider's webhook names (by our reference, in the provider's mode)."""
    if not _reference_possible(reference):
        return None
    return CollectionTransaction.objects.filter(mode=mode, reference=reference).first()


@dataclass(frozen=True)
class TransactionsWaiting:
    """Pending transactions not yet past their expiry: how many, and the first to expire."""

    count: int
    next_expires_at: datetime | None = None
    next_reference: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "count": self.count,
            "next_expires_at": local_isoformat(self.next_expires_at) or None,
            "next_transaction": self.next_reference or None,
        }


def transactions_pending_not_due(*, now: datetime) -> TransactionsWaiting:
    """Pending transactions expiring after ``now``; one query (the count through a window)."""
    first = (
        CollectionTransaction.objects.filter(
            payment_status=PaymentStatus.PENDING, expires_at__gt=now
        )
        .annotate(waiting=Window(Count("id")))
        .order_by("expires_at", "id")
        .values_list("waiting", "expires_at", "reference")
        .first()
    )
    if first is None:
        return TransactionsWaiting(count=0)
    count, expires_at, reference = first
    return TransactionsWaiting(count=count, next_expires_at=expires_at, next_reference=reference)
