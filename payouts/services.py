"""Payout writes: create (idempotent), dispatch, requery, two-person manual resolution.

Money moves only through ``wallets.services`` (reserve, capture, release). Every status change
happens on the payout row locked with ``select_for_update()`` and goes through
``payouts.state_machine``. Provider calls happen outside any transaction, carry our
``internal_reference`` as the idempotency reference, and their raw answers are kept.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, CharField, Value, When
from django.utils import timezone

from audit.services import audit_record
from beneficiaries.selectors import BENEFICIARY_NOT_FOUND_MESSAGE, beneficiary_payout_accounts
from core.dates import local_isoformat, local_text
from core.db import rows_update
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from core.money import CURRENCY_NGN, format_amount, format_amount_display
from payouts import tasks
from payouts.events import payout_event_emit, payout_events_emit, payout_returned_event_emit
from payouts.exceptions import DispatchDeferredError
from payouts.models import (
    FINAL_STATUSES,
    ZERO,
    Payout,
    PayoutBatch,
    PayoutBatchItemResult,
    PayoutBatchStatus,
    PayoutCountChange,
    PayoutDailyCount,
    PayoutResolution,
    PayoutResolutionProposal,
    PayoutStatus,
    ResolutionDecision,
)
from payouts.providers.base import (
    TransferOutcome,
    TransferRequest,
    TransferResult,
    initiate_transfers,
)
from payouts.providers.registry import provider_get, provider_name_for_mode
from payouts.rules import payout_currency_validate
from payouts.selectors import (
    PayoutCountMismatch,
    PayoutsWaiting,
    payout_counts_mismatches,
    payout_counts_recount,
    payout_ids_due_for_requery,
    payouts_stuck_for_dispatch,
    payouts_waiting_for_requery,
    payouts_waiting_to_be_stuck,
)
from payouts.state_machine import payout_transition
from wallets.exceptions import InsufficientBalanceError, WalletInactiveError
from wallets.models import Bank, LedgerEntry, Wallet
from wallets.name_enquiry import NameEnquiryResult
from wallets.selectors import bank_resolve, payout_fee_calculate, wallet_get
from wallets.services import (
    WalletReservation,
    WalletSettlement,
    WalletSettlementKind,
    name_enquiry_resolve,
    wallet_capture,
    wallet_lock,
    wallet_release,
    wallet_reserve_atomic,
    wallet_reserve_each,
    wallet_return,
    wallets_settle,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser
    from django.http import HttpRequest

    from merchants.models import Merchant

logger = logging.getLogger(__name__)

IDEMPOTENCY_CONFLICT_MESSAGE = "Idempotency key already used for a different payout request"
NOT_ELIGIBLE_MESSAGE = "Payout is not eligible for status requery"
DEFAULT_FAILURE_MESSAGE = "Transfer failed"
PROVIDER_RESPONSES_KEPT = 50
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.1}
# What dispatch, requery and settlement may change on a payout (the request never changes).
SETTLEMENT_FIELDS = (
    "status",
    "error_message",
    "provider_reference",
    "nip_session_id",
    "provider_responses",
    "dispatch_attempts",
    "dispatch_claimed_at",
    "verify_before_send",
    "dispatched_at",
    "ambiguous_since",
    "next_requery_at",
    "requery_count",
    "completed_at",
    "updated_at",
)


# --- Settings helpers ----------------------------------------------------------------------


def _seconds_setting(name: str, default: int) -> timedelta:
    value = getattr(settings, name, None)
    if value is None:
        return timedelta(seconds=default)
    return value if isinstance(value, timedelta) else timedelta(seconds=value)


def ambiguous_requery_delay() -> timedelta:
    return _seconds_setting("PAYOUT_AMBIGUOUS_REQUERY_DELAY", 300)


def requery_max_interval() -> timedelta:
    return _seconds_setting("PAYOUT_REQUERY_MAX_INTERVAL", 6 * 3600)


def dispatched_requery_after() -> timedelta:
    return _seconds_setting("PAYOUT_DISPATCHED_REQUERY_AFTER", 300)


def dispatch_claim_timeout() -> timedelta:
    return _seconds_setting("PAYOUT_DISPATCH_CLAIM_TIMEOUT", 180)


def next_requery_at(*, now: datetime, requery_count: int) -> datetime:
    """Exponential backoff: delay, 2×delay, 4×delay, … capped at the maximum interval."""
    delay = ambiguous_requery_delay() * (2 ** min(requery_count, 16))
    return now + min(delay, max(requery_max_interval(), ambiguous_requery_delay()))


# --- Create --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PayoutCreateResult:
    payout: Payout
    duplicate: bool


def payout_fingerprint(
    *,
    account_number: str,
    bank_code: str,
    bank_id: int | None,
    amount: Decimal,
    currency: str,
    narration: str | None,
) -> str:
    """SHA-256 of the normalised parameters: ``"100"`` and ``"100.00"`` are the same payout."""
    normalised = {
        "account_number": account_number,
        "bank_code": bank_code,
        "bank_id": bank_id,
        "amount": format_amount(amount),
        "currency": currency,
        "narration": narration or None,
    }
    encoded = json.dumps(normalised, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()


def internal_reference_generate() -> str:
    """``po_<yyyymmdd>_<20 hex>``: lowercase, digits and ``_`` only (provider-safe)."""
    return f"po_{timezone.now():%Y%m%d}_{secrets.token_hex(10)}"


def _earlier_payout(*, wallet_id: int, idempotency_key: str) -> Payout | None:
    """The wallet's payout with this idempotency key, if any (one indexed lookup; the key is
    unique per wallet, so the query asks for no order)."""
    payouts = Payout.objects.filter(wallet_id=wallet_id, idempotency_key=idempotency_key)
    return next(iter(payouts.order_by()[:1]), None)


def _replay_of(earlier: Payout | None, *, fingerprint: str) -> PayoutCreateResult | None:
    """The earlier payout with this key (``duplicate=True``), 409 if its request differed, or
    None when the key is new."""
    if earlier is None:
        return None
    if earlier.request_fingerprint != fingerprint:
        raise ConflictError(IDEMPOTENCY_CONFLICT_MESSAGE)
    return PayoutCreateResult(payout=earlier, duplicate=True)


def _replay_if_key_used(
    *, wallet_id: int, idempotency_key: str, fingerprint: str
) -> PayoutCreateResult | None:
    """The earlier payout with this key (``duplicate=True``), 409 if its request differed, or
    None when the key is new (one indexed lookup)."""
    return _replay_of(
        _earlier_payout(wallet_id=wallet_id, idempotency_key=idempotency_key),
        fingerprint=fingerprint,
    )


NameEnquiry = Callable[..., NameEnquiryResult]


@dataclass(frozen=True)
class PayoutPlan:
    """A payout that passed every check made before the wallet lock: the row to insert."""

    fields: dict[str, Any]

    @property
    def total_debit_amount(self) -> Decimal:
        return self.fields["total_debit_amount"]


def _payout_prepare(
    *,
    merchant: Merchant,
    mode: str,
    wallet: Wallet,
    bank: Bank,
    account_number: str,
    bank_code: str,
    bank_id: int | None,
    amount: Decimal,
    idempotency_key: str,
    currency: str,
    narration: str | None,
    earlier: Payout | None,
    available_balance: Decimal,
    name_enquiry: NameEnquiry | None = None,
) -> PayoutCreateResult | PayoutPlan:
    """The rules of a create before the wallet lock, in their order: the replay or conflict of
    ``earlier`` (the wallet's payout with this key, looked up by the caller), then the cheap
    checks on an unlocked read (active wallet, fee, ``available_balance``), so hopeless
    requests cost no provider call, then the name enquiry. The reservation checks the wallet
    again as it changes it (``wallet_reserve_atomic``, ``wallet_reserve_each``)."""
    narration = narration or None
    fingerprint = payout_fingerprint(
        account_number=account_number,
        bank_code=bank_code,
        bank_id=bank_id,
        amount=amount,
        currency=currency,
        narration=narration,
    )
    replay = _replay_of(earlier, fingerprint=fingerprint)
    if replay is not None:
        return replay
    if not wallet.is_active:
        raise WalletInactiveError()
    fee_amount = payout_fee_calculate(amount=amount)
    total_debit_amount = amount + fee_amount
    if available_balance < total_debit_amount:
        raise InsufficientBalanceError()
    beneficiary = (name_enquiry or name_enquiry_resolve)(
        mode=mode, account_number=account_number, bank_code=bank_code
    )
    return PayoutPlan(
        fields={
            "merchant": merchant,
            "mode": mode,
            "internal_reference": internal_reference_generate(),
            "idempotency_key": idempotency_key,
            "request_fingerprint": fingerprint,
            "account_number": account_number,
            "account_name": beneficiary.account_name[:200],
            "bank_code": bank.bank_code,
            "bank_name": bank.name,
            "bank_id": bank.pk,
            "currency": currency,
            "amount": amount,
            "fee_amount": fee_amount,
            "total_debit_amount": total_debit_amount,
            "narration": narration,
            "provider_name": provider_name_for_mode(mode),
        }
    )


def payout_create(
    *,
    merchant: Merchant,
    mode: str,
    account_number: str,
    bank_code: str,
    amount: Decimal,
    idempotency_key: str,
    currency: str = CURRENCY_NGN,
    narration: str | None = None,
    bank_id: int | None = None,
    wallet: Wallet | None = None,
) -> PayoutCreateResult:
    """Accepts a payout: total debit reserved and the payout ``reserved``, in one transaction.

    The idempotency fast path, name enquiry and fee lookup run before the wallet is locked; the
    transaction inserts the payout, then reserves the funds with one conditional update of the
    wallet, which takes its row lock (``wallet_reserve_atomic``). Concurrent requests with one
    key meet on the unique constraint (wallet, idempotency key): the later insert waits for the
    first, fails, and answers as a replay.

    ``wallet`` is the merchant's wallet of ``mode`` when the caller has read it already (the key
    authentication loads it with the key); it is read here otherwise. Either way it is an
    unlocked read, used only for the checks before the transaction.
    """
    payout_currency_validate(currency=currency)
    bank = bank_resolve(bank_code=bank_code, bank_id=bank_id)
    if wallet is None:
        wallet = wallet_get(merchant=merchant, mode=mode)
    elif wallet.merchant_id != merchant.pk or wallet.mode != mode:
        raise ValueError("wallet: must be the merchant's wallet of this mode")
    plan = _payout_prepare(
        merchant=merchant,
        mode=mode,
        wallet=wallet,
        bank=bank,
        account_number=account_number,
        bank_code=bank_code,
        bank_id=bank_id,
        amount=amount,
        idempotency_key=idempotency_key,
        currency=currency,
        narration=narration,
        earlier=_earlier_payout(wallet_id=wallet.pk, idempotency_key=idempotency_key),
        available_balance=wallet.available_balance,
    )
    if isinstance(plan, PayoutCreateResult):
        return plan
    try:
        return _payout_insert(wallet_id=wallet.pk, fields=plan.fields)
    except IntegrityError:
        # Another request with this key committed first (the unique constraint on wallet and
        # key makes the insert wait for it, then fail): this request is its replay.
        replay = _replay_if_key_used(
            wallet_id=wallet.pk,
            idempotency_key=idempotency_key,
            fingerprint=plan.fields["request_fingerprint"],
        )
        if replay is None:
            raise
        return replay


@transaction.atomic
def _payout_insert(*, wallet_id: int, fields: dict[str, Any]) -> PayoutCreateResult:
    """Inserts the payout, then reserves its total debit: the wallet's row lock is taken last,
    by the reservation's update, and held for one more statement (its ledger entry)."""
    payout = Payout.objects.create(wallet_id=wallet_id, status=PayoutStatus.RESERVED, **fields)
    _payout_reserve(payout=payout, wallet_id=wallet_id)
    return PayoutCreateResult(payout=payout, duplicate=False)


