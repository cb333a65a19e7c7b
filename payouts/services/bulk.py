"""Bulk payouts (an extension): up to ``BATCH_MAX_ITEMS`` payouts in one request, each with the
single create's rules, reserved together under one wallet lock."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction

from audit.services import audit_record
from beneficiaries.selectors import BENEFICIARY_NOT_FOUND_MESSAGE, beneficiary_payout_accounts
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from core.money import CURRENCY_NGN, format_amount
from payouts import tasks
from payouts.models import (
    ZERO,
    Payout,
    PayoutBatch,
    PayoutBatchItemResult,
    PayoutBatchStatus,
    PayoutStatus,
)
from payouts.rules import payout_currency_validate
from payouts.services.create import (
    PayoutCreateResult,
    PayoutPlan,
    _payout_prepare,
    _replay_if_key_used,
)
from wallets.exceptions import InsufficientBalanceError
from wallets.models import LedgerEntry, Wallet
from wallets.name_enquiry import NameEnquiryResult
from wallets.selectors import bank_resolve, wallet_get
from wallets.services import (
    WalletReservation,
    name_enquiry_resolve,
    wallet_lock,
    wallet_reserve_each,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.http import HttpRequest

    from merchants.models import Merchant

logger = logging.getLogger(__name__)


BATCH_MAX_ITEMS = 500
BATCH_ITEMS_COUNT_MESSAGE = f"items: must hold between 1 and {BATCH_MAX_ITEMS} payouts"
BATCH_CONFLICT_MESSAGE = "Batch reference already used for a different bulk payout request"
BATCH_AUDIT_ACTION = "payouts.payout.bulk_upload"
# A message that already names its field (``amount: must be ...``) is joined to the item's
# index with a dot (``items[3].amount: ...``); any other with a colon (``items[3]: ...``).
_NAMES_A_FIELD = re.compile(r"^[a-z_]+(\[\d+\])?(\.[a-z_]+)*: ")


@dataclass(frozen=True)
class PayoutBatchItem:
    """One item of a bulk request as the API or the back office parsed it.

    ``arguments`` are the create's (``account_number``, ``bank_code``, ``bank_id``, ``amount``,
    ``narration``; or ``beneficiary_id`` in place of the account) when the item's shape is
    right; otherwise ``error`` holds what a single create would have answered and ``sent`` what
    was sent (for the batch's fingerprint). ``idempotency_key`` is the key as sent, if it was a
    string.
    """

    idempotency_key: str | None
    arguments: Mapping[str, Any] | None = None
    error: ApplicationError | None = None
    sent: Any = None


@dataclass(frozen=True)
class PayoutBatchItemError:
    message: str
    status_code: int


@dataclass(frozen=True)
class PayoutBatchItemOutcome:
    """What became of one item: ``accepted`` (a new payout, reserved), ``duplicate`` (its key
    named an earlier payout with the same parameters) or ``rejected`` (``error``, as a single
    create would have answered). ``plan`` is set by a dry run only (``payout_batch_preview``):
    the payout that would be created."""

    index: int
    idempotency_key: str | None
    result: str
    payout: Payout | None = None
    error: PayoutBatchItemError | None = None
    plan: PayoutPlan | None = None


@dataclass(frozen=True)
class PayoutBatchCreateResult:
    batch: PayoutBatch
    items: list[PayoutBatchItemOutcome]
    duplicate: bool


@dataclass
class _BatchStep:
    """An item on its way through a bulk create."""

    index: int
    idempotency_key: str | None
    plan: PayoutPlan | None = None
    result: str = PayoutBatchItemResult.REJECTED
    payout: Payout | None = None
    error: PayoutBatchItemError | None = None

    def reject(self, error: ApplicationError, *, atomic: bool) -> None:
        """Rejects this item alone; in an atomic batch, the whole batch (raises)."""
        if atomic:
            raise _batch_item_error(self.index, error) from error
        self.plan, self.payout = None, None
        self.result = PayoutBatchItemResult.REJECTED
        self.error = PayoutBatchItemError(message=error.message, status_code=error.status)

    def outcome(self, *, dry_run: bool = False) -> PayoutBatchItemOutcome:
        return PayoutBatchItemOutcome(
            index=self.index,
            idempotency_key=self.idempotency_key,
            result=self.result,
            payout=self.payout,
            error=self.error,
            plan=self.plan if dry_run else None,
        )

    def stored(self) -> dict[str, Any]:
        """What a replay needs to answer this item again."""
        return {
            "idempotency_key": self.idempotency_key,
            "result": self.result,
            "payout_id": self.payout.pk if self.payout is not None else None,
            "error": (
                None
                if self.error is None
                else {"message": self.error.message, "status_code": self.error.status_code}
            ),
        }


def _batch_item_error(index: int, error: ApplicationError) -> ApplicationError:
    """The item's error for the whole request, naming the item: ``items[3].amount: ...`` (each
    field of a message naming several), ``items[3]: insufficient ...``."""
    parts = error.message.split("; ")
    if all(_NAMES_A_FIELD.match(part) for part in parts):
        message = "; ".join(f"items[{index}].{part}" for part in parts)
    else:
        message = f"items[{index}]: {error.message}"
    return ApplicationError(message, status=error.status, headers=error.headers)


def _batch_item_normalised(item: PayoutBatchItem) -> dict[str, Any]:
    if item.arguments is None:
        return {"idempotency_key": item.idempotency_key, "invalid": item.sent}
    arguments = item.arguments
    normalised = {
        "idempotency_key": item.idempotency_key,
        "beneficiary_id": arguments.get("beneficiary_id"),
        "account_number": arguments.get("account_number"),
        "bank_code": arguments.get("bank_code"),
        "bank_id": arguments.get("bank_id"),
        "amount": format_amount(arguments["amount"]),
        "narration": arguments.get("narration") or None,
    }
    # Only when given, so the fingerprints of unscheduled batches stay as they were.
    if arguments.get("scheduled_for") is not None:
        normalised["scheduled_for"] = arguments["scheduled_for"].astimezone(UTC).isoformat()
    return normalised


def payout_batch_fingerprint(
    *, currency: str, atomic: bool, items: Sequence[PayoutBatchItem]
) -> str:
    """SHA-256 of the normalised bulk request, items in order: ``"100"`` and ``"100.00"``, an
    omitted narration and ``""`` are the same, as for a single create. Items are taken as sent
    (a ``beneficiary_id`` stays an id), so a replay needs no lookup."""
    normalised = {
        "currency": currency,
        "atomic": atomic,
        "items": [_batch_item_normalised(item) for item in items],
    }
    encoded = json.dumps(normalised, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(encoded.encode()).hexdigest()


def _batch_items_check(items: Sequence[PayoutBatchItem]) -> None:
    """1 to ``BATCH_MAX_ITEMS`` items, each idempotency key once (400 naming the later item)."""
    if not 1 <= len(items) <= BATCH_MAX_ITEMS:
        raise ApplicationError(BATCH_ITEMS_COUNT_MESSAGE)
    first_index: dict[str, int] = {}
    for index, item in enumerate(items):
        key = item.idempotency_key
        if key is None:
            continue
        if key in first_index:
            raise ApplicationError(
                f"items[{index}].idempotency_key: duplicates items[{first_index[key]}]"
            )
        first_index[key] = index


def _batch_replay(
    *, wallet_id: int, batch_reference: str, fingerprint: str
) -> PayoutBatchCreateResult | None:
    """The earlier batch with this reference answered again (its payouts as they are now), 409
    if its request differed, or None when the reference is new."""
    batch = PayoutBatch.objects.filter(wallet_id=wallet_id, batch_reference=batch_reference).first()
    if batch is None:
        return None
    if batch.request_fingerprint != fingerprint:
        raise ConflictError(BATCH_CONFLICT_MESSAGE)
    stored = batch.item_results or []
    payouts = Payout.objects.in_bulk(
        [item["payout_id"] for item in stored if item.get("payout_id") is not None]
    )
    items = []
    for index, item in enumerate(stored):
        error = item.get("error")
        items.append(
            PayoutBatchItemOutcome(
                index=index,
                idempotency_key=item.get("idempotency_key"),
                result=item["result"],
                payout=payouts.get(item.get("payout_id")),
                error=(
                    None
                    if error is None
                    else PayoutBatchItemError(
                        message=error["message"], status_code=error["status_code"]
                    )
                ),
            )
        )
    return PayoutBatchCreateResult(batch=batch, items=items, duplicate=True)


class _NameEnquiryOncePerAccount:
    """``name_enquiry_resolve`` asked once per account within one batch: the same account twice
    in a batch costs one provider call, and gets the same answer (a name, or the same error)."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, str, str], NameEnquiryResult | ApplicationError] = {}

    def __call__(self, *, mode: str, account_number: str, bank_code: str) -> NameEnquiryResult:
        key = (mode, account_number, bank_code)
        if key not in self.answers:
            try:
                self.answers[key] = name_enquiry_resolve(
                    mode=mode, account_number=account_number, bank_code=bank_code
                )
            except ApplicationError as error:
                self.answers[key] = error
        answer = self.answers[key]
        if isinstance(answer, ApplicationError):
            raise answer
        return answer


