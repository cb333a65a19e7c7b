"""Refund writes: creating a refund of a paid collection (idempotent on the merchant's key, the
money taken and accounted for in one transaction), sending it to its provider, applying the
provider's answer, and the sweeper that sends or asks again about refunds still pending.

Where the money comes from (``refund_create``), for a refund of ``r`` = ``d + w + f``:

* ``f`` (``fee_returned``): zero unless ``COLLECTION_REFUND_RETURNS_FEE``; then the fee's share
  of the amount refunded, ``round_half_up(F * r / P)`` (the refund that empties the collection
  takes exactly what is left of the fee, so the parts never add up to more than ``F``);
* ``d`` (``deducted_from_settlement``): for a collection not yet settled, what the merchant is
  owed and not yet settled covers first (the next settlement pays that much less);
* ``w`` (``debited_from_wallet``): the rest, from the wallet's available balance (one
  ``refund`` ledger entry); too little there is a 400 and nothing changes.

Platform postings: created ``owed_merchants -d, merchant_credits -w, fees -f,
refunds_pending +r``; processed ``refunds_pending -r, refunds +r``; failed ``refunds_pending
-r, fees +f, merchant_credits +w`` and ``d`` back where it was (``owed_merchants +d`` while no
settlement has deducted it, else ``merchant_credits +d`` with the wallet credited), the
wallet's part back by one ``refund_reversal`` entry.

Locks, always in this order: the merchant's wallet of the mode (``wallet_lock``), then the
collection, then the refund. A settlement locks the wallet first too, so a refund and a
settlement of one merchant and mode never interleave. Provider calls happen outside any
transaction; a send is claimed first (``next_check_at`` is its lease), so two workers never
send one refund twice, and a send whose answer was lost is looked for by our ``refund_id``
before any new send.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from collections_app.models import CollectionTransaction, PaymentStatus
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from core.money import MAX_AMOUNT, TWO_PLACES, format_amount
from refunds import tasks
from refunds.events import refund_event_record
from refunds.models import Refund, RefundStatus
from refunds.providers.base import RefundOutcome, RefundRequest, RefundResult
from refunds.providers.registry import refund_provider_get, refund_provider_name
from settlements.models import PlatformAccount
from settlements.platform_ledger import platform_balances, platform_post
from wallets.models import LedgerEntryType, Wallet
from wallets.services import wallet_collection_credit, wallet_lock, wallet_refund_debit

if TYPE_CHECKING:
    from merchants.models import Merchant

logger = logging.getLogger(__name__)

ZERO = Decimal("0.00")
IDEMPOTENCY_CONFLICT_MESSAGE = "Idempotency key already used for a different refund request"
TRANSACTION_NOT_FOUND_MESSAGE = "Transaction not found"
FULLY_REFUNDED_MESSAGE = "transaction_reference: the transaction is already refunded in full"
PROVIDER_RESPONSES_KEPT = 50
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.1}
DEFAULT_SWEEP_LIMIT = 200


def not_paid_message(status: str) -> str:
    return f"transaction_reference: only a paid transaction can be refunded (this one is {status})"


def exceeds_message(refundable: Decimal) -> str:
    return f"amount: exceeds the refundable amount {format_amount(refundable)}"


@dataclass(frozen=True)
class RefundCreateResult:
    refund: Refund
    duplicate: bool


# --- Create ------------------------------------------------------------------------------------


def refund_fingerprint(*, transaction_reference: str, amount: Decimal | None, reason: str) -> str:
    """SHA-256 of the normalised request: ``"100"`` and ``"100.00"`` are the same refund; no
    amount (the whole remaining amount) is a request of its own."""
    normalised = {
        "transaction_reference": transaction_reference,
        "amount": None if amount is None else format_amount(amount),
        "reason": reason or "",
    }
    encoded = json.dumps(normalised, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()


def refund_id_generate() -> str:
    """``rf_<yyyymmdd>_<20 hex>``: lowercase, digits and ``_`` only (provider-safe)."""
    return f"rf_{timezone.now():%Y%m%d}_{secrets.token_hex(10)}"


def _earlier_refund(*, merchant_id: int, mode: str, idempotency_key: str) -> Refund | None:
    refunds = Refund.objects.filter(
        merchant_id=merchant_id, mode=mode, idempotency_key=idempotency_key
    ).select_related("collection")
    return next(iter(refunds.order_by()[:1]), None)


def _replay_of(earlier: Refund | None, *, fingerprint: str) -> RefundCreateResult | None:
    """The earlier refund with this key (``duplicate=True``), 409 if its request differed, or
    None when the key is new."""
    if earlier is None:
        return None
    if earlier.request_fingerprint != fingerprint:
        raise ConflictError(IDEMPOTENCY_CONFLICT_MESSAGE)
    return RefundCreateResult(refund=earlier, duplicate=True)


def _amount_check(amount: Decimal | None) -> Decimal | None:
    """An amount a caller parsed already (``core.money.parse_amount``), checked again here for
    callers that built the ``Decimal`` themselves: the same rules as a payout's amount."""
    if amount is None:
        return None
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise ApplicationError("amount: must be a decimal amount")
    if amount != amount.quantize(TWO_PLACES):
        raise ApplicationError("amount: must have at most two decimal places")
    if amount <= 0:
        raise ApplicationError("amount: must be greater than zero")
    if amount > MAX_AMOUNT:
        raise ApplicationError(f"amount: must not exceed {MAX_AMOUNT}")
    return amount.quantize(TWO_PLACES)