def _payout_reserve(*, payout: Payout, wallet_id: int) -> None:
    """Reserves the inserted payout's total debit on its wallet (an inactive wallet or too
    little available balance raises, and the transaction rolls the payout back) and wakes the
    batch dispatcher when the transaction commits (``tasks.payout_dispatch_wake``)."""
    wallet_reserve_atomic(
        wallet_id=wallet_id,
        amount=payout.total_debit_amount,
        reference=payout.internal_reference,
        payout_id=payout.pk,
    )
    transaction.on_commit(tasks.payout_dispatch_wake)
    logger.info(
        "payout %s reserved %s on wallet %s",
        payout.internal_reference,
        payout.total_debit_amount,
        wallet_id,
    )


def payout_dispatch_enqueue(*, payout_id: int) -> bool:
    """Queues the dispatch task of one payout (a requery of a payout not yet sent). A broker
    outage must not fail the request: the payout waits for the batch dispatcher's beat run or
    the ``dispatch_stuck`` sweeper."""
    try:
        # One quick retry, then give up: while the broker is down a create answers at once,
        # and the payout waits for the sweeper.
        tasks.payout_dispatch_task.apply_async(args=[payout_id], retry_policy=PUBLISH_RETRY_POLICY)
    except Exception:
        logger.exception(
            "could not enqueue dispatch of payout %s; the dispatch_stuck sweeper will", payout_id
        )
        return False
    return True


# --- Bulk create (extension) ---------------------------------------------------------------

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
    return {
        "idempotency_key": item.idempotency_key,
        "beneficiary_id": arguments.get("beneficiary_id"),
        "account_number": arguments.get("account_number"),
        "bank_code": arguments.get("bank_code"),
        "bank_id": arguments.get("bank_id"),
        "amount": format_amount(arguments["amount"]),
        "narration": arguments.get("narration") or None,
    }


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
    """Inserts the planned payouts of the batch, in request order, before the wallet is locked
    (the order of a single create, so the two never wait for each other in a circle).

    One statement normally. If a key was taken meanwhile (a concurrent request with the same
    idempotency key committed, or is committing: the insert waits for it), the rows go in one
    by one, and each such item becomes what a single create would answer: the replay of the
    other request's payout, or a 409."""

    def row(plan: PayoutPlan | None) -> Payout:
        fields = plan.fields if plan is not None else {}
        return Payout(wallet_id=wallet_id, batch=batch, status=PayoutStatus.RESERVED, **fields)

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
    for the batch), then wakes the batch dispatcher once on commit. A payout the balance no
    longer covers (spent since the checks) rejects its item, or the whole batch; its row
    goes."""
    inserted = [
        (step, step.payout) for step in steps if step.plan is not None and step.payout is not None
    ]
    if not inserted:
        return
    wallet = wallet_lock(wallet_id=wallet_id)
    try:
        entries = wallet_reserve_each(
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
    created_by: AbstractBaseUser | None,
    steps: list[_BatchStep],
    request: HttpRequest | None,
    audit_after: Mapping[str, Any] | None,
) -> PayoutBatchCreateResult:
    """One transaction: the batch row (its unique reference makes an identical concurrent
    request wait here, then replay), the planned payouts, then the wallet lock and one
    reservation per payout in request order, waking the batch dispatcher on commit. A reservation
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
    created_by: AbstractBaseUser | None = None,
    request: HttpRequest | None = None,
    audit_after: Mapping[str, Any] | None = None,
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
        merchant=merchant, mode=mode, wallet=wallet, currency=currency, items=items, atomic=atomic
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