def _batch_prepare(
    *,
    merchant: Merchant,
    mode: str,
    wallet: Wallet,
    currency: str,
    items: Sequence[PayoutBatchItem],
    atomic: bool,
    created_by_key_id: int | None = None,
) -> list[_BatchStep]:
    """Every item through the create's checks before the wallet lock (``_payout_prepare``), in
    request order, outside any transaction: replay or conflict of its key, the cheap checks on
    the balance left by the items before it, the name enquiry. Per batch, not per item: one
    query for the keys used before, one for the saved beneficiaries, banks and fees from
    process memory, one name enquiry per account."""
    keys = [item.idempotency_key for item in items if item.arguments is not None]
    earlier_by_key = (
        {
            payout.idempotency_key: payout
            for payout in Payout.objects.filter(wallet_id=wallet.pk, idempotency_key__in=keys)
        }
        if keys
        else {}
    )
    beneficiary_ids = [
        item.arguments["beneficiary_id"]
        for item in items
        if item.arguments is not None and item.arguments.get("beneficiary_id") is not None
    ]
    accounts = (
        beneficiary_payout_accounts(merchant=merchant, mode=mode, beneficiary_ids=beneficiary_ids)
        if beneficiary_ids
        else {}
    )
    name_enquiry = _NameEnquiryOncePerAccount()
    available_balance = wallet.available_balance
    steps: list[_BatchStep] = []
    for index, item in enumerate(items):
        step = _BatchStep(index=index, idempotency_key=item.idempotency_key)
        steps.append(step)
        try:
            if item.arguments is None:
                raise item.error or ApplicationError("Invalid request")
            arguments = dict(item.arguments)
            beneficiary_id = arguments.pop("beneficiary_id", None)
            if beneficiary_id is not None:
                if beneficiary_id not in accounts:
                    raise NotFoundError(BENEFICIARY_NOT_FOUND_MESSAGE)
                arguments.update(accounts[beneficiary_id])
            bank_id = arguments.get("bank_id")
            planned = _payout_prepare(
                merchant=merchant,
                mode=mode,
                wallet=wallet,
                bank=bank_resolve(bank_code=arguments["bank_code"], bank_id=bank_id),
                account_number=arguments["account_number"],
                bank_code=arguments["bank_code"],
                bank_id=bank_id,
                amount=arguments["amount"],
                idempotency_key=arguments["idempotency_key"],
                currency=currency,
                narration=arguments.get("narration"),
                earlier=earlier_by_key.get(arguments["idempotency_key"]),
                available_balance=available_balance,
                name_enquiry=name_enquiry,
                scheduled_for=arguments.get("scheduled_for"),
                created_by_key_id=created_by_key_id,
            )
        except ApplicationError as error:
            step.reject(error, atomic=atomic)
            continue
        if isinstance(planned, PayoutCreateResult):
            step.result, step.payout = PayoutBatchItemResult.DUPLICATE, planned.payout
        else:
            step.plan = planned
            available_balance -= planned.total_debit_amount
    return steps