def refund_fee_returned(
    *, collection: CollectionTransaction, amount: Decimal, fee_returned_before: Decimal
) -> Decimal:
    """The part of our fee a refund of ``amount`` gives back: zero unless
    ``COLLECTION_REFUND_RETURNS_FEE``; then ``round_half_up(F * amount / P)``, and exactly what
    is left of the fee for the refund that empties the collection."""
    if not getattr(settings, "COLLECTION_REFUND_RETURNS_FEE", False):
        return ZERO
    fee, paid = collection.transaction_fee, collection.amount_paid
    fee_left = max(fee - fee_returned_before, ZERO)
    if paid <= 0:
        return ZERO
    if collection.amount_refunded + amount >= paid:
        share = fee_left
    else:
        share = (fee * amount / paid).quantize(TWO_PLACES, rounding=ROUND_HALF_UP)
    return min(share, fee_left, amount)


def refund_create(
    *,
    merchant: Merchant,
    mode: str,
    transaction_reference: str,
    amount: Decimal | None,
    reason: str,
    idempotency_key: str,
    initiated_by: str,
) -> RefundCreateResult:
    """Refunds ``amount`` (default: all that is left) of the merchant's paid collection.

    Idempotent per merchant and mode: the same key with the same parameters answers the
    earlier refund (``duplicate``), with others 409; concurrent requests with one key meet on
    the unique constraint (merchant, mode, key). An unknown reference, or one of another
    merchant or mode, is a 404; a collection that is not paid, an amount above what is left to
    refund or a wallet that does not cover its part is a 400, and nothing changes. The send to
    the provider is queued when the transaction commits.
    """
    reason = (reason or "").strip()
    amount = _amount_check(amount)
    fingerprint = refund_fingerprint(
        transaction_reference=transaction_reference, amount=amount, reason=reason
    )
    replay = _replay_of(
        _earlier_refund(merchant_id=merchant.pk, mode=mode, idempotency_key=idempotency_key),
        fingerprint=fingerprint,
    )
    if replay is not None:
        return replay
    collection = (
        CollectionTransaction.objects.filter(
            reference=transaction_reference, merchant_id=merchant.pk, mode=mode
        )
        .only("pk", "payment_status")
        .first()
    )
    if collection is None:
        raise NotFoundError(TRANSACTION_NOT_FOUND_MESSAGE)
    if collection.payment_status != PaymentStatus.PAID:
        raise ApplicationError(not_paid_message(collection.payment_status))
    wallet_id = _wallet_id(merchant_id=merchant.pk, mode=mode)
    try:
        return _refund_insert(
            merchant_id=merchant.pk,
            mode=mode,
            wallet_id=wallet_id,
            collection_id=collection.pk,
            amount=amount,
            reason=reason,
            idempotency_key=idempotency_key,
            fingerprint=fingerprint,
            initiated_by=initiated_by,
        )
    except IntegrityError:
        # Another request with this key committed first: this one is its replay.
        replay = _replay_of(
            _earlier_refund(merchant_id=merchant.pk, mode=mode, idempotency_key=idempotency_key),
            fingerprint=fingerprint,
        )
        if replay is None:
            raise
        return replay


def _wallet_id(*, merchant_id: int, mode: str) -> int:
    wallet_id = (
        Wallet.objects.filter(merchant_id=merchant_id, mode=mode)
        .values_list("pk", flat=True)
        .first()
    )
    if wallet_id is None:
        raise NotFoundError("Merchant wallet not found")
    return wallet_id