# --- Settling ------------------------------------------------------------------------------


def _record_raw(payout: Payout, result: TransferResult) -> None:
    if not result.raw:
        return
    responses = list(payout.provider_responses or [])
    responses.extend(exchange.as_dict() for exchange in result.raw)
    payout.provider_responses = responses[-PROVIDER_RESPONSES_KEPT:]


@dataclass
class BatchEffects:
    """What a dispatch batch applies once for all its payouts, in the transaction that settles
    them: the wallets' captures and releases (``wallets_settle``: one balance update and one
    ledger insert per wallet) and the events of the payouts that end final
    (``payout_events_emit``: one insert)."""

    settlements: list[WalletSettlement] = field(default_factory=list)
    final_payouts: list[Payout] = field(default_factory=list)

    def apply(self) -> None:
        wallets_settle(settlements=self.settlements)
        payout_events_emit(payouts=self.final_payouts)


def _succeed(payout: Payout, *, now: datetime, batch: BatchEffects | None = None) -> None:
    """``successful``, capturing the reserved total debit and recording its event: at once
    (``wallet_capture``, ``payout_event_emit``), or, with ``batch``, added to it for the caller
    to apply in the same transaction."""
    payout_transition(payout=payout, to_status=PayoutStatus.SUCCESSFUL)
    capture = WalletSettlement(
        kind=WalletSettlementKind.CAPTURE,
        wallet_id=payout.wallet_id,
        amount=payout.amount,
        fee_amount=payout.fee_amount,
        reference=payout.internal_reference,
        payout_id=payout.pk,
    )
    payout.completed_at = now
    payout.next_requery_at = None
    payout.error_message = None
    if batch is None:
        wallet_capture(
            wallet_id=capture.wallet_id,
            amount=capture.amount,
            fee_amount=capture.fee_amount,
            reference=capture.reference,
            payout_id=capture.payout_id,
        )
        payout_event_emit(payout=payout)
    else:
        batch.settlements.append(capture)
        batch.final_payouts.append(payout)


def _fail(
    payout: Payout,
    *,
    now: datetime,
    message: str,
    batch: BatchEffects | None = None,
) -> None:
    """``failed``, releasing the reserved total debit and recording its event: at once
    (``wallet_release``, ``payout_event_emit``), or, with ``batch``, added to it for the caller
    to apply in the same transaction."""
    payout_transition(payout=payout, to_status=PayoutStatus.FAILED)
    release = WalletSettlement(
        kind=WalletSettlementKind.RELEASE,
        wallet_id=payout.wallet_id,
        amount=payout.total_debit_amount,
        reference=payout.internal_reference,
        payout_id=payout.pk,
    )
    payout.completed_at = now
    payout.next_requery_at = None
    payout.error_message = (message or DEFAULT_FAILURE_MESSAGE)[:255]
    if batch is None:
        wallet_release(
            wallet_id=release.wallet_id,
            amount=release.amount,
            reference=release.reference,
            payout_id=release.payout_id,
        )
        payout_event_emit(payout=payout)
    else:
        batch.settlements.append(release)
        batch.final_payouts.append(payout)


def _make_ambiguous(payout: Payout, *, now: datetime) -> None:
    if payout.status != PayoutStatus.AMBIGUOUS:
        payout_transition(payout=payout, to_status=PayoutStatus.AMBIGUOUS)
        payout.ambiguous_since = now
    payout.next_requery_at = next_requery_at(now=now, requery_count=payout.requery_count)


def _settle(
    payout: Payout,
    result: TransferResult,
    *,
    now: datetime,
    from_requery: bool,
    batch: BatchEffects | None = None,
) -> None:
    """Applies a provider answer to a ``dispatched`` or ``ambiguous`` payout (locked). The
    capture or release and the event happen at once, or, with ``batch``, are added to it."""
    if result.provider_reference and not payout.provider_reference:
        payout.provider_reference = result.provider_reference[:100]
    if result.session_id and not payout.nip_session_id:
        payout.nip_session_id = result.session_id[:64]
    if result.outcome == TransferOutcome.SUCCESSFUL:
        _succeed(payout, now=now, batch=batch)
    elif result.outcome == TransferOutcome.FAILED:
        _fail(payout, now=now, message=result.message, batch=batch)
    elif result.outcome == TransferOutcome.PENDING and not from_requery:
        # Accepted and in progress: stays dispatched; the sweeper asks again later.
        payout.next_requery_at = now + dispatched_requery_after()
    else:
        # Timeout, 5xx, unknown reference, or still pending when asked: not conclusive.
        _make_ambiguous(payout, now=now)


# --- Dispatch ------------------------------------------------------------------------------


class DispatchStep(StrEnum):
    SKIPPED = "skipped"
    APPLIED = "applied"
    DEFERRED = "deferred"


@dataclass(frozen=True)
class DispatchClaim:
    payout: Payout
    attempt: int


def _claim_is_stale(payout: Payout, *, now: datetime) -> bool:
    claimed_at = payout.dispatch_claimed_at
    return claimed_at is None or claimed_at <= now - dispatch_claim_timeout()


@transaction.atomic
def payout_dispatch_claim(*, payout_id: int) -> DispatchClaim | None:
    """``reserved → processing``, or retakes a ``processing`` payout whose claim went stale or
    was released.

    Retaking a claim that went stale (the worker died while it held it) means an earlier attempt
    may have sent the transfer: the payout is marked ``verify_before_send`` so the provider is
    asked by reference before anything is sent again. A released claim (``NOT_SENT``) keeps the
    mark as it was.
    """
    payout = Payout.objects.select_for_update().filter(pk=payout_id).first()
    if payout is None:
        logger.warning("dispatch of payout %s skipped: it does not exist", payout_id)
        return None
    now = timezone.now()
    if payout.status == PayoutStatus.RESERVED:
        payout_transition(payout=payout, to_status=PayoutStatus.PROCESSING)
    elif payout.status == PayoutStatus.PROCESSING and _claim_is_stale(payout, now=now):
        if payout.dispatch_claimed_at is not None:
            payout.verify_before_send = True
    else:
        return None
    payout.dispatch_attempts += 1
    payout.dispatch_claimed_at = now
    payout.save(
        update_fields=[
            "status",
            "dispatch_attempts",
            "dispatch_claimed_at",
            "verify_before_send",
            "updated_at",
        ]
    )
    return DispatchClaim(payout=payout, attempt=payout.dispatch_attempts)


def _transfer_request(payout: Payout) -> TransferRequest:
    return TransferRequest(
        reference=payout.internal_reference,
        account_number=payout.account_number,
        account_name=payout.account_name,
        bank_code=payout.bank_code,
        amount=payout.amount,
        currency=payout.currency,
        narration=payout.narration,
    )