def _batch_payouts_insert(
    *, batch: PayoutBatch, wallet_id: int, steps: list[_BatchStep], atomic: bool
) -> None:
    """Inserts the planned payouts of the batch before the wallet is locked (the order of a
    single create, so the two never wait for each other in a circle), in the order of their
    idempotency keys: two requests that share keys then meet at the first shared key, and one
    waits for the other there, instead of each holding a key the other needs (a deadlock,
    whatever order their items came in).

    One statement normally. If a key was taken meanwhile (a concurrent request with the same
    idempotency key committed, or is committing: the insert waits for it), the rows go in one
    by one, and each such item becomes what a single create would answer: the replay of the
    other request's payout, or a 409."""

    def row(plan: PayoutPlan | None) -> Payout:
        fields = plan.fields if plan is not None else {}
        return Payout(wallet_id=wallet_id, batch=batch, status=PayoutStatus.RESERVED, **fields)

    def by_key(step: _BatchStep) -> str:
        return step.plan.fields["idempotency_key"] if step.plan is not None else ""

    steps = sorted(steps, key=by_key)
    rows = [row(step.plan) for step in steps]
    try:
        with transaction.atomic():
            Payout.objects.bulk_create(rows)
    except IntegrityError:
        pass
    else:
        for step, payout in zip(steps, rows, strict=True):
            step.payout = payout
        return
    for step in steps:
        payout = row(step.plan)
        try:
            with transaction.atomic():
                payout.save(force_insert=True)
        except IntegrityError:
            fingerprint = payout.request_fingerprint
            try:
                replay = _replay_if_key_used(
                    wallet_id=wallet_id,
                    idempotency_key=payout.idempotency_key,
                    fingerprint=fingerprint,
                )
            except ApplicationError as error:
                step.reject(error, atomic=atomic)
                continue
            if replay is None:
                raise
            step.plan, step.payout = None, replay.payout
            step.result = PayoutBatchItemResult.DUPLICATE
        else:
            step.payout = payout


