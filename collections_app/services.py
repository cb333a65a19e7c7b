"""Collection writes: customers, transaction initialization, confirmation and expiry.

``payment_status`` moves only through ``_status_transition``, which moves the transaction with
``collection_transition`` (the one ``ALLOWED_TRANSITIONS`` map, in
``collections_app.state_machine``) and then calls ``transaction_status_changed``: it records the
event and its deliveries in the same database transaction (``collections_app.events``). Final
states never change: a late confirmation is recorded as a ``TransactionAttempt`` with
``applied=False`` and leaves the transaction as it was.

In test mode the hosted checkout takes the payment (its sandbox forms call
``transaction_confirm``; a declined card leaves the transaction pending until the decline that
reaches ``COLLECTION_CARD_ATTEMPT_LIMIT``). In live mode initialization starts the provider's
checkout (``COLLECTION_PROVIDER_BY_MODE``, Paystack by default), where the customer may retry
cards on the provider's page, and the outcome is confirmed only by
``transaction_provider_verify``, after the provider's webhook or the customer's return.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone

from collections_app.events import transaction_event_record
from collections_app.fees import collection_fee_calculate, collection_fee_schedule_get_active
from collections_app.models import (
    Channel,
    CollectionTransaction,
    ConfirmationSource,
    Customer,
    PaymentStatus,
    TransactionAttempt,
    TransactionSplitEntry,
)
from collections_app.providers.base import (
    CheckoutRequest,
    CheckoutSession,
    ProviderExchange,
    ProviderRefusedError,
    ProviderUnavailableError,
)
from collections_app.providers.registry import (
    SANDBOX,
    collection_provider_get,
    collection_provider_name,
)
from collections_app.selectors import TransactionsWaiting, transactions_pending_not_due
from collections_app.state_machine import collection_transition, transition_allowed
from core.dates import local_text
from core.exceptions import ApplicationError, ConflictError, ServiceUnavailableError
from core.money import CURRENCY_NGN, format_amount
from core.ssrf import UnsafeURLError, url_check_public
from merchants.models import Merchant
from payment_items.models import PaymentItem, Subaccount
from payment_items.selectors import payment_item_get_payable, subaccounts_get_by_codes
from payment_items.splits import SplitShareAmount, transaction_split_breakdown
from settlements.platform_ledger import collection_paid_post

logger = logging.getLogger(__name__)

REFERENCE_PREFIX = "TXN_"
REFERENCE_RANDOM_LENGTH = 20
CUSTOMER_TAG_PREFIX = "CUS_"
SANDBOX_GATEWAY = "sandbox"
PROVIDER_RESPONSES_KEPT = 20
PROVIDER_MESSAGE_KEY = "provider_message"  # meta_data: why the provider refused the checkout
PROVIDER_REFUSED_PREFIX = "The payment provider refused the transaction: "
SANDBOX_ACCOUNT_CHANNELS = frozenset({Channel.BANK, Channel.BANK_TRANSFER})
_REFERENCE_ALPHABET = string.ascii_uppercase + string.digits

CONFIRMATION_OUTCOMES = (PaymentStatus.PAID, PaymentStatus.FAILED, PaymentStatus.CANCELLED)


# --- inputs and results ------------------------------------------------------------------------


@dataclass(frozen=True)
class CustomerInfo:
    email: str
    phone_number: str
    first_name: str
    last_name: str


@dataclass(frozen=True)
class SubaccountAmount:
    account_code: str
    amount: int


@dataclass(frozen=True)
class InitializeResult:
    transaction: CollectionTransaction
    created: bool


@dataclass(frozen=True)
class ConfirmationResult:
    """``attempts_left`` is set when a declined card was recorded but left the transaction
    pending (``applied`` is then false): how many more cards the customer may try."""

    transaction: CollectionTransaction
    attempt: TransactionAttempt
    applied: bool
    attempts_left: int | None = None


@dataclass(frozen=True)
class ExpirySummary:
    """What an expiry run found due, expired and left pending: the one home of the wording of
    ``expire_transactions`` and of its ``--json`` object."""

    due: int
    expired: int
    waiting: TransactionsWaiting | None = None

    def summary(self) -> str:
        text = (
            f"Expired {self.expired} of {self.due} due pending transaction(s) (expiry window "
            f"{settings.COLLECTION_TRANSACTION_EXPIRY_HOURS} h)."
        )
        waiting = self.waiting
        if waiting is None:
            return text
        if not waiting.count:
            return f"{text} Waiting: no pending transaction."
        return (
            f"{text} Waiting: {waiting.count} pending transaction(s), next expires at "
            f"{local_text(waiting.next_expires_at)} ({waiting.next_reference})."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "due": self.due,
            "expired": self.expired,
            "expiry_window_hours": settings.COLLECTION_TRANSACTION_EXPIRY_HOURS,
            "waiting": None if self.waiting is None else self.waiting.as_dict(),
        }


# --- status changes -----------------------------------------------------------------------------


def transaction_status_changed(*, collection: CollectionTransaction, previous_status: str) -> None:
    """Called inside the database transaction after every ``payment_status`` change: records
    the one event for the change and its deliveries (enqueued when the transaction commits)."""
    logger.info(
        "collection transaction %s: %s -> %s",
        collection.reference,
        previous_status,
        collection.payment_status,
    )
    transaction_event_record(collection=collection, previous_status=previous_status)


def _status_transition(
    *,
    collection: CollectionTransaction,
    to_status: str,
    now: datetime,
    changes: dict[str, Any] | None = None,
) -> None:
    """Moves a locked transaction to ``to_status`` (with ``changes``), saves, calls the hook.
    Raises ``IllegalTransitionError`` (409) when the state machine does not allow the move."""
    previous_status = collection.payment_status
    collection_transition(collection=collection, to_status=to_status)
    collection.status_changed_at = now
    fields = ["payment_status", "status_changed_at", "updated_at"]
    for name, value in (changes or {}).items():
        setattr(collection, name, value)
        fields.append(name)
    collection.save(update_fields=fields)
    if to_status == PaymentStatus.PAID:
        _platform_collected_post(collection)
    transaction_status_changed(collection=collection, previous_status=previous_status)


def _platform_collected_post(collection: CollectionTransaction) -> None:
    """Accounts for a paid collection on the platform ledger (fee, subaccount shares, the
    merchant's part), in the transaction that marks it paid."""
    shares = TransactionSplitEntry.objects.filter(transaction_id=collection.pk).aggregate(
        total=Sum("share")
    )["total"] or Decimal("0.00")
    collection_paid_post(
        mode=collection.mode,
        merchant_id=collection.merchant_id,
        collection_id=collection.pk,
        reference=collection.reference,
        amount_paid=collection.amount_paid,
        fee=collection.transaction_fee,
        shares=shares,
    )


# --- customers ---------------------------------------------------------------------------------


def _customer_tag_generate() -> str:
    return CUSTOMER_TAG_PREFIX + "".join(
        secrets.choice(string.ascii_lowercase + string.digits) for _ in range(16)
    )


@transaction.atomic
def customer_upsert(*, merchant: Merchant, mode: str, customer_info: CustomerInfo) -> Customer:
    """The merchant's customer with this email (any case) in this mode, created if new; names
    and phone number are updated to the latest ones given. The ``customer_tag`` never changes."""
    details = {
        "phone_number": customer_info.phone_number,
        "first_name": customer_info.first_name,
        "last_name": customer_info.last_name,
    }
    for _ in range(2):
        customer = (
            Customer.objects.select_for_update()
            .filter(merchant=merchant, mode=mode, email__iexact=customer_info.email)
            .first()
        )
        if customer is not None:
            changed = [name for name, value in details.items() if getattr(customer, name) != value]
            if changed:
                for name in changed:
                    setattr(customer, name, details[name])
                customer.save(update_fields=[*changed, "updated_at"])
            return customer
        try:
            with transaction.atomic():
                return Customer.objects.create(
                    merchant=merchant,
                    mode=mode,
                    email=customer_info.email,
                    customer_tag=_customer_tag_generate(),
                    **details,
                )
        except IntegrityError:
            continue  # created concurrently: read it again
    raise ApplicationError("Customer could not be saved; please retry", status=409)


# --- initialize --------------------------------------------------------------------------------


def _reference_generate() -> str:
    return REFERENCE_PREFIX + "".join(
        secrets.choice(_REFERENCE_ALPHABET) for _ in range(REFERENCE_RANDOM_LENGTH)
    )


def _virtual_account_number_generate() -> str:
    for _ in range(10):
        number = str(secrets.randbelow(9 * 10**9) + 10**9)
        if not CollectionTransaction.objects.filter(virtual_account_number=number).exists():
            return number
    raise ApplicationError("Could not allocate a payment account; please retry", status=503)


def _request_fingerprint(
    *,
    payment_item_id: int,
    channel: str,
    amount: Decimal,
    customer_info: CustomerInfo,
    callback_url: str,
    subaccounts: list[SubaccountAmount] | None,
) -> str:
    canonical = {
        "payment_item_id": payment_item_id,
        "channel": channel,
        "amount": format_amount(amount),
        "customer_info": {
            "email": customer_info.email.lower(),
            "phone_number": customer_info.phone_number,
            "first_name": customer_info.first_name,
            "last_name": customer_info.last_name,
        },
        "callback_url": callback_url,
        "subaccounts": (
            None
            if subaccounts is None
            else [[entry.account_code, entry.amount] for entry in subaccounts]
        ),
    }
    body = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _replay(*, existing: CollectionTransaction, fingerprint: str) -> InitializeResult:
    if existing.request_fingerprint != fingerprint:
        raise ConflictError(
            "transaction_reference has already been used for a different transaction"
        )
    return InitializeResult(transaction=existing, created=False)


def _callback_url_check(callback_url: str) -> None:
    try:
        url_check_public(callback_url)
    except UnsafeURLError as error:
        raise ApplicationError(f"callback_url: {error}") from error


def _subaccount_breakdown(
    *, merchant: Merchant, mode: str, amount: Decimal, subaccounts: list[SubaccountAmount]
) -> list[SplitShareAmount]:
    codes = [entry.account_code for entry in subaccounts]
    duplicates = sorted({code for code in codes if codes.count(code) > 1})
    if duplicates:
        raise ApplicationError(f"subaccounts: duplicate account_code {', '.join(duplicates)}")
    found: dict[str, Subaccount] = subaccounts_get_by_codes(
        merchant=merchant, mode=mode, account_codes=codes
    )
    unknown = [code for code in codes if code not in found]
    if unknown:
        raise ApplicationError(f"subaccounts: unknown account_code {', '.join(unknown)}")
    total = sum((Decimal(entry.amount) for entry in subaccounts), Decimal("0"))
    if total != amount:
        raise ApplicationError(
            f"subaccounts: the amounts must sum to the transaction amount {format_amount(amount)}"
            f" (they sum to {format_amount(total)})"
        )
    return [
        SplitShareAmount(subaccount=found[entry.account_code], share=Decimal(entry.amount))
        for entry in subaccounts
    ]


def transaction_initialize(
    *,
    merchant: Merchant,
    mode: str,
    payment_item_id: int,
    transaction_reference: str,
    channel: str,
    amount: Decimal,
    customer_info: CustomerInfo,
    callback_url: str,
    subaccounts: list[SubaccountAmount] | None = None,
) -> InitializeResult:
    """Creates a pending collection transaction, or returns the one already created with the
    same ``transaction_reference`` and identical parameters (409 when they differ).

    In live mode the provider's checkout is started with no database transaction or lock open:
    the transaction is committed first (pending, no ``authorization_url``), the provider is
    called, and its answer is applied in a second short transaction.

    * Refused by the provider (400): the transaction becomes ``failed`` with the provider's
      message in ``meta_data["provider_message"]``; a replay answers the same refusal without
      calling the provider again.
    * Provider unreachable (503, "retry with the same transaction_reference"): the transaction
      stays ``pending`` without an ``authorization_url``; a replay calls the provider again,
      under a new reference (the first may exist at the provider without our knowing), and
      attaches its checkout. Unretried, it expires like any pending transaction.

    Concurrent calls for the same transaction may each call the provider; the first answer
    applied is kept, and every call returns it.
    """
    fingerprint = _request_fingerprint(
        payment_item_id=payment_item_id,
        channel=channel,
        amount=amount,
        customer_info=customer_info,
        callback_url=callback_url,
        subaccounts=subaccounts,
    )
    result = _transaction_record(
        merchant=merchant,
        mode=mode,
        payment_item_id=payment_item_id,
        transaction_reference=transaction_reference,
        fingerprint=fingerprint,
        channel=channel,
        amount=amount,
        customer_info=customer_info,
        callback_url=callback_url,
        subaccounts=subaccounts,
    )
    collection = result.transaction
    refusal = _initialization_refusal(collection)
    if refusal is not None:
        raise ApplicationError(f"{PROVIDER_REFUSED_PREFIX}{refusal}")
    if not _awaits_provider_checkout(collection):
        return result
    return _provider_checkout_attach(collection=collection, created=result.created)


@transaction.atomic
def _transaction_record(
    *,
    merchant: Merchant,
    mode: str,
    payment_item_id: int,
    transaction_reference: str,
    fingerprint: str,
    channel: str,
    amount: Decimal,
    customer_info: CustomerInfo,
    callback_url: str,
    subaccounts: list[SubaccountAmount] | None,
) -> InitializeResult:
    """The existing transaction for the reference (a replay), or a new pending one with its
    split entries; in test mode complete with its checkout link or payment instructions."""
    existing = CollectionTransaction.objects.filter(
        merchant=merchant, mode=mode, client_reference=transaction_reference
    ).first()
    if existing is not None:
        return _replay(existing=existing, fingerprint=fingerprint)

    item: PaymentItem | None = payment_item_get_payable(
        merchant=merchant, mode=mode, payment_item_id=payment_item_id
    )
    if item is None:
        raise ApplicationError("Payment item not found")
    if not item.is_variable_amount and amount != item.amount:
        raise ApplicationError("Payment amount does not match")
    _callback_url_check(callback_url)

    split_code = ""
    if subaccounts is not None:
        breakdown = _subaccount_breakdown(
            merchant=merchant, mode=mode, amount=amount, subaccounts=subaccounts
        )
    elif item.transaction_split is not None and item.transaction_split.is_active:
        breakdown = transaction_split_breakdown(split=item.transaction_split, amount=amount)
        split_code = item.transaction_split.transaction_split_code
    else:
        breakdown = []

    fee = collection_fee_calculate(amount=amount, schedule=collection_fee_schedule_get_active())
    customer = customer_upsert(merchant=merchant, mode=mode, customer_info=customer_info)
    now = timezone.now()
    reference = _reference_generate()
    virtual_account: dict[str, Any] = {}
    meta_data: dict[str, Any] | None = None
    authorization_url: str | None = f"{settings.CHECKOUT_BASE_URL}/checkout/{reference}"
    if collection_provider_name(mode) != SANDBOX:
        authorization_url = None  # the provider's, attached once it answers
    elif channel in SANDBOX_ACCOUNT_CHANNELS:
        # The sandbox account the hosted checkout shows for bank and bank-transfer payments.
        virtual_account = {
            "virtual_account_number": _virtual_account_number_generate(),
            "virtual_account_name": item.business.business_name[:150],
            "virtual_bank_name": settings.COLLECTION_VIRTUAL_ACCOUNT_BANK_NAME,
        }
        if channel == Channel.BANK_TRANSFER:
            authorization_url = None
            meta_data = {
                "payment_instructions": {
                    "account_number": virtual_account["virtual_account_number"],
                    "bank_name": virtual_account["virtual_bank_name"],
                    "account_name": virtual_account["virtual_account_name"],
                    "amount": format_amount(amount + fee),
                }
            }
    try:
        with transaction.atomic():
            created = CollectionTransaction.objects.create(
                merchant=merchant,
                mode=mode,
                reference=reference,
                client_reference=transaction_reference,
                request_fingerprint=fingerprint,
                payment_item=item,
                business=item.business,
                customer=customer,
                channel=channel,
                amount=amount,
                transaction_fee=fee,
                amount_to_be_paid=amount + fee,
                callback_url=callback_url,
                authorization_url=authorization_url,
                transaction_split_code=split_code,
                meta_data=meta_data,
                provider_responses=[],
                initiation_time=now,
                expires_at=now + timedelta(hours=settings.COLLECTION_TRANSACTION_EXPIRY_HOURS),
                **virtual_account,
            )
    except IntegrityError:
        existing = CollectionTransaction.objects.filter(
            merchant=merchant, mode=mode, client_reference=transaction_reference
        ).first()
        if existing is None:
            raise
        return _replay(existing=existing, fingerprint=fingerprint)
    TransactionSplitEntry.objects.bulk_create(
        TransactionSplitEntry(transaction=created, subaccount=entry.subaccount, share=entry.share)
        for entry in breakdown
        if entry.share > 0
    )
    return InitializeResult(transaction=created, created=True)


def _awaits_provider_checkout(collection: CollectionTransaction) -> bool:
    """A live transaction still pending without the provider's checkout."""
    return (
        collection.payment_status == PaymentStatus.PENDING
        and not collection.authorization_url
        and collection_provider_name(collection.mode) != SANDBOX
    )


def _initialization_refusal(collection: CollectionTransaction) -> str | None:
    """The provider's message when it refused to start this transaction's checkout."""
    if collection.payment_status != PaymentStatus.FAILED or collection.authorization_url:
        return None
    message = (collection.meta_data or {}).get(PROVIDER_MESSAGE_KEY)
    return str(message) if message is not None else None


def _provider_checkout_attach(
    *, collection: CollectionTransaction, created: bool
) -> InitializeResult:
    """Starts the provider's checkout for a committed pending transaction and applies the
    answer. Runs with no database transaction open: the provider's latency holds no lock and
    no connection in a transaction."""
    provider_name = collection_provider_name(collection.mode)
    # The first attempt uses the transaction's reference; a retry a new one, because the
    # provider may have registered the first although its answer never arrived.
    reference = collection.reference if created else _reference_generate()
    try:
        session = _provider_checkout_start(
            provider_name=provider_name,
            reference=reference,
            client_reference=collection.client_reference,
            email=collection.customer.email,
            amount_to_be_paid=collection.amount_to_be_paid,
            channel=collection.channel,
        )
    except ProviderUnavailableError as error:
        logger.warning(
            "collection provider %s initialize of %s failed: %s",
            provider_name,
            collection.reference,
            error,
        )
        current, _ = _checkout_answer_apply(collection_id=collection.pk, exchanges=error.raw)
        if current.authorization_url:
            return InitializeResult(transaction=current, created=False)
        raise ServiceUnavailableError(
            "The payment provider is unavailable; retry with the same transaction_reference"
        ) from error
    except ProviderRefusedError as error:
        current, _ = _checkout_answer_apply(
            collection_id=collection.pk,
            exchanges=error.raw,
            refusal=str(error),
            gateway_used=provider_name,
        )
        if current.authorization_url:
            return InitializeResult(transaction=current, created=False)
        raise ApplicationError(
            f"{PROVIDER_REFUSED_PREFIX}{_initialization_refusal(current) or error}"
        ) from error
    current, applied = _checkout_answer_apply(
        collection_id=collection.pk,
        exchanges=session.raw,
        reference=reference,
        authorization_url=session.authorization_url,
    )
    refusal = _initialization_refusal(current)
    if refusal is not None:
        raise ApplicationError(f"{PROVIDER_REFUSED_PREFIX}{refusal}")
    return InitializeResult(transaction=current, created=applied)


@transaction.atomic
def _checkout_answer_apply(
    *,
    collection_id: int,
    exchanges: tuple[ProviderExchange, ...],
    reference: str | None = None,
    authorization_url: str | None = None,
    refusal: str | None = None,
    gateway_used: str = "",
) -> tuple[CollectionTransaction, bool]:
    """Records the provider's raw answer and, while the transaction still awaits its checkout,
    applies it: the checkout (with the reference it was started under) or the refusal. Returns
    the transaction and whether this answer was applied."""
    locked = CollectionTransaction.objects.select_for_update().get(pk=collection_id)
    kept = [*(locked.provider_responses or []), *(e.as_dict() for e in exchanges)]
    locked.provider_responses = kept[-PROVIDER_RESPONSES_KEPT:]
    fields = ["provider_responses", "updated_at"]
    awaiting = locked.payment_status == PaymentStatus.PENDING and not locked.authorization_url
    if awaiting and authorization_url is not None and reference is not None:
        locked.reference = reference
        locked.authorization_url = authorization_url
        locked.save(update_fields=[*fields, "reference", "authorization_url"])
        return locked, True
    if awaiting and refusal is not None:
        _status_transition(
            collection=locked,
            to_status=PaymentStatus.FAILED,
            now=timezone.now(),
            changes={
                "provider_responses": locked.provider_responses,
                "gateway_used": gateway_used,
                "meta_data": {**(locked.meta_data or {}), PROVIDER_MESSAGE_KEY: refusal},
            },
        )
        return locked, True
    locked.save(update_fields=fields)
    return locked, False


def _provider_checkout_start(
    *,
    provider_name: str,
    reference: str,
    client_reference: str,
    email: str,
    amount_to_be_paid: Decimal,
    channel: str,
) -> CheckoutSession:
    """Starts the live provider's checkout under ``reference``; no database work. Raises
    ``ProviderUnavailableError`` or ``ProviderRefusedError`` (with the raw exchanges)."""
    provider = collection_provider_get(provider_name)
    return provider.initialize(
        CheckoutRequest(
            reference=reference,
            email=email,
            amount=amount_to_be_paid,
            currency=CURRENCY_NGN,
            channel=channel,
            return_url=f"{settings.CHECKOUT_BASE_URL}/checkout/{reference}/return",
            metadata={"client_reference": client_reference},
        )
    )


# --- confirmation and expiry -------------------------------------------------------------------


@transaction.atomic
def transaction_confirm(
    *,
    collection: CollectionTransaction,
    outcome: str,
    gateway_reference: str | None = None,
    gateway_used: str = SANDBOX_GATEWAY,
    source: str = ConfirmationSource.TEST_HELPER,
    amount_paid: Decimal | None = None,
    meta_data: dict[str, Any] | None = None,
    attempt_limit: int | None = None,
) -> ConfirmationResult:
    """Applies a payment outcome (``paid``, ``failed`` or ``cancelled``) from any source: the
    test helper, the hosted checkout, a provider webhook or verification.

    Every call is recorded as a ``TransactionAttempt`` and counted in ``no_of_attempts``. It is
    applied only to a pending transaction (and, for ``paid`` with ``amount_paid`` given, only
    when that equals ``amount_to_be_paid``); otherwise it is recorded with ``applied=False`` and
    nothing else changes. ``meta_data`` (for example a card's brand and last four digits) is
    merged into the transaction's ``meta_data`` when applied.

    With ``attempt_limit`` (the hosted checkout's card form), a ``failed`` outcome is a declined
    card the customer may follow with another: while ``no_of_attempts`` (this attempt included)
    is below the limit it is recorded with ``applied=False`` and the transaction stays pending
    (no event; ``attempts_left`` in the result); the decline that reaches the limit fails the
    transaction. The count changes under the transaction's row lock.
    """
    if outcome not in CONFIRMATION_OUTCOMES:
        raise ApplicationError("outcome must be one of paid, failed, cancelled")
    locked = CollectionTransaction.objects.select_for_update().get(pk=collection.pk)
    status_before = locked.payment_status
    locked.no_of_attempts += 1
    note = ""
    attempts_left: int | None = None
    if not transition_allowed(from_status=status_before, to_status=outcome):
        note = f"transaction was already {status_before}"
    elif (
        outcome == PaymentStatus.PAID
        and amount_paid is not None
        and amount_paid != locked.amount_to_be_paid
    ):
        note = f"amount paid {format_amount(amount_paid)} does not match amount_to_be_paid"
    elif (
        outcome == PaymentStatus.FAILED
        and attempt_limit is not None
        and locked.no_of_attempts < attempt_limit
    ):
        attempts_left = attempt_limit - locked.no_of_attempts
        note = (
            f"declined (attempt {locked.no_of_attempts} of {attempt_limit}); "
            f"the transaction stays pending for another try"
        )
    applied = not note
    attempt = TransactionAttempt.objects.create(
        transaction=locked,
        outcome=outcome,
        source=source,
        gateway_reference=gateway_reference,
        gateway_used=gateway_used,
        amount_paid=amount_paid,
        status_before=status_before,
        applied=applied,
        note=note,
        meta=meta_data or None,
    )
    if applied:
        now = timezone.now()
        changes: dict[str, Any] = {
            "no_of_attempts": locked.no_of_attempts,
            "gateway_reference": gateway_reference,
            "gateway_used": gateway_used,
        }
        if meta_data:
            changes["meta_data"] = {**(locked.meta_data or {}), **meta_data}
        if outcome == PaymentStatus.PAID:
            changes["paid_at"] = now
            changes["amount_paid"] = locked.amount_to_be_paid
        _status_transition(collection=locked, to_status=outcome, now=now, changes=changes)
    else:
        if attempts_left is None:
            logger.warning(
                "collection transaction %s: %s confirmation from %s not applied (%s)",
                locked.reference,
                outcome,
                source,
                note,
            )
        else:
            logger.info("collection transaction %s: %s", locked.reference, note)
        locked.save(update_fields=["no_of_attempts", "updated_at"])
    return ConfirmationResult(
        transaction=locked, attempt=attempt, applied=applied, attempts_left=attempts_left
    )


@transaction.atomic
def transaction_expire(*, transaction_id: int, now: datetime | None = None) -> bool:
    """Expires the transaction if it is still pending and past ``expires_at``."""
    now = now or timezone.now()
    locked = (
        CollectionTransaction.objects.select_for_update(skip_locked=True)
        .filter(pk=transaction_id, payment_status=PaymentStatus.PENDING, expires_at__lte=now)
        .first()
    )
    if locked is None:
        return False
    _status_transition(collection=locked, to_status=PaymentStatus.EXPIRED, now=now)
    return True


def transactions_expire_due(
    *,
    now: datetime | None = None,
    batch_size: int = 200,
    on_progress: Callable[[int, int], None] | None = None,
) -> ExpirySummary:
    """Expires every pending transaction past ``expires_at``, one row lock at a time, so a
    confirmation arriving at the same moment either wins or sees the expiry; reports the
    pending ones left, and when the next expires."""
    now = now or timezone.now()
    due = CollectionTransaction.objects.filter(
        payment_status=PaymentStatus.PENDING, expires_at__lte=now
    )
    total = due.count()
    processed = expired = 0
    last_id = 0
    while True:
        ids = list(
            due.filter(pk__gt=last_id).order_by("pk").values_list("pk", flat=True)[:batch_size]
        )
        if not ids:
            break
        for transaction_id in ids:
            expired += transaction_expire(transaction_id=transaction_id, now=now)
        processed += len(ids)
        last_id = ids[-1]
        if on_progress is not None:
            on_progress(processed, total)
    return ExpirySummary(due=total, expired=expired, waiting=transactions_pending_not_due(now=now))