@transaction.atomic
def _refund_insert(
    *,
    merchant_id: int,
    mode: str,
    wallet_id: int,
    collection_id: int,
    amount: Decimal | None,
    reason: str,
    idempotency_key: str,
    fingerprint: str,
    initiated_by: str,
) -> RefundCreateResult:
    wallet = wallet_lock(wallet_id=wallet_id)
    # A request with this key that committed while this one waited for the lock: a replay.
    replay = _replay_of(
        _earlier_refund(merchant_id=merchant_id, mode=mode, idempotency_key=idempotency_key),
        fingerprint=fingerprint,
    )
    if replay is not None:
        return replay
    collection = CollectionTransaction.objects.select_for_update().get(pk=collection_id)
    if collection.payment_status != PaymentStatus.PAID:
        raise ApplicationError(not_paid_message(collection.payment_status))
    refundable = collection.amount_paid - collection.amount_refunded
    if amount is None:
        if refundable <= 0:
            raise ApplicationError(FULLY_REFUNDED_MESSAGE)
        amount = refundable
    elif amount > refundable:
        raise ApplicationError(exceeds_message(refundable))
    fee_returned_before = (
        Refund.objects.filter(collection_id=collection.pk)
        .exclude(status=RefundStatus.FAILED)
        .aggregate(total=Sum("fee_returned"))["total"]
        or ZERO
    )
    fee_returned = refund_fee_returned(
        collection=collection, amount=amount, fee_returned_before=fee_returned_before
    )
    merchant_part = amount - fee_returned
    deducted = ZERO
    if collection.settlement_id is None:
        owed = platform_balances(mode=mode, merchant_id=merchant_id)[PlatformAccount.OWED_MERCHANTS]
        deducted = min(merchant_part, max(owed, ZERO))
    debited = merchant_part - deducted
    refund_id = refund_id_generate()
    if debited > 0:
        wallet_refund_debit(
            wallet=wallet,
            amount=debited,
            reference=refund_id,
            description=f"refund of {collection.reference}",
        )
    now = timezone.now()
    refund = Refund.objects.create(
        refund_id=refund_id,
        merchant_id=merchant_id,
        mode=mode,
        collection=collection,
        currency=collection.currency,
        amount=amount,
        fee_returned=fee_returned,
        deducted_from_settlement=deducted,
        debited_from_wallet=debited,
        reason=reason,
        idempotency_key=idempotency_key,
        request_fingerprint=fingerprint,
        status=RefundStatus.PENDING,
        provider_name=refund_provider_name(mode),
        initiated_by=initiated_by[:150],
        next_check_at=now,
    )
    collection.amount_refunded += amount
    collection.save(update_fields=["amount_refunded", "updated_at"])
    platform_post(
        mode=mode,
        group=f"refund:{refund_id}",
        postings={
            PlatformAccount.OWED_MERCHANTS: -deducted,
            PlatformAccount.MERCHANT_CREDITS: -debited,
            PlatformAccount.FEES: -fee_returned,
            PlatformAccount.REFUNDS_PENDING: amount,
        },
        merchant_id=merchant_id,
        collection_id=collection.pk,
        refund_id=refund.pk,
        description="refund created",
    )
    refund_event_record(refund=refund, transaction_reference=collection.reference)
    refund_pk = refund.pk
    transaction.on_commit(lambda: refund_send_enqueue(refund_id=refund_pk))
    logger.info(
        "refund %s of %s: %s (settlement %s, wallet %s, fee %s)",
        refund_id,
        collection.reference,
        amount,
        deducted,
        debited,
        fee_returned,
    )
    return RefundCreateResult(refund=refund, duplicate=False)


def refund_send_enqueue(*, refund_id: int) -> bool:
    """Queues the send of one refund. A broker outage must not fail the request: the refund
    waits for the sweeper (``refunds_check_due``)."""
    try:
        tasks.refund_send_task.apply_async(args=[refund_id], retry_policy=PUBLISH_RETRY_POLICY)  # type: ignore[arg-type]  # celery takes any sequence; celery-types say tuple
    except Exception:
        logger.exception("could not enqueue the send of refund %s; the sweeper will", refund_id)
        return False
    return True


# --- Sending and the provider's answers --------------------------------------------------------


def _refund_request(refund: Refund) -> RefundRequest:
    collection = refund.collection
    return RefundRequest(
        refund_id=refund.refund_id,
        transaction_reference=collection.reference,
        gateway_reference=collection.gateway_reference or "",
        amount=refund.amount,
        currency=refund.currency,
        reason=refund.reason,
    )


def _send_lease() -> timedelta:
    return timedelta(seconds=getattr(settings, "REFUND_SEND_LEASE_SECONDS", 120))