def _batch_payouts_reserve(*, wallet_id: int, steps: list[_BatchStep], atomic: bool) -> None:
    """Locks the wallet once the batch's payouts are inserted and reserves each one's total
    debit with its own ledger entry, in request order (``wallet_reserve_each``: two statements
    for the batch), then wakes the dispatcher once on commit. A payout the balance no
    longer covers (spent since the checks) rejects its item, or the whole batch; its row
    goes."""
    inserted = [
        (step, step.payout) for step in steps if step.plan is not None and step.payout is not None
    ]
    if not inserted:
        return
    wallet = wallet_lock(wallet_id=wallet_id)
    try:
        entries: Sequence[LedgerEntry | ApplicationError | None] = wallet_reserve_each(
            wallet=wallet,
            reservations=[
                WalletReservation(
                    amount=payout.total_debit_amount,
                    reference=payout.internal_reference,
                    payout_id=payout.pk,
                )
                for _step, payout in inserted
            ],
        )
    except ApplicationError as error:  # the wallet is not active: no item can be reserved
        entries = [error] * len(inserted)
    if any(isinstance(entry, LedgerEntry) for entry in entries):
        transaction.on_commit(tasks.payout_dispatch_wake)  # one wake for the whole batch
    unreserved: list[int] = []
    for (step, payout), entry in zip(inserted, entries, strict=True):
        if isinstance(entry, LedgerEntry):
            step.result = PayoutBatchItemResult.ACCEPTED
            logger.info(
                "payout %s reserved %s on wallet %s",
                payout.internal_reference,
                payout.total_debit_amount,
                wallet_id,
            )
            continue
        unreserved.append(payout.pk)
        step.reject(
            entry if isinstance(entry, ApplicationError) else InsufficientBalanceError(),
            atomic=atomic,
        )
    if unreserved:
        # Never committed, never seen: as if this request had not inserted them.
        Payout.objects.filter(pk__in=unreserved).delete()