def _dispatch_result_apply(
    payout: Payout,
    *,
    attempt: int,
    result: TransferResult,
    verify_before_send: bool,
    now: datetime,
    batch: BatchEffects | None = None,
) -> DispatchStep:
    """The provider's answer to dispatch attempt ``attempt``, applied to the locked payout in
    memory (the caller saves it): kept for audit only if another attempt took over meanwhile;
    a ``NOT_SENT`` releases the claim; a refusal fails it; any other answer dispatches it and
    settles it as far as the answer tells (``_settle``). The capture or release and the event
    happen at once, or, with ``batch``, are added to it."""
    _record_raw(payout, result)
    if payout.status != PayoutStatus.PROCESSING or payout.dispatch_attempts != attempt:
        logger.warning(
            "payout %s: dispatch attempt %s answered after another took over (%s); kept for audit",
            payout.internal_reference,
            attempt,
            payout.status,
        )
        return DispatchStep.SKIPPED
    payout.verify_before_send = verify_before_send
    if result.outcome == TransferOutcome.NOT_SENT:
        payout.dispatch_claimed_at = None  # free for the next attempt
        return DispatchStep.DEFERRED
    if result.outcome == TransferOutcome.REJECTED:
        _fail(payout, now=now, message=result.message, batch=batch)
    else:
        payout_transition(payout=payout, to_status=PayoutStatus.DISPATCHED)
        payout.dispatched_at = now
        _settle(payout, result, now=now, from_requery=False, batch=batch)
    logger.info("payout %s dispatched: %s", payout.internal_reference, payout.status)
    return DispatchStep.APPLIED


@transaction.atomic
def _dispatch_apply(
    *, payout_id: int, attempt: int, result: TransferResult, verify_before_send: bool
) -> tuple[DispatchStep, Payout]:
    payout = Payout.objects.select_for_update().get(pk=payout_id)
    step = _dispatch_result_apply(
        payout,
        attempt=attempt,
        result=result,
        verify_before_send=verify_before_send,
        now=timezone.now(),
    )
    if step == DispatchStep.SKIPPED:
        payout.save(update_fields=["provider_responses", "updated_at"])
    else:
        payout.save(update_fields=SETTLEMENT_FIELDS)
    return step, payout


def payout_dispatch(*, payout_id: int) -> Payout | None:
    """Sends a ``reserved`` payout to its provider and applies the answer. Idempotent: does
    nothing unless the payout is ``reserved``, or ``processing`` with a stale or released claim.

    When an earlier attempt may have sent the transfer (``verify_before_send``), the provider is
    asked by reference first: a transfer it holds is settled from its answer and never sent
    again; if it cannot be asked, nothing is sent. Raises ``DispatchDeferredError`` when nothing
    reached the provider, for the task to retry.
    """
    claim = payout_dispatch_claim(payout_id=payout_id)
    if claim is None:
        return None
    payout = claim.payout
    provider = provider_get(payout.provider_name)
    result: TransferResult | None = None
    verify_before_send = payout.verify_before_send
    if verify_before_send:
        earlier = provider.verify_transfer(reference=payout.internal_reference)
        if earlier.outcome == TransferOutcome.NOT_FOUND:
            verify_before_send = False
        elif earlier.outcome == TransferOutcome.UNKNOWN:
            result = TransferResult(
                outcome=TransferOutcome.NOT_SENT,
                message=f"could not check for an earlier transfer: {earlier.message}",
                raw=earlier.raw,
            )
        else:
            result = earlier
    if result is None:
        result = provider.initiate_transfer(_transfer_request(payout))
    step, applied = _dispatch_apply(
        payout_id=payout.pk,
        attempt=claim.attempt,
        result=result,
        verify_before_send=verify_before_send,
    )
    if step == DispatchStep.DEFERRED:
        raise DispatchDeferredError(
            f"payout {payout.internal_reference}: provider not reached ({result.message})"
        )
    return applied


# --- Dispatch in batches ------------------------------------------------------------------


def dispatch_batch_size() -> int:
    """``PAYOUT_DISPATCH_BATCH_SIZE``: how many payouts one batch claims at most."""
    return int(getattr(settings, "PAYOUT_DISPATCH_BATCH_SIZE", 50))