def refund_check_delay(check_count: int) -> timedelta:
    """The wait before the next check of a pending refund: ``REFUND_REQUERY_BASE_SECONDS``
    doubled at each check, at most ``REFUND_REQUERY_MAX_SECONDS``."""
    base = getattr(settings, "REFUND_REQUERY_BASE_SECONDS", 60)
    cap = getattr(settings, "REFUND_REQUERY_MAX_SECONDS", 6 * 3600)
    exponent = min(max(check_count - 1, 0), 30)
    return timedelta(seconds=min(base * 2**exponent, cap))


def _send_claim(*, refund: Refund, now: datetime) -> bool:
    """Claims the send of a refund not yet acknowledged by its provider, for the lease; False
    when it is not due or another worker holds it."""
    claimed = (
        Refund.objects.filter(pk=refund.pk, status=RefundStatus.PENDING, provider_reference="")
        .filter(Q(next_check_at__isnull=True) | Q(next_check_at__lte=now))
        .update(next_check_at=now + _send_lease(), sent_at=Coalesce("sent_at", now))
    )
    return claimed == 1


def refund_send(*, refund_id: int) -> Refund | None:
    """Sends a pending refund to its provider, or asks about it, and applies the answer.

    Idempotent: a refund that is final is left alone. One the provider acknowledged (it has a
    ``provider_reference``) is read by that id. One not acknowledged is claimed first; if an
    earlier send may have reached the provider, the provider is asked for a refund with our
    ``refund_id`` before it is sent again."""
    refund = Refund.objects.select_related("collection").filter(pk=refund_id).first()
    if refund is None or refund.status != RefundStatus.PENDING:
        return refund
    provider = refund_provider_get(refund.provider_name)
    request = _refund_request(refund)
    if refund.provider_reference:
        result = provider.fetch(request, provider_reference=refund.provider_reference)
        return refund_answer_apply(refund_id=refund.pk, result=result)
    if not _send_claim(refund=refund, now=timezone.now()):
        return refund
    first_send = refund.sent_at is None
    looked_up: RefundResult | None = None
    if not first_send:
        looked_up = provider.find(request)
        if looked_up.outcome != RefundOutcome.NOT_FOUND:
            return refund_answer_apply(refund_id=refund.pk, result=looked_up)
    result = provider.send(request)
    if looked_up is not None:
        result = RefundResult(
            outcome=result.outcome,
            provider_reference=result.provider_reference,
            message=result.message,
            raw=looked_up.raw + result.raw,
        )
    return refund_answer_apply(refund_id=refund.pk, result=result, first_send=first_send)


def refund_answer_apply(
    *, refund_id: int, result: RefundResult, first_send: bool = False
) -> Refund:
    """Applies one provider answer to a pending refund under the locks (wallet, collection,
    refund): processed or failed end it; anything else keeps it pending until its next check.
    A refund already final is left as it is (its answers are not recorded again)."""
    keys = Refund.objects.filter(pk=refund_id).values("merchant_id", "mode", "collection_id").get()
    with transaction.atomic():
        wallet = wallet_lock(
            wallet_id=_wallet_id(merchant_id=keys["merchant_id"], mode=keys["mode"])
        )
        collection = CollectionTransaction.objects.select_for_update().get(pk=keys["collection_id"])
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        if refund.status != RefundStatus.PENDING:
            return refund
        now = timezone.now()
        refund.provider_responses = (
            list(refund.provider_responses) + [exchange.as_dict() for exchange in result.raw]
        )[-PROVIDER_RESPONSES_KEPT:]
        if result.provider_reference and not refund.provider_reference:
            refund.provider_reference = result.provider_reference[:100]
        fields = ["provider_responses", "provider_reference", "updated_at"]
        if result.outcome == RefundOutcome.PROCESSED:
            _refund_processed(refund=refund, collection=collection, now=now)
            fields += ["status", "processed_at"]
        elif result.outcome == RefundOutcome.FAILED:
            _refund_failed(
                refund=refund,
                collection=collection,
                wallet=wallet,
                reason=result.message or "Refund failed at the provider",
            )
            fields += ["status", "failure_reason"]
        elif result.outcome == RefundOutcome.NOT_SENT:
            if first_send:
                refund.sent_at = None
            refund.next_check_at = now + refund_check_delay(1)
            fields += ["sent_at", "next_check_at"]
        else:
            refund.check_count += 1
            refund.next_check_at = now + refund_check_delay(refund.check_count)
            fields += ["check_count", "next_check_at"]
        refund.save(update_fields=fields)
        if refund.status != RefundStatus.PENDING:
            refund_event_record(refund=refund, transaction_reference=collection.reference)
    logger.info("refund %s: provider answered %s", refund.refund_id, result.outcome)
    return refund