def _batch_totals_save(batch: PayoutBatch, steps: list[_BatchStep]) -> None:
    accepted = [step.payout for step in steps if step.result == PayoutBatchItemResult.ACCEPTED]
    batch.accepted_count = len(accepted)
    batch.duplicate_count = sum(step.result == PayoutBatchItemResult.DUPLICATE for step in steps)
    batch.rejected_count = sum(step.result == PayoutBatchItemResult.REJECTED for step in steps)
    batch.total_amount = sum((payout.amount for payout in accepted if payout), ZERO)
    batch.total_fee_amount = sum((payout.fee_amount for payout in accepted if payout), ZERO)
    batch.total_debit_amount = batch.total_amount + batch.total_fee_amount
    if batch.rejected_count == 0:
        batch.status = PayoutBatchStatus.ACCEPTED
    elif batch.rejected_count == batch.total_items:
        batch.status = PayoutBatchStatus.REJECTED
    else:
        batch.status = PayoutBatchStatus.PARTIALLY_ACCEPTED
    batch.item_results = [step.stored() for step in steps]
    batch.save(
        update_fields=[
            "accepted_count",
            "duplicate_count",
            "rejected_count",
            "total_amount",
            "total_fee_amount",
            "total_debit_amount",
            "status",
            "item_results",
        ]
    )


@transaction.atomic
def _batch_commit(
    *,
    merchant: Merchant,
    mode: str,
    wallet_id: int,
    batch_reference: str,
    fingerprint: str,
    currency: str,
    atomic: bool,
    created_by: User | None,
    steps: list[_BatchStep],
    request: HttpRequest | None,
    audit_after: Mapping[str, Any] | None,
) -> PayoutBatchCreateResult:
    """One transaction: the batch row (its unique reference makes an identical concurrent
    request wait here, then replay), the planned payouts, then the wallet lock and one
    reservation per payout in request order, waking the dispatcher on commit. A reservation
    the balance no longer covers (spent meanwhile) rejects its item, or the whole batch."""
    batch = PayoutBatch.objects.create(
        wallet_id=wallet_id,
        merchant=merchant,
        mode=mode,
        batch_reference=batch_reference,
        request_fingerprint=fingerprint,
        atomic=atomic,
        currency=currency,
        created_by=created_by,
        # Provisional, until _batch_totals_save below (same transaction).
        status=PayoutBatchStatus.REJECTED,
        total_items=len(steps),
        rejected_count=len(steps),
    )
    planned = [step for step in steps if step.plan is not None]
    _batch_payouts_insert(batch=batch, wallet_id=wallet_id, steps=planned, atomic=atomic)
    _batch_payouts_reserve(wallet_id=wallet_id, steps=planned, atomic=atomic)
    _batch_totals_save(batch, steps)
    if created_by is not None:
        audit_record(
            actor=created_by,
            action=BATCH_AUDIT_ACTION,
            obj=batch,
            after={
                "batch_reference": batch.batch_reference,
                "merchant_id": merchant.pk,
                "mode": mode,
                "atomic": atomic,
                "status": batch.status,
                "total_items": batch.total_items,
                "accepted": batch.accepted_count,
                "duplicates": batch.duplicate_count,
                "rejected": batch.rejected_count,
                "total_debit_amount": batch.total_debit_amount,
                **(audit_after or {}),
            },
            request=request,
        )
    logger.info(
        "payout batch %s on wallet %s: %s accepted, %s duplicate, %s rejected",
        batch.pk,
        wallet_id,
        batch.accepted_count,
        batch.duplicate_count,
        batch.rejected_count,
    )
    return PayoutBatchCreateResult(
        batch=batch, items=[step.outcome() for step in steps], duplicate=False
    )