@dataclass
class DispatchBatchReport:
    """What one ``payouts_dispatch_batch`` did: how many payouts it claimed (``limit`` the most
    it could), and how each ended the batch (its status, ``deferred`` when the provider was not
    reached, ``skipped`` when another attempt had taken it over, ``unanswered`` when the provider
    call raised: those wait for the ``dispatch_stuck`` sweeper)."""

    limit: int
    claimed: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)

    @property
    def full(self) -> bool:
        """The batch took as many payouts as it could: more may be waiting."""
        return self.claimed >= self.limit

    def count(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1

    def summary(self) -> str:
        parts = ", ".join(f"{n} {o}" for o, n in sorted(self.outcomes.items()))
        return f"dispatch_batch: {self.claimed} payout(s) claimed{': ' + parts if parts else ''}"


CLAIM_FIELDS = ("status", "dispatch_attempts", "dispatch_claimed_at", "updated_at")


@transaction.atomic
def _dispatch_batch_claim(
    *, limit: int, older_than: timedelta | None, payout_ids: Sequence[int] | None = None
) -> list[DispatchClaim]:
    """``reserved → processing`` for up to ``limit`` reserved payouts (of ``payout_ids`` when
    given), oldest id first, in one transaction: one locking read that skips rows another claim
    holds (``FOR UPDATE SKIP LOCKED``) and one update."""
    now = timezone.now()
    reserved = Payout.objects.select_for_update(skip_locked=True).filter(
        status=PayoutStatus.RESERVED
    )
    if older_than is not None:
        reserved = reserved.filter(created_at__lte=now - older_than)
    if payout_ids is not None:
        reserved = reserved.filter(pk__in=list(payout_ids))
    payouts = list(reserved.order_by("id")[:limit])
    for payout in payouts:
        payout_transition(payout=payout, to_status=PayoutStatus.PROCESSING)
        payout.dispatch_attempts += 1
        payout.dispatch_claimed_at = now
        payout.updated_at = now
    rows_update(payouts, CLAIM_FIELDS)
    return [DispatchClaim(payout=payout, attempt=payout.dispatch_attempts) for payout in payouts]


def _dispatch_batch_send(
    claims: Sequence[DispatchClaim], *, send_by: float, clock: Callable[[], float]
) -> dict[int, TransferResult]:
    """Sends the claimed payouts, provider by provider (its bulk call when it has one), outside
    any transaction; the answers by payout id. A provider whose call raises leaves its payouts
    unanswered: claimed, they wait for the claim to go stale and the ``dispatch_stuck`` sweeper,
    which asks the provider by reference before sending anything again.

    Nothing is started once ``clock`` reaches ``send_by`` (half the claim timeout after the
    claim): those payouts answer ``NOT_SENT``, so their claims are released for the sweeper.
    A slow provider thus never leaves a send in flight when the sweeper may retake its claim
    as stale, and a payout is never sent by the batch and the sweeper both."""
    by_provider: dict[str, list[DispatchClaim]] = {}
    for claim in claims:
        by_provider.setdefault(claim.payout.provider_name, []).append(claim)
    results: dict[int, TransferResult] = {}
    for provider_name, group in by_provider.items():
        try:
            answers = initiate_transfers(
                provider_get(provider_name),
                [_transfer_request(claim.payout) for claim in group],
                send_by=send_by,
                clock=clock,
            )
        except Exception:
            logger.exception(
                "dispatch batch: %s payout(s) of provider %s unanswered; the dispatch_stuck "
                "sweeper will verify them",
                len(group),
                provider_name,
            )
            continue
        for claim, answer in zip(group, answers, strict=True):
            results[claim.payout.pk] = answer
    return results


@transaction.atomic
def _dispatch_batch_apply(
    *, attempts: Mapping[int, int], results: Mapping[int, TransferResult]
) -> list[tuple[DispatchStep, Payout]]:
    """Applies the answers in one transaction, with the rules of ``_dispatch_apply``: the
    payouts locked in id order, each answer applied (``_dispatch_result_apply``), the captures
    and releases of every wallet in one balance update and one ledger insert per wallet and the
    events of the payouts that end final in one insert (``BatchEffects``), then the payouts in
    one update."""
    payouts = list(Payout.objects.select_for_update().filter(pk__in=list(results)).order_by("pk"))
    now = timezone.now()
    batch = BatchEffects()
    steps: list[tuple[DispatchStep, Payout]] = []
    for payout in payouts:
        step = _dispatch_result_apply(
            payout,
            attempt=attempts[payout.pk],
            result=results[payout.pk],
            verify_before_send=False,
            now=now,
            batch=batch,
        )
        payout.updated_at = now
        steps.append((step, payout))
    batch.apply()
    rows_update(payouts, SETTLEMENT_FIELDS)
    return steps


def payouts_dispatch_batch(
    *,
    limit: int | None = None,
    older_than: timedelta | None = None,
    payout_ids: Sequence[int] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> DispatchBatchReport:
    """Dispatches up to ``limit`` (default ``PAYOUT_DISPATCH_BATCH_SIZE``) ``reserved`` payouts
    (only those created ``older_than`` ago or earlier, and only those of ``payout_ids``, when
    given), oldest first, in three steps whose statements do not grow with the batch:

    1. claim: one transaction moves them to ``processing`` (``_dispatch_batch_claim``);
    2. send: each provider gets its payouts, in one bulk call when it has one, outside any
       transaction, none started later than half the claim timeout after the claim (``clock``
       tells the time; the rest answer ``NOT_SENT`` and are released for the sweeper);
    3. apply: one transaction applies every answer with the rules of the single dispatch
       (``payout_dispatch``), money moved once per wallet, the events recorded in one insert.

    A reserved payout has never been sent, so nothing is verified first. What a crash or a
    failed step leaves behind is a ``processing`` payout whose claim goes stale, or one whose
    claim a ``NOT_SENT`` released: the ``dispatch_stuck`` sweeper takes it through the single
    dispatch, asking the provider by reference before sending anything again (the reserved
    payouts it finds, whose dispatch was lost, it sends through this batch). Concurrent batches
    take disjoint payouts.
    """
    limit = dispatch_batch_size() if limit is None else limit
    if limit < 1:
        raise ValueError("limit: must be at least 1")
    report = DispatchBatchReport(limit=limit)
    # Taken before the claim, so the deadline is at most half the timeout after it.
    send_by = clock() + dispatch_claim_timeout().total_seconds() / 2
    claims = _dispatch_batch_claim(limit=limit, older_than=older_than, payout_ids=payout_ids)
    report.claimed = len(claims)
    if not claims:
        return report
    results = _dispatch_batch_send(claims, send_by=send_by, clock=clock)
    steps = _dispatch_batch_apply(
        attempts={claim.payout.pk: claim.attempt for claim in claims}, results=results
    )
    for step, payout in steps:
        if step == DispatchStep.APPLIED:
            report.count(payout.status)
        else:
            report.count(str(step))
    for _unanswered in range(len(claims) - len(results)):
        report.count("unanswered")
    logger.info("%s", report.summary())
    return report


# --- Requery -------------------------------------------------------------------------------


@transaction.atomic
def _requery_apply(*, payout_id: int, result: TransferResult) -> Payout:
    payout = Payout.objects.select_for_update().get(pk=payout_id)
    _record_raw(payout, result)
    if payout.status not in (PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS):
        payout.save(update_fields=["provider_responses", "updated_at"])
        return payout  # settled meanwhile by another requery or the worker
    payout.requery_count += 1
    _settle(payout, result, now=timezone.now(), from_requery=True)
    payout.save(update_fields=SETTLEMENT_FIELDS)
    logger.info("payout %s requeried: %s", payout.internal_reference, payout.status)
    return payout


def payout_requery(*, payout: Payout) -> Payout:
    """Asks the provider for the payout's status by reference, without resubmitting it.

    * final payouts: 409 (``ConflictError``);
    * ``reserved``, or ``processing`` whose claim went stale: nothing was sent yet (or the worker
      died), so no provider call: the dispatch is queued again and the payout returned as is;
      ``processing`` with a live claim is being sent right now and is returned as is;
    * ``dispatched``/``ambiguous``: the provider's answer settles it (``successful``/``failed``)
      or leaves it ``ambiguous`` with the next automatic requery pushed back exponentially.
    """
    if payout.status in FINAL_STATUSES:
        raise ConflictError(NOT_ELIGIBLE_MESSAGE)
    if payout.status in (PayoutStatus.RESERVED, PayoutStatus.PROCESSING):
        if payout.status == PayoutStatus.RESERVED or _claim_is_stale(payout, now=timezone.now()):
            payout_id = payout.pk
            transaction.on_commit(lambda: payout_dispatch_enqueue(payout_id=payout_id))
        return payout
    provider = provider_get(payout.provider_name)
    result = provider.verify_transfer(reference=payout.internal_reference)
    return _requery_apply(payout_id=payout.pk, result=result)


# --- Returns after success -----------------------------------------------------------------


ALREADY_RETURNED_MESSAGE = "Payout was already returned"
NOT_RETURNABLE_MESSAGE = "Only a successful payout can be returned"
DEFAULT_RETURN_REASON = "Returned by the beneficiary bank"


@dataclass(frozen=True)
class PayoutReturnResult:
    payout: Payout
    applied: bool  # False: it had been returned before; nothing changed


def return_refunds_fee() -> bool:
    """``PAYOUT_RETURN_REFUNDS_FEE``: whether a return gives the merchant the fee back too."""
    return bool(getattr(settings, "PAYOUT_RETURN_REFUNDS_FEE", False))


@transaction.atomic
def payout_return(
    *, payout_id: int, reason: str = "", result: TransferResult | None = None
) -> PayoutReturnResult:
    """A successful payout the beneficiary's bank sent back (Paystack ``reversed`` after
    ``success``): it stays ``successful`` and gains ``returned_at`` and ``return_reason``; its
    principal (and its fee, with ``PAYOUT_RETURN_REFUNDS_FEE``) goes back to the available
    balance in one ``payout_return`` ledger entry; ``payout.returned`` is recorded. Once per
    payout: under the payout's row lock, a second return changes nothing (``applied=False``).
    Anything but a successful payout is a 409."""
    payout = Payout.objects.select_for_update().filter(pk=payout_id).first()
    if payout is None:
        raise NotFoundError("Payout not found")
    if result is not None:
        _record_raw(payout, result)
    if payout.returned_at is not None:
        if result is not None:
            payout.save(update_fields=["provider_responses", "updated_at"])
        return PayoutReturnResult(payout=payout, applied=False)
    if payout.status != PayoutStatus.SUCCESSFUL:
        raise ConflictError(NOT_RETURNABLE_MESSAGE)
    fee_refunded = payout.fee_amount if return_refunds_fee() else Decimal("0.00")
    wallet_return(
        wallet_id=payout.wallet_id,
        amount=payout.amount,
        fee_amount=fee_refunded,
        reference=payout.internal_reference,
        payout_id=payout.pk,
    )
    payout.returned_at = timezone.now()
    payout.return_reason = (reason.strip() or DEFAULT_RETURN_REASON)[:255]
    payout.save(update_fields=["returned_at", "return_reason", "provider_responses", "updated_at"])
    payout_returned_event_emit(payout=payout)
    logger.info("payout %s returned: %s credited back", payout.internal_reference, payout.amount)
    return PayoutReturnResult(payout=payout, applied=True)


def payout_return_check(*, payout: Payout) -> PayoutReturnResult | None:
    """Asks the provider about a successful payout: a failed answer (Paystack's ``reversed``)
    for a transfer we hold as successful means its bank sent it back, and the return is applied.
    ``None`` when the payout is not successful, already returned, or still paid."""
    if payout.status != PayoutStatus.SUCCESSFUL or payout.returned_at is not None:
        return None
    result = provider_get(payout.provider_name).verify_transfer(reference=payout.internal_reference)
    if result.outcome != TransferOutcome.FAILED:
        return None
    return payout_return(payout_id=payout.pk, reason=result.message, result=result)


@dataclass(frozen=True)
class ReturnsCheckReport:
    """What ``payouts_check_returns`` checked and found: the wording of the ops summary and of
    the ``--json`` object."""

    days: int
    checked: int
    returned: tuple[PayoutReturnResult, ...]
    errors: int

    def lines(self) -> list[str]:
        found = [
            f"payout {result.payout.internal_reference} (#{result.payout.pk}): returned "
            f"{format_amount_display(result.payout.amount, result.payout.currency)} "
            f"({result.payout.return_reason})"
            for result in self.returned
        ]
        return [*found, self.summary()]

    def summary(self) -> str:
        return (
            f"Checked {self.checked} successful payout(s) of the last {self.days} day(s): "
            f"{len(self.returned)} returned; {self.errors} error(s)."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "days": self.days,
            "checked": self.checked,
            "returned": [
                {
                    "payout_id": result.payout.pk,
                    "payout": result.payout.internal_reference,
                    "amount": format_amount(result.payout.amount),
                    "currency": result.payout.currency,
                    "reason": result.payout.return_reason,
                }
                for result in self.returned
            ],
            "errors": self.errors,
        }


def payouts_check_returns(
    *, since: timedelta, limit: int, progress: Callable[[int, int], None] | None = None
) -> ReturnsCheckReport:
    """Checks the successful, not yet returned payouts completed within ``since`` (oldest first,
    at most ``limit``) for a return; a payout the provider cannot be asked about is logged and
    counted as an error, and the others are still checked."""
    payouts = list(
        Payout.objects.filter(
            status=PayoutStatus.SUCCESSFUL,
            returned_at__isnull=True,
            completed_at__gte=timezone.now() - since,
        ).order_by("completed_at", "id")[:limit]
    )
    found: list[PayoutReturnResult] = []
    errors = 0
    for index, payout in enumerate(payouts, start=1):
        try:
            returned = payout_return_check(payout=payout)
        except Exception:
            logger.exception("return check of payout %s failed", payout.internal_reference)
            errors += 1
        else:
            if returned is not None and returned.applied:
                found.append(returned)
        if progress is not None:
            progress(index, len(payouts))
    return ReturnsCheckReport(
        days=since.days, checked=len(payouts), returned=tuple(found), errors=errors
    )


# --- Trace ids from statements --------------------------------------------------------------


SESSION_ID_BATCH = 500


def payout_nip_session_ids_record(*, session_ids: Mapping[int, str]) -> int:
    """Keeps the NIP session ids a provider's or bank's statement shows for payouts that have
    none yet (``{payout_id: session_id}``); a session id already on a payout is never replaced.
    Returns how many payouts gained one."""
    usable = {
        payout_id: session_id[:64]
        for payout_id, session_id in session_ids.items()
        if session_id and session_id.isascii() and session_id.isalnum()
    }
    recorded = 0
    payout_ids = sorted(usable)
    for start in range(0, len(payout_ids), SESSION_ID_BATCH):
        batch = payout_ids[start : start + SESSION_ID_BATCH]
        recorded += Payout.objects.filter(pk__in=batch, nip_session_id="").update(
            nip_session_id=Case(
                *(When(pk=payout_id, then=Value(usable[payout_id])) for payout_id in batch),
                output_field=CharField(),
            ),
            updated_at=timezone.now(),
        )
    return recorded


# --- Manual resolution (back office) -------------------------------------------------------


RESOLUTION_REASON_MIN_LENGTH = 10
EVIDENCE_MAX_LENGTHS = {"provider_reference": 100, "nip_session_id": 64}
OPEN_PROPOSAL_EXISTS_MESSAGE = "This payout already has an open resolution proposal"
NOT_AMBIGUOUS_MESSAGE = "Only ambiguous payouts can be resolved manually"
SAME_USER_MESSAGE = "The approver must be a different user than the proposer"


def _resolution_reason_clean(reason: str, *, field: str = "reason") -> str:
    reason = (reason or "").strip()
    if len(reason) < RESOLUTION_REASON_MIN_LENGTH:
        raise ApplicationError(
            f"{field}: a written reason of at least {RESOLUTION_REASON_MIN_LENGTH} characters "
            "is required"
        )
    return reason


def _resolution_status_check(to_status: str) -> None:
    if to_status not in (PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED):
        raise ApplicationError("to_status: must be successful or failed")


def _payout_resolve(
    *, payout: Payout, to_status: str, reason: str, resolved_by: AbstractBaseUser
) -> PayoutResolution:
    """Settles a locked ``ambiguous`` payout as ``to_status`` through the same state machine,
    wallet services and event as the automatic path. The merchant is told the outcome only:
    a failed payout's ``error_message`` is the plain ``DEFAULT_FAILURE_MESSAGE``, never
    ``reason``, which stays in ``PayoutResolution`` and the audit trail."""
    if payout.status != PayoutStatus.AMBIGUOUS:
        raise ConflictError(NOT_AMBIGUOUS_MESSAGE)
    from_status = payout.status
    now = timezone.now()
    if to_status == PayoutStatus.SUCCESSFUL:
        _succeed(payout, now=now)
    else:
        _fail(payout, now=now, message=DEFAULT_FAILURE_MESSAGE)
    payout.save(update_fields=SETTLEMENT_FIELDS)
    resolution = PayoutResolution.objects.create(
        payout=payout,
        from_status=from_status,
        to_status=to_status,
        reason=reason,
        resolved_by=resolved_by,
    )
    logger.info(
        "payout %s resolved manually %s → %s by user %s",
        payout.internal_reference,
        from_status,
        to_status,
        resolved_by.pk,
    )
    return resolution


@transaction.atomic
def payout_resolve_manually(
    *,
    payout_id: int,
    to_status: str,
    reason: str,
    resolved_by: AbstractBaseUser,
    request: HttpRequest | None = None,
) -> PayoutResolution:
    """Settles an ``ambiguous`` payout by one person's decision, recorded with the actor and
    the reason in ``PayoutResolution`` and the audit trail.

    Same state machine and wallet services as the automatic path: ``successful`` captures the
    reserved funds, ``failed`` releases them. The back office never calls this directly: it
    settles only through ``payout_resolution_approve``, a second person's approval of a
    proposal.
    """
    reason = _resolution_reason_clean(reason)
    _resolution_status_check(to_status)
    payout = Payout.objects.select_for_update().get(pk=payout_id)
    resolution = _payout_resolve(
        payout=payout, to_status=to_status, reason=reason, resolved_by=resolved_by
    )
    audit_record(
        actor=resolved_by,
        action="payouts.payout.resolve_manually",
        obj=payout,
        before={"status": resolution.from_status},
        after={"status": payout.status},
        reason=reason,
        request=request,
    )
    return resolution


def _permission_check(user: AbstractBaseUser, permission: str, message: str) -> None:
    if not user.has_perm(permission):  # type: ignore[attr-defined]
        raise ApplicationError(message, status=403)


def _evidence_clean(*, provider_reference: str, nip_session_id: str) -> dict[str, str]:
    evidence = {
        "provider_reference": (provider_reference or "").strip(),
        "nip_session_id": (nip_session_id or "").strip(),
    }
    for name, value in evidence.items():
        if len(value) > EVIDENCE_MAX_LENGTHS[name]:
            raise ApplicationError(
                f"{name}: must be at most {EVIDENCE_MAX_LENGTHS[name]} characters"
            )
    nip_session_id = evidence["nip_session_id"]
    if nip_session_id and not (nip_session_id.isascii() and nip_session_id.isalnum()):
        raise ApplicationError("nip_session_id: must contain only letters and digits")
    return evidence


@transaction.atomic
def payout_resolution_propose(
    *,
    payout_id: int,
    proposed_status: str,
    reason: str,
    proposed_by: AbstractBaseUser,
    provider_reference: str = "",
    nip_session_id: str = "",
    request: HttpRequest | None = None,
) -> PayoutResolutionProposal:
    """Proposes settling an ``ambiguous`` payout as ``successful`` or ``failed``, with an
    internal reason and the evidence (provider reference, NIP session id). Nothing moves until
    another user approves it. A payout has at most one open proposal (409 otherwise).

    The proposer needs ``payouts.propose_resolution``. The reason and the evidence are never
    shown to the merchant.
    """
    _permission_check(
        proposed_by,
        "payouts.propose_resolution",
        "You may not propose payout resolutions",
    )
    reason = _resolution_reason_clean(reason)
    _resolution_status_check(proposed_status)
    evidence = _evidence_clean(provider_reference=provider_reference, nip_session_id=nip_session_id)
    payout = Payout.objects.select_for_update().filter(pk=payout_id).first()
    if payout is None:
        raise NotFoundError("Payout not found")
    if payout.status != PayoutStatus.AMBIGUOUS:
        raise ConflictError(NOT_AMBIGUOUS_MESSAGE)
    if PayoutResolutionProposal.objects.filter(payout=payout, decision="").exists():
        raise ConflictError(OPEN_PROPOSAL_EXISTS_MESSAGE)
    proposal = PayoutResolutionProposal.objects.create(
        payout=payout,
        proposed_status=proposed_status,
        reason=reason,
        proposed_by=proposed_by,
        **evidence,
    )
    audit_record(
        actor=proposed_by,
        action="payouts.payout.resolution_propose",
        obj=payout,
        before={"status": payout.status},
        after={"proposal_id": proposal.pk, "proposed_status": proposed_status, **evidence},
        reason=reason,
        request=request,
    )
    logger.info(
        "payout %s: resolution as %s proposed by user %s",
        payout.internal_reference,
        proposed_status,
        proposed_by.pk,
    )
    return proposal


def _open_proposal_lock(
    *, proposal_id: int, decider: AbstractBaseUser
) -> tuple[Payout, PayoutResolutionProposal]:
    """Locks the payout, then the proposal (the order ``payout_resolution_propose`` uses), and
    checks the proposal is open and ``decider`` is not its proposer."""
    _permission_check(
        decider,
        "payouts.approve_resolution",
        "You may not approve or reject payout resolutions",
    )
    payout_id = (
        PayoutResolutionProposal.objects.filter(pk=proposal_id)
        .values_list("payout_id", flat=True)
        .first()
    )
    if payout_id is None:
        raise NotFoundError("Resolution proposal not found")
    payout = Payout.objects.select_for_update().get(pk=payout_id)
    proposal = PayoutResolutionProposal.objects.select_for_update().get(pk=proposal_id)
    if not proposal.is_open:
        raise ConflictError(f"This proposal was already {proposal.decision}")
    if proposal.proposed_by_id == decider.pk:
        raise ApplicationError(SAME_USER_MESSAGE, status=403)
    return payout, proposal


def _proposal_decide(
    proposal: PayoutResolutionProposal, *, decision: str, decider: AbstractBaseUser, note: str
) -> None:
    proposal.decision = decision
    proposal.decided_by = decider
    proposal.decided_at = timezone.now()
    proposal.decision_note = note
    proposal.save(update_fields=["decision", "decided_by", "decided_at", "decision_note"])


@transaction.atomic
def payout_resolution_approve(
    *,
    proposal_id: int,
    approver: AbstractBaseUser,
    note: str = "",
    request: HttpRequest | None = None,
) -> PayoutResolutionProposal:
    """Approves an open proposal and settles its payout as proposed, in one transaction with
    the ``PayoutResolution`` and the audit record.

    The approver needs ``payouts.approve_resolution`` and must be a different user than the
    proposer (403 otherwise). A payout that is no longer ``ambiguous`` (a requery settled it
    meanwhile) cannot be settled again: 409, and the proposal is left for rejection.
    """
    payout, proposal = _open_proposal_lock(proposal_id=proposal_id, decider=approver)
    note = (note or "").strip()
    if proposal.proposed_status == PayoutStatus.SUCCESSFUL and not payout.nip_session_id:
        # The statement's or bank's session id is the evidence of the credit: keep it.
        payout.nip_session_id = proposal.nip_session_id
    resolution = _payout_resolve(
        payout=payout,
        to_status=proposal.proposed_status,
        reason=proposal.reason,
        resolved_by=approver,
    )
    _proposal_decide(proposal, decision=ResolutionDecision.APPROVED, decider=approver, note=note)
    audit_record(
        actor=approver,
        action="payouts.payout.resolution_approve",
        obj=payout,
        before={"status": resolution.from_status},
        after={
            "status": payout.status,
            "proposal_id": proposal.pk,
            "proposed_by": proposal.proposed_by,
        },
        reason=note,
        request=request,
    )
    return proposal


@transaction.atomic
def payout_resolution_reject(
    *,
    proposal_id: int,
    approver: AbstractBaseUser,
    note: str,
    request: HttpRequest | None = None,
) -> PayoutResolutionProposal:
    """Rejects an open proposal with a written note; the payout stays as it is (``ambiguous``
    unless a requery settled it) and may get a new proposal. Same rules for the approver as
    ``payout_resolution_approve``."""
    note = _resolution_reason_clean(note, field="note")
    payout, proposal = _open_proposal_lock(proposal_id=proposal_id, decider=approver)
    _proposal_decide(proposal, decision=ResolutionDecision.REJECTED, decider=approver, note=note)
    audit_record(
        actor=approver,
        action="payouts.payout.resolution_reject",
        obj=payout,
        before={"proposal_id": proposal.pk, "decision": "open"},
        after={"proposal_id": proposal.pk, "decision": proposal.decision},
        reason=note,
        request=request,
    )
    return proposal


# --- Sweepers --------------------------------------------------------------------------------


REQUERY_LEASE = timedelta(seconds=120)
DEFAULT_SWEEP_LIMIT = 500
REQUERYABLE_STATUSES = (PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS)
DEFERRED_OUTCOME = "deferred (provider unreachable)"


def dispatch_stuck_after() -> timedelta:
    return _seconds_setting("PAYOUT_DISPATCH_STUCK_AFTER", 120)


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

    OUTCOME_LABELS: ClassVar[dict[str, str]] = {
        PayoutStatus.AMBIGUOUS: "still ambiguous",
        PayoutStatus.DISPATCHED: "still dispatched",
    }

    def _considered_text(self) -> str:
        return f"Considered {self.selected} due payout(s)"

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


def payouts_requery_due(
    *,
    now: datetime | None = None,
    limit: int = DEFAULT_SWEEP_LIMIT,
    enqueue: bool = False,
    progress: ProgressCallback | None = None,
) -> RequerySweepReport:
    """Requeries ``ambiguous`` and long-``dispatched`` payouts that are due (never sooner than
    ``PAYOUT_AMBIGUOUS_REQUERY_DELAY`` after becoming ambiguous, then with exponential backoff),
    and reports those not yet due.

    ``enqueue=True`` (Celery beat) leases each payout for a while and hands it to the worker;
    otherwise (management command) each is requeried here.
    """
    now = now or timezone.now()
    report = RequerySweepReport()
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

    The reserved ones were never sent: they go through the batch dispatch, as the wake's task
    would have sent them (``payouts_dispatch_batch`` on their ids, a batch at a time; with
    ``enqueue``, one run of the batch task is published). A stale claim may have reached the
    provider: each goes through the single dispatch, which asks the provider by reference
    before sending again (with ``enqueue``, one task each). Dispatch is idempotent, so racing
    the worker is harmless."""
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

    if enqueue and reserved:
        try:
            tasks.payouts_dispatch_batch_task.apply_async()
            report.count("queued", times=len(reserved))
        except Exception:
            logger.exception("could not queue the batch dispatch of %s payout(s)", len(reserved))
            report.errors += len(reserved)
        advanced(len(reserved))
    elif reserved:
        size = dispatch_batch_size()
        for start in range(0, len(reserved), size):
            chunk = reserved[start : start + size]
            try:
                batch = payouts_dispatch_batch(limit=len(chunk), payout_ids=chunk)
            except Exception:
                logger.exception("batch dispatch of %s stuck payout(s) failed", len(chunk))
                report.errors += len(chunk)
            else:
                for outcome, times in batch.outcomes.items():
                    deferred = outcome == DispatchStep.DEFERRED
                    report.count(DEFERRED_OUTCOME if deferred else outcome, times=times)
                # Not claimed: another attempt took them over since they were selected.
                report.count("skipped", times=len(chunk) - batch.claimed)
            advanced(len(chunk))
    for payout_id in stale:
        try:
            if enqueue:
                tasks.payout_dispatch_task.apply_async(
                    args=[payout_id], kwargs={"allow_retry": False}
                )
                report.count("queued")
            else:
                payout = payout_dispatch(payout_id=payout_id)
                report.count(payout.status if payout is not None else "skipped")
        except DispatchDeferredError:
            report.count(DEFERRED_OUTCOME)
        except Exception:
            logger.exception("dispatch of payout %s failed", payout_id)
            report.errors += 1
        advanced(1)
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
    if payout.status == PayoutStatus.PROCESSING and not _claim_is_stale(payout, now=timezone.now()):
        raise ConflictError(
            f"{label} is processing: a worker claimed it at "
            f"{local_text(payout.dispatch_claimed_at)} and is dispatching it"
        )
    if payout.status not in (PayoutStatus.RESERVED, PayoutStatus.PROCESSING):
        raise ConflictError(
            f"{label} is {payout.status}: only a reserved payout, or a processing one whose "
            f"claim went stale, is dispatched"
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


# --- The list's per-day counts --------------------------------------------------------------

# PostgreSQL: one round of the fold, in one statement. The changes taken are deleted and
# returned (so exactly the rows summed go, and a change committed meanwhile waits for the next
# round); their sums are added to the counts in key order; concurrent folds skip each other's
# rows.
_FOLD_SQL = """
WITH taken AS (
    DELETE FROM payouts_payoutcountchange
    WHERE id IN (
        SELECT id FROM payouts_payoutcountchange ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED
    )
    RETURNING wallet_id, status, day, delta
), folded AS (
    INSERT INTO payouts_payoutdailycount (wallet_id, status, day, count)
    SELECT wallet_id, status, day, sum(delta) FROM taken GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (wallet_id, status, day)
    DO UPDATE SET count = payouts_payoutdailycount.count + EXCLUDED.count
    RETURNING 1
)
SELECT count(*) FROM taken
"""
FOLD_ROUND_SIZE = 10_000


def payout_counts_fold(*, round_size: int = FOLD_ROUND_SIZE) -> int:
    """Folds the count changes the PostgreSQL triggers appended (``PayoutCountChange``) into
    the per-day counts, ``round_size`` changes per transaction, until none is left; returns how
    many it folded. A list total reads counts and changes together, so it is exact before,
    during and after a fold; folding only keeps the changes few."""
    folded = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_FOLD_SQL, [round_size])
            taken = cursor.fetchone()[0]
        folded += taken
        if taken < round_size:
            return folded


@dataclass(frozen=True)
class PayoutCountsRebuild:
    """What ``payout_counts_rebuild`` found and wrote."""

    mismatches: list[PayoutCountMismatch]
    rows_written: int


@transaction.atomic
def payout_counts_rebuild(*, actor: str) -> PayoutCountsRebuild:
    """Recounts every (wallet, status, day) from the payouts and writes the counts afresh (no
    change left to fold), while writes to payouts wait (``SHARE ROW EXCLUSIVE`` on the table
    until commit; reads go on), so no payout written meanwhile is counted twice or missed.
    Recorded in the audit trail with the mismatches it mended. The triggers keep the counts
    from then on; this is the way back should they ever have been bypassed (a trigger
    disabled, the table restored without them)."""
    with connection.cursor() as cursor:
        cursor.execute("LOCK TABLE payouts_payout IN SHARE ROW EXCLUSIVE MODE")
        cursor.execute(
            "LOCK TABLE payouts_payoutcountchange, payouts_payoutdailycount IN EXCLUSIVE MODE"
        )
    counted = payout_counts_recount()
    mismatches = payout_counts_mismatches(counted=counted)
    PayoutCountChange.objects.all().delete()
    PayoutDailyCount.objects.all().delete()
    PayoutDailyCount.objects.bulk_create(
        (
            PayoutDailyCount(wallet_id=wallet_id, status=status, day=day, count=count)
            for (wallet_id, status, day), count in counted.items()
        ),
        batch_size=1000,
    )
    audit_record(
        actor=actor,
        action="payouts.payoutdailycount.rebuild",
        obj=PayoutDailyCount,
        before={"mismatches": len(mismatches)},
        after={"rows": len(counted)},
        reason="payout counts rebuilt from the payouts",
    )
    return PayoutCountsRebuild(mismatches=mismatches, rows_written=len(counted))