def _refund_processed(*, refund: Refund, collection: CollectionTransaction, now: datetime) -> None:
    refund.status = RefundStatus.PROCESSED
    refund.processed_at = now
    platform_post(
        mode=refund.mode,
        group=f"refund-processed:{refund.refund_id}",
        postings={
            PlatformAccount.REFUNDS_PENDING: -refund.amount,
            PlatformAccount.REFUNDS: refund.amount,
        },
        merchant_id=refund.merchant_id,
        collection_id=collection.pk,
        refund_id=refund.pk,
        description="refund processed",
    )


def _refund_failed(
    *, refund: Refund, collection: CollectionTransaction, wallet: Wallet, reason: str
) -> None:
    """Puts each part of a failed refund back where it came from; the collection may be
    refunded again by that much."""
    refund.status = RefundStatus.FAILED
    refund.failure_reason = reason[:255]
    deducted, debited = refund.deducted_from_settlement, refund.debited_from_wallet
    deduction_settled = refund.settlement_id is not None
    to_wallet = debited + (deducted if deduction_settled else ZERO)
    if to_wallet > 0:
        wallet_collection_credit(
            wallet=wallet,
            entry_type=LedgerEntryType.REFUND_REVERSAL,
            amount=to_wallet,
            reference=refund.refund_id,
            description=f"failed refund of {collection.reference}",
        )
    collection.amount_refunded -= refund.amount
    collection.save(update_fields=["amount_refunded", "updated_at"])
    platform_post(
        mode=refund.mode,
        group=f"refund-failed:{refund.refund_id}",
        postings={
            PlatformAccount.REFUNDS_PENDING: -refund.amount,
            PlatformAccount.FEES: refund.fee_returned,
            PlatformAccount.MERCHANT_CREDITS: to_wallet,
            PlatformAccount.OWED_MERCHANTS: ZERO if deduction_settled else deducted,
        },
        merchant_id=refund.merchant_id,
        collection_id=collection.pk,
        refund_id=refund.pk,
        description="refund failed",
    )


def refunds_provider_hint(*, provider_name: str, transaction_reference: str) -> list[Refund]:
    """A provider told us (a webhook) that a refund of one of its transactions changed: every
    refund of that transaction it carries that is still pending is asked about at once (the
    hint itself is never applied). Idempotent: final refunds are left alone, and one not yet
    acknowledged by the provider is looked for only when its next check is due (never while
    another worker may be sending it)."""
    pending = Refund.objects.filter(
        provider_name=provider_name,
        status=RefundStatus.PENDING,
        collection__reference=transaction_reference,
    ).values_list("pk", flat=True)
    checked = []
    for refund_id in list(pending):
        refund = refund_send(refund_id=refund_id)
        if refund is not None:
            checked.append(refund)
    return checked


# --- The sweeper -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RefundSweepReport:
    due: int
    enqueued: int


def refunds_check_due(
    *, now: datetime | None = None, limit: int = DEFAULT_SWEEP_LIMIT
) -> RefundSweepReport:
    """Beat: queues a send (or a requery) of every pending refund whose next check has come,
    oldest due first: ones whose send task was lost (not sent a lease after their creation),
    ones the provider has not answered for yet, ones still pending at the provider (with
    backoff)."""
    now = now or timezone.now()
    due = list(
        Refund.objects.filter(status=RefundStatus.PENDING)
        .filter(Q(next_check_at__isnull=True) | Q(next_check_at__lte=now))
        # A refund never sent is left to the send queued when it was created for one lease:
        # only then is that task taken for lost.
        .exclude(sent_at__isnull=True, created_at__gt=now - _send_lease())
        .order_by("next_check_at")
        .values_list("pk", flat=True)[:limit]
    )
    enqueued = sum(1 for refund_id in due if refund_send_enqueue(refund_id=refund_id))
    if due:
        logger.info("refund sweeper: %s due, %s queued", len(due), enqueued)
    return RefundSweepReport(due=len(due), enqueued=enqueued)


def refund_summary(refund: Refund) -> dict[str, Any]:
    """The money fields of a refund, for the audit trail."""
    return {
        "refund_id": refund.refund_id,
        "amount": refund.amount,
        "fee_returned": refund.fee_returned,
        "deducted_from_settlement": refund.deducted_from_settlement,
        "debited_from_wallet": refund.debited_from_wallet,
        "status": refund.status,
    }