def payout_batch_create(
    *,
    merchant: Merchant,
    mode: str,
    batch_reference: str,
    items: Sequence[PayoutBatchItem],
    currency: str = CURRENCY_NGN,
    atomic: bool = False,
    created_by: User | None = None,
    request: HttpRequest | None = None,
    audit_after: Mapping[str, Any] | None = None,
    created_by_key_id: int | None = None,
) -> PayoutBatchCreateResult:
    """Accepts up to ``BATCH_MAX_ITEMS`` payouts in one request (an extension).

    Each item goes through the rules of ``payout_create`` (``_payout_prepare``; same checks in
    the same order, same messages, same idempotency per wallet: a key used before with the same
    parameters is a ``duplicate`` of that payout, with others a 409) and becomes an ordinary
    payout, reserved with its own ledger entry and dispatched after commit like a single one.

    ``atomic=False``: each item stands alone; a rejected one (its ``error`` is what a single
    create would have answered) does not stop the others. ``atomic=True``: every item is
    reserved, or none and nothing is stored: the first failing item's error names it by index
    (``items[3].amount: ...``) with its status (400; 404 unknown beneficiary, 409 key conflict,
    503 name enquiry unavailable).

    ``batch_reference`` is the request's idempotency key, unique per wallet (a database
    constraint): the same reference with the same items answers the first answer again
    (``duplicate=True``, the payouts as they are now), with other items 409. Two identical
    requests at once make one batch: the second waits on the first's batch row, then replays it.

    ``created_by`` (a staff user, from the back office) is kept on the batch, and a new batch is
    recorded in the audit trail in its transaction, with ``audit_after`` (e.g. the file).
    ``created_by_key_id`` (the API key) makes each item at or above the wallet's approval
    threshold wait for approval on its own, as a single create's would; an item's
    ``scheduled_for`` holds it until then.
    """
    _batch_items_check(items)
    payout_currency_validate(currency=currency)
    wallet = wallet_get(merchant=merchant, mode=mode)
    fingerprint = payout_batch_fingerprint(currency=currency, atomic=atomic, items=items)
    replay = _batch_replay(
        wallet_id=wallet.pk, batch_reference=batch_reference, fingerprint=fingerprint
    )
    if replay is not None:
        return replay
    steps = _batch_prepare(
        merchant=merchant,
        mode=mode,
        wallet=wallet,
        currency=currency,
        items=items,
        atomic=atomic,
        created_by_key_id=created_by_key_id,
    )
    try:
        return _batch_commit(
            merchant=merchant,
            mode=mode,
            wallet_id=wallet.pk,
            batch_reference=batch_reference,
            fingerprint=fingerprint,
            currency=currency,
            atomic=atomic,
            created_by=created_by,
            steps=steps,
            request=request,
            audit_after=audit_after,
        )
    except IntegrityError:
        # An identical request inserted this batch reference first (the insert waited for it):
        # this request is its replay.
        replay = _batch_replay(
            wallet_id=wallet.pk, batch_reference=batch_reference, fingerprint=fingerprint
        )
        if replay is None:
            raise
        logger.info(
            "payout batch %s on wallet %s: made by a concurrent identical request; replayed",
            replay.batch.pk,
            wallet.pk,
        )
        return replay


def payout_batch_preview(
    *,
    merchant: Merchant,
    mode: str,
    items: Sequence[PayoutBatchItem],
    currency: str = CURRENCY_NGN,
) -> list[PayoutBatchItemOutcome]:
    """A dry run of a non-atomic ``payout_batch_create``: each item's outcome as the checks
    before the wallet lock see it now (``accepted`` means it would be; its ``plan`` holds the
    payout that would be created). Writes nothing; asks name enquiry as a create would."""
    _batch_items_check(items)
    payout_currency_validate(currency=currency)
    wallet = wallet_get(merchant=merchant, mode=mode)
    steps = _batch_prepare(
        merchant=merchant, mode=mode, wallet=wallet, currency=currency, items=items, atomic=False
    )
    for step in steps:
        if step.plan is not None:
            step.result = PayoutBatchItemResult.ACCEPTED
    return [step.outcome(dry_run=True) for step in steps]
