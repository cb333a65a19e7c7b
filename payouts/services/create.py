"""Creating a payout: idempotent on the wallet's key, total debit reserved and the payout
``reserved`` in one transaction, the dispatcher woken on commit. Also the fingerprint and the
replay rules a bulk request shares, and queueing one payout's dispatch."""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from django.db import IntegrityError, connections, router, transaction
from django.utils import timezone

from core.db import ModelRow, quoted_column, quoted_table, row_insert
from core.exceptions import ConflictError
from core.money import CURRENCY_NGN, format_amount
from payouts import tasks
from payouts.models import (
    Payout,
    PayoutStatus,
)
from payouts.providers.registry import provider_name_for_mode
from payouts.rules import payout_currency_validate
from payouts.services.controls import approval_status_for, scheduled_for_validate
from wallets.exceptions import InsufficientBalanceError, WalletInactiveError
from wallets.models import Bank, Wallet
from wallets.name_enquiry import NameEnquiryResult
from wallets.selectors import bank_resolve, payout_fee_calculate, wallet_get
from wallets.services import (
    name_enquiry_resolve,
    wallet_reserve_if_covered,
)

if TYPE_CHECKING:
    from merchants.models import Merchant

logger = logging.getLogger(__name__)


ZERO = Decimal("0.00")
IDEMPOTENCY_CONFLICT_MESSAGE = "Idempotency key already used for a different payout request"
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.1}


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
    scheduled_for: datetime | None = None,
) -> str:
    """SHA-256 of the normalised parameters: ``"100"`` and ``"100.00"`` are the same payout.
    A scheduled time counts only when given, so unscheduled payouts keep their fingerprints."""
    normalised: dict[str, Any] = {
        "account_number": account_number,
        "bank_code": bank_code,
        "bank_id": bank_id,
        "amount": format_amount(amount),
        "currency": currency,
        "narration": narration or None,
    }
    if scheduled_for is not None:
        normalised["scheduled_for"] = scheduled_for.astimezone(UTC).isoformat()
    encoded = json.dumps(normalised, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()


def internal_reference_generate() -> str:
    """``po_<yyyymmdd>_<20 hex>``: lowercase, digits and ``_`` only (provider-safe)."""
    return f"po_{timezone.now():%Y%m%d}_{secrets.token_hex(10)}"


_PAYOUT_ROW = ModelRow(Payout, "p")


@cache
def _earlier_payout_sql(alias: str) -> str:
    """The idempotency lookup's text, tables and columns named from the model's metadata."""
    connection = connections[alias]

    def p(name: str) -> str:
        return "p." + quoted_column(Payout, name, connection)

    return (
        f"SELECT {_PAYOUT_ROW.columns(connection)} "  # noqa: S608 (names, not values)
        f"FROM {quoted_table(Payout, connection)} p "
        f"WHERE {p('wallet')} = %s AND {p('idempotency_key')} = %s LIMIT 1"
    )


def _earlier_payout(*, wallet_id: int, idempotency_key: str) -> Payout | None:
    """The wallet's payout with this idempotency key, if any: one indexed lookup (the key is
    unique per wallet, so it asks for no order). Every create runs it, so its statement is
    written once per database by hand (docs/architecture.md, "Where the ORM is bypassed"):
    the ORM compiled it in more time than the database took to answer."""
    alias = router.db_for_read(Payout)
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(_earlier_payout_sql(alias), [wallet_id, idempotency_key])
        row = cursor.fetchone()
    if row is None:
        return None
    return cast(Payout, _PAYOUT_ROW.instance(row, connection))


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
    fee_waived: bool = False,
    scheduled_for: datetime | None = None,
    created_by_key_id: int | None = None,
) -> PayoutCreateResult | PayoutPlan:
    """The rules of a create before the wallet lock, in their order: the replay or conflict of
    ``earlier`` (the wallet's payout with this key, looked up by the caller), then the cheap
    checks on an unlocked read (active wallet, fee, ``available_balance``), so hopeless
    requests cost no provider call, then the name enquiry. The reservation checks the wallet
    again as it changes it (``wallet_reserve_if_covered``, ``wallet_reserve_each``).

    The merchant's controls (``payouts.services.controls``): a ``scheduled_for`` is checked
    after the replay (a replay after the time has come is still a replay); a payout a key
    creates at or above the wallet's approval threshold is planned ``pending`` approval."""
    narration = narration or None
    fingerprint = payout_fingerprint(
        account_number=account_number,
        bank_code=bank_code,
        bank_id=bank_id,
        amount=amount,
        currency=currency,
        narration=narration,
        scheduled_for=scheduled_for,
    )
    replay = _replay_of(earlier, fingerprint=fingerprint)
    if replay is not None:
        return replay
    if scheduled_for is not None:
        scheduled_for_validate(scheduled_for=scheduled_for)
    if not wallet.is_active:
        raise WalletInactiveError()
    fee_amount = ZERO if fee_waived else payout_fee_calculate(amount=amount)
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
            "created_by_key_id": created_by_key_id,
            "approval_status": approval_status_for(
                wallet=wallet, amount=amount, created_by_key_id=created_by_key_id
            ),
            "scheduled_for": scheduled_for,
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
    fee_waived: bool = False,
    scheduled_for: datetime | None = None,
    created_by_key_id: int | None = None,
) -> PayoutCreateResult:
    """Accepts a payout: total debit reserved and the payout ``reserved``, in one transaction.

    The idempotency fast path, name enquiry and fee lookup run before the wallet is locked; the
    transaction inserts the payout, then reserves the funds with one conditional update of the
    wallet, which takes its row lock (``wallet_reserve_if_covered``). Concurrent requests with one
    key meet on the unique constraint (wallet, idempotency key): the later insert waits for the
    first, fails, and answers as a replay.

    ``wallet`` is the merchant's wallet of ``mode`` when the caller has read it already (the key
    authentication loads it with the key); it is read here otherwise. Either way it is an
    unlocked read, used only for the checks before the transaction.

    ``fee_waived`` (internal callers only, never the API: the platform's own payouts of
    subaccount shares) charges no fee: the total debit is the amount.

    ``scheduled_for`` (aware; future, at most 30 days ahead) holds the payout until then;
    ``created_by_key_id`` is the API key that creates it: at or above the wallet's approval
    threshold it waits for another key's approval (``payouts.services.controls``).
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
        fee_waived=fee_waived,
        scheduled_for=scheduled_for,
        created_by_key_id=created_by_key_id,
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
    """Inserts the payout (``core.db.row_insert``: the ``INSERT`` a save sends, its text built
    once), then reserves its total debit: the wallet's row lock is taken last, by the
    reservation's update, and held for one more statement (its ledger entry)."""
    payout = Payout(wallet_id=wallet_id, status=PayoutStatus.RESERVED, **fields)
    row_insert(payout)
    _payout_reserve(payout=payout, wallet_id=wallet_id)
    return PayoutCreateResult(payout=payout, duplicate=False)


def _payout_reserve(*, payout: Payout, wallet_id: int) -> None:
    """Reserves the inserted payout's total debit on its wallet (an inactive wallet or too
    little available balance raises, and the transaction rolls the payout back) and wakes the
    dispatcher when the transaction commits (``tasks.payout_dispatch_wake``)."""
    wallet_reserve_if_covered(
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
    outage must not fail the request: the payout waits for the dispatcher's beat round or
    the ``dispatch_stuck`` sweeper."""
    try:
        # One quick retry, then give up: while the broker is down a create answers at once,
        # and the payout waits for the sweeper.
        tasks.payout_dispatch_task.apply_async(args=[payout_id], retry_policy=PUBLISH_RETRY_POLICY)  # type: ignore[arg-type]  # celery takes any sequence; celery-types say tuple
    except Exception:
        logger.exception(
            "could not enqueue dispatch of payout %s; the dispatch_stuck sweeper will", payout_id
        )
        return False
    return True
