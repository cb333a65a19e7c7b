"""Wallet writes, and the rules a fee schedule must keep. This module is the only place balances
change: every function locks the wallet row inside ``transaction.atomic()`` (with
``select_for_update()``, or, for a payout create's reservation, with the conditional ``UPDATE``
that makes it) and writes the ledger entry that explains the change in the same transaction.
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Required, TypedDict, Unpack, cast

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core.db import rows_update
from core.exceptions import ApplicationError, NotFoundError
from core.money import CURRENCY_NGN, MAX_AMOUNT, MAX_WALLET_BALANCE, TWO_PLACES
from merchants.models import Mode
from wallets.exceptions import (
    FundingReferenceConflictError,
    InsufficientBalanceError,
    InsufficientReservedBalanceError,
    WalletBalanceLimitError,
    WalletInactiveError,
)
from wallets.models import (
    COLLECTION_CREDIT_TYPES,
    FundingSource,
    FundingTransfer,
    LedgerEntry,
    LedgerEntryType,
    Wallet,
    WalletStatus,
)
from wallets.name_enquiry import (
    NameEnquiryResult,
    beneficiary_account_number_validate,
    name_enquiry_resolve,
)
from wallets.signals import wallet_balance_low

if TYPE_CHECKING:
    from merchants.models import Merchant

logger = logging.getLogger(__name__)

ZERO = Decimal("0.00")
STATIC_ACCOUNT_ATTEMPTS = 20
WALLET_NOT_FOUND_MESSAGE = "Wallet not found"


# --- Wallet creation ---------------------------------------------------------------------------


def _static_account_number_generate() -> str:
    """A random 10-digit NUBAN-shaped number that does not start with 0."""
    return str(1_000_000_000 + secrets.randbelow(9_000_000_000))


def _static_bank_name(mode: str) -> str:
    if mode == Mode.LIVE:
        return settings.WALLET_STATIC_ACCOUNT_BANK_NAME
    return settings.WALLET_SANDBOX_STATIC_ACCOUNT_BANK_NAME


def _wallet_create(*, merchant: Merchant, mode: str) -> Wallet:
    for _attempt in range(STATIC_ACCOUNT_ATTEMPTS):
        account_number = _static_account_number_generate()
        if Wallet.objects.filter(static_account_number=account_number).exists():
            continue
        try:
            with transaction.atomic():
                return Wallet.objects.create(
                    merchant=merchant,
                    mode=mode,
                    currency=CURRENCY_NGN,
                    static_account_number=account_number,
                    static_bank_name=_static_bank_name(mode),
                    static_account_name=merchant.name[:200],
                )
        except IntegrityError:
            # Another wallet took the number (or this wallet exists already): try again.
            existing = Wallet.objects.filter(merchant=merchant, mode=mode).first()
            if existing is not None:
                return existing
    raise RuntimeError("could not allocate a unique static account number")


@transaction.atomic
def wallets_create_for_merchant(*, merchant: Merchant) -> list[Wallet]:
    """Creates the merchant's test and live wallets, each with its static virtual account.

    Idempotent: an existing wallet of a mode is returned instead of a second one.
    """
    wallets: list[Wallet] = []
    for mode in (Mode.TEST, Mode.LIVE):
        existing = Wallet.objects.filter(merchant=merchant, mode=mode).first()
        wallets.append(existing or _wallet_create(merchant=merchant, mode=mode))
    return wallets


@transaction.atomic
def wallet_status_set(*, wallet_id: int, status: str) -> Wallet:
    """Activates or deactivates a wallet (back office). Balances are untouched."""
    if status not in WalletStatus.values:
        raise ApplicationError(f"status: must be one of {', '.join(WalletStatus.values)}")
    wallet = wallet_lock(wallet_id=wallet_id)
    if wallet.status != status:
        wallet.status = status
        wallet.save(update_fields=["status", "updated_at"])
        logger.info("wallet %s status set to %s", wallet.pk, status)
    return wallet


@transaction.atomic
def wallet_alerts_set(*, wallet_id: int, low_balance_threshold: Decimal | None) -> Wallet:
    """Sets the wallet's low-balance alert threshold, or turns the alert off with ``None``.

    Under the wallet lock, a threshold different from the current one starts a fresh alert
    cycle: if the available balance is already below it, the alert fires now (one
    ``wallet_balance_low`` without a ledger entry) and waits to be re-armed, so the merchant is
    not left unaware of a balance that is already low; otherwise it is armed. Sending the
    current threshold again changes nothing and sends nothing. The threshold must be greater
    than zero (a zero threshold could never fire: use ``None``).
    """
    if low_balance_threshold is not None:
        low_balance_threshold = _require_positive(
            low_balance_threshold, name="low_balance_threshold"
        )
    wallet = wallet_lock(wallet_id=wallet_id)
    if wallet.low_balance_threshold == low_balance_threshold:
        return wallet
    below = low_balance_threshold is not None and wallet.available_balance < low_balance_threshold
    wallet.low_balance_threshold = low_balance_threshold
    wallet.low_balance_alerted = below
    wallet.save(update_fields=["low_balance_threshold", "low_balance_alerted", "updated_at"])
    logger.info("wallet %s low-balance threshold set to %s", wallet.pk, low_balance_threshold)
    if below:
        wallet_balance_low.send(
            sender=Wallet,
            wallet=wallet,
            available_balance=wallet.available_balance,
            low_balance_threshold=low_balance_threshold,
            ledger_entry=None,
        )
    return wallet


# --- Locking and ledger writes -----------------------------------------------------------------


def _in_atomic_block() -> bool:
    """True inside a ``transaction.atomic()`` opened by the code, not only by a test case.

    Test cases wrap every test in atomic blocks marked ``_from_testcase`` (Django uses the same
    mark for ``durable=True``); ignoring them keeps this check meaningful under tests.
    """
    connection = transaction.get_connection()
    return any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks)


def wallet_lock(*, wallet_id: int) -> Wallet:
    """Locks the wallet row until the surrounding transaction ends and returns it fresh."""
    if not _in_atomic_block():
        raise RuntimeError("wallet_lock must be called inside transaction.atomic()")
    try:
        return Wallet.objects.select_for_update().get(pk=wallet_id)
    except Wallet.DoesNotExist:
        raise NotFoundError(WALLET_NOT_FOUND_MESSAGE) from None


def _require_positive(amount: Decimal, *, name: str = "amount") -> Decimal:
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise TypeError(f"{name} must be a finite Decimal")
    if amount != amount.quantize(TWO_PLACES):
        raise ApplicationError(f"{name}: must have at most two decimal places")
    if amount <= 0:
        raise ApplicationError(f"{name}: must be greater than zero")
    if amount > MAX_AMOUNT:
        raise ApplicationError(f"{name}: must not exceed {MAX_AMOUNT}")
    return amount.quantize(TWO_PLACES)


def _require_non_negative(amount: Decimal, *, name: str) -> Decimal:
    if not isinstance(amount, Decimal) or not amount.is_finite():
        raise TypeError(f"{name} must be a finite Decimal")
    if amount != amount.quantize(TWO_PLACES) or amount < 0:
        raise ApplicationError(f"{name}: must be zero or more with at most two decimal places")
    return amount.quantize(TWO_PLACES)


def _ledger_entry_build(
    *,
    wallet: Wallet,
    entry_type: str,
    amount: Decimal,
    available_delta: Decimal,
    reserved_delta: Decimal,
    reference: str,
    fee_amount: Decimal = ZERO,
    payout_id: int | None = None,
    description: str = "",
) -> tuple[LedgerEntry, bool]:
    """Applies the deltas to the locked wallet in memory and builds the entry that explains
    them (not saved yet); True when this entry takes the available balance below the
    low-balance threshold.

    Keeps the low-balance alert too, with the row already locked and loaded: ``low_balance_
    alerted`` holds exactly when available < threshold, so an armed (not alerted) wallet was at
    or above the threshold before this entry; ending it below is the downward crossing, which
    sets the flag (``wallet_balance_low`` is sent once the entry exists). Ending an alerted
    wallet at or above re-arms.
    """
    available_after = wallet.available_balance + available_delta
    reserved_after = wallet.reserved_balance + reserved_delta
    if available_after < 0 or reserved_after < 0:
        # The service checks make this unreachable; the CHECK constraints are the backstop.
        raise RuntimeError("wallet balance would become negative")
    if available_after + reserved_after > MAX_WALLET_BALANCE:
        raise WalletBalanceLimitError()
    wallet.available_balance = available_after
    wallet.reserved_balance = reserved_after
    threshold = wallet.low_balance_threshold
    crossed_below = False
    if threshold is not None and (available_after < threshold) != wallet.low_balance_alerted:
        crossed_below = not wallet.low_balance_alerted
        wallet.low_balance_alerted = crossed_below
    entry = LedgerEntry(
        wallet=wallet,
        entry_type=entry_type,
        amount=amount,
        fee_amount=fee_amount,
        available_delta=available_delta,
        reserved_delta=reserved_delta,
        available_balance_after=wallet.available_balance,
        reserved_balance_after=wallet.reserved_balance,
        reference=reference[:100],
        payout_id=payout_id,
        description=description[:255],
    )
    return entry, crossed_below


def _wallet_balances_save(wallet: Wallet, *, alerted_before: bool) -> None:
    """Saves the balances (and the alert flag when it flipped) of the locked wallet."""
    update_fields = ["available_balance", "reserved_balance", "updated_at"]
    if wallet.low_balance_alerted != alerted_before:
        update_fields.append("low_balance_alerted")
    wallet.save(update_fields=update_fields)


def _balance_low_send(wallet: Wallet, entry: LedgerEntry) -> None:
    wallet_balance_low.send(
        sender=Wallet,
        wallet=wallet,
        available_balance=entry.available_balance_after,
        low_balance_threshold=wallet.low_balance_threshold,
        ledger_entry=entry,
    )


def _ledger_write(
    *,
    wallet: Wallet,
    entry_type: str,
    amount: Decimal,
    available_delta: Decimal,
    reserved_delta: Decimal,
    reference: str,
    fee_amount: Decimal = ZERO,
    payout_id: int | None = None,
    description: str = "",
) -> LedgerEntry:
    """Applies the deltas to the locked wallet and records the entry; same transaction (no
    query for the alert without a threshold, one more column saved when it flips)."""
    alerted_before = wallet.low_balance_alerted
    entry, crossed_below = _ledger_entry_build(
        wallet=wallet,
        entry_type=entry_type,
        amount=amount,
        available_delta=available_delta,
        reserved_delta=reserved_delta,
        reference=reference,
        fee_amount=fee_amount,
        payout_id=payout_id,
        description=description,
    )
    _wallet_balances_save(wallet, alerted_before=alerted_before)
    entry.save(force_insert=True)
    if crossed_below:
        _balance_low_send(wallet, entry)
    return entry


def _reserve_entry_build(
    wallet: Wallet, *, amount: Decimal, reference: str, payout_id: int | None
) -> tuple[LedgerEntry, bool]:
    """A reservation's ``payout_reserve`` entry (``_ledger_entry_build``): ``amount`` moves from
    available to reserved."""
    return _ledger_entry_build(
        wallet=wallet,
        entry_type=LedgerEntryType.PAYOUT_RESERVE,
        amount=amount,
        available_delta=-amount,
        reserved_delta=amount,
        reference=reference,
        payout_id=payout_id,
    )


@functools.cache
def _wallet_reserve_statement() -> str:
    """The ``UPDATE … RETURNING`` of :func:`wallet_reserve_if_covered`, built once from the
    model's table and column names. It moves an amount (kobo) from available to reserved and
    stamps ``updated_at`` if the wallet is active and its available balance covers the amount,
    and returns every column of the row as updated. Parameters: the amount, the amount, the
    time, the wallet's id, the active status, the amount."""
    quote = connection.ops.quote_name

    def column(name: str) -> str:
        field: Any = Wallet._meta.get_field(name)  # a concrete column of Wallet
        return quote(field.column)

    available, reserved = column("available_balance"), column("reserved_balance")
    returned = ", ".join(quote(cast(str, field.column)) for field in Wallet._meta.concrete_fields)
    return (
        f"UPDATE {quote(Wallet._meta.db_table)} "  # noqa: S608 - names from the model; values are %s
        f"SET {available} = {available} - %s, {reserved} = {reserved} + %s, "
        f"{column('updated_at')} = %s "
        f"WHERE {column('id')} = %s AND {column('status')} = %s AND {available} >= %s "
        f"RETURNING {returned}"
    )


def wallet_reserve_if_covered(
    *, wallet_id: int, amount: Decimal, reference: str, payout_id: int | None = None
) -> LedgerEntry:
    """Moves ``amount`` (a payout's total debit) from available to reserved if the wallet is
    active and its available balance covers it (a single create's reservation), without locking
    the wallet first: one conditional ``UPDATE … RETURNING`` changes the balances only then,
    and takes the row lock itself (held until the caller's transaction ends), so a concurrent
    reservation waits and is checked against the balance this one left. Not a transaction of
    its own: the caller's ``transaction.atomic()`` holds it.

    The entry (its balance-after snapshots are the balances the update returned) and the
    low-balance alert come from ``_ledger_entry_build``, the rules every ledger write follows;
    the alert flag is saved by one more statement only when it flips. No row updated: one read
    tells why (``WalletInactiveError``, then ``InsufficientBalanceError``, as
    ``wallet_reserve_each`` refuses); nothing has changed. Must run inside the caller's
    ``transaction.atomic()`` (with the payout row it reserves for).
    """
    if not _in_atomic_block():
        raise RuntimeError("wallet_reserve_if_covered must be called inside transaction.atomic()")
    amount = _require_positive(amount)
    # Money crosses into SQL as the column's integer kobo and comes back through the field's
    # from_db_value (raw() applies the converters), as the ORM would: never as a float.
    kobo = Wallet._meta.get_field("available_balance").get_db_prep_value(amount, connection)
    now = Wallet._meta.get_field("updated_at").get_db_prep_value(timezone.now(), connection)
    updated = list(
        Wallet.objects.raw(
            _wallet_reserve_statement(),
            [kobo, kobo, now, wallet_id, WalletStatus.ACTIVE.value, kobo],
        )
    )
    if not updated:
        status = Wallet.objects.filter(pk=wallet_id).values_list("status", flat=True).first()
        if status is None:
            raise NotFoundError(WALLET_NOT_FOUND_MESSAGE)
        if status != WalletStatus.ACTIVE:
            raise WalletInactiveError()
        raise InsufficientBalanceError()
    [wallet] = updated
    # The balances the update started from: _ledger_entry_build applies the deltas to them
    # again, in memory, to build the entry and decide the alert exactly as for any other write.
    wallet.available_balance += amount
    wallet.reserved_balance -= amount
    alerted_before = wallet.low_balance_alerted
    entry, crossed_below = _reserve_entry_build(
        wallet, amount=amount, reference=reference, payout_id=payout_id
    )
    if wallet.low_balance_alerted != alerted_before:
        wallet.save(update_fields=["low_balance_alerted"])
    entry.save(force_insert=True)
    if crossed_below:
        _balance_low_send(wallet, entry)
    return entry


@dataclass(frozen=True)
class WalletReservation:
    """One payout's total debit to reserve (``wallet_reserve_each``)."""

    amount: Decimal
    reference: str
    payout_id: int | None = None


def wallet_reserve_each(
    *, wallet: Wallet, reservations: Sequence[WalletReservation]
) -> list[LedgerEntry | None]:
    """Reserves many payouts' total debits at once (a bulk payout), in order, on the instance
    returned by :func:`wallet_lock` in the current transaction.

    Each reservation the available balance left by the ones before it still covers moves its
    amount from available to reserved with its own ``payout_reserve`` entry; one it does not
    cover gets ``None`` and changes nothing (the
    caller refuses it). Two statements whatever the count: the wallet's balances, then the
    entries. A wallet that is not active refuses them all (``WalletInactiveError``).
    """
    if not _in_atomic_block():
        raise RuntimeError("wallet_reserve_each must be called inside transaction.atomic()")
    if wallet.status != WalletStatus.ACTIVE:
        raise WalletInactiveError()
    alerted_before = wallet.low_balance_alerted
    answers: list[LedgerEntry | None] = []
    crossing: LedgerEntry | None = None
    for reservation in reservations:
        amount = _require_positive(reservation.amount)
        if wallet.available_balance < amount:
            answers.append(None)
            continue
        entry, crossed_below = _reserve_entry_build(
            wallet, amount=amount, reference=reservation.reference, payout_id=reservation.payout_id
        )
        answers.append(entry)
        if crossed_below:
            crossing = entry
    entries = [entry for entry in answers if entry is not None]
    if entries:
        _wallet_balances_save(wallet, alerted_before=alerted_before)
        LedgerEntry.objects.bulk_create(entries)
        if crossing is not None and wallet.low_balance_alerted:
            _balance_low_send(wallet, crossing)
    return answers


class ReservationSettlementKind(StrEnum):
    """What a payout's settlement does to its reservation."""

    CAPTURE = "capture"  # a successful payout: reserved -= total debit; ``payout_debit``
    RELEASE = "release"  # a failed payout: reserved -> available; ``payout_reversal``


@dataclass(frozen=True)
class ReservationSettlement:
    """One payout's capture or release (``wallet_reservations_settle``). ``amount`` is the
    principal of a capture (``fee_amount`` its fee) or the total debit a release gives back
    (``fee_amount`` zero)."""

    kind: ReservationSettlementKind
    wallet_id: int
    amount: Decimal
    reference: str
    fee_amount: Decimal = ZERO
    payout_id: int | None = None


def _settlement_entry_build(
    wallet: Wallet, settlement: ReservationSettlement
) -> tuple[LedgerEntry, bool]:
    """The rules of a capture or a release for one settlement, applied to the locked wallet in
    memory: its entry (not saved) and whether it crossed the low-balance
    threshold."""
    if settlement.wallet_id != wallet.pk:
        raise ValueError(f"settlement {settlement.reference}: belongs to another wallet")
    amount = _require_positive(settlement.amount)
    if settlement.kind == ReservationSettlementKind.CAPTURE:
        fee_amount = _require_non_negative(settlement.fee_amount, name="fee_amount")
        entry_type, available_delta, total = LedgerEntryType.PAYOUT_DEBIT, ZERO, amount + fee_amount
    elif settlement.kind == ReservationSettlementKind.RELEASE:
        fee_amount, entry_type, total = ZERO, LedgerEntryType.PAYOUT_REVERSAL, amount
        available_delta = amount
    else:
        raise ValueError(f"unknown settlement kind {settlement.kind!r}")
    if wallet.reserved_balance < total:
        raise InsufficientReservedBalanceError()
    return _ledger_entry_build(
        wallet=wallet,
        entry_type=entry_type,
        amount=amount,
        fee_amount=fee_amount,
        available_delta=available_delta,
        reserved_delta=-total,
        reference=settlement.reference,
        payout_id=settlement.payout_id,
    )


# What a settlement changes on a wallet (the alert flag written whether or not it flipped).
SETTLED_WALLET_FIELDS = (
    "available_balance",
    "reserved_balance",
    "low_balance_alerted",
    "updated_at",
)


def wallet_reservations_settle(
    *, settlements: Sequence[ReservationSettlement]
) -> list[LedgerEntry]:
    """Captures (successful payouts) and releases (failed ones) the reservations of one payout
    or many, of any wallets (a dispatch round), inside the caller's transaction, in three
    statements whatever their number: the wallets locked together in ascending id (the fixed
    order of every multi-row lock), their balances written together (``core.db.rows_update``),
    every entry inserted together. The entries, wallet by wallet.

    Each wallet's settlements apply in the order given, each checked against the reserved
    balance the ones before it left (``InsufficientReservedBalanceError`` otherwise, and
    nothing is written), each with its own ``payout_debit`` or ``payout_reversal`` entry whose
    balance-after snapshots are the running balances. The low-balance alert follows the rules
    of every ledger write and is sent at most once per wallet. Every check is made before the
    first write, so a refusal leaves the caller's transaction usable.
    """
    if not _in_atomic_block():
        raise RuntimeError("wallet_reservations_settle must be called inside transaction.atomic()")
    by_wallet: dict[int, list[ReservationSettlement]] = {}
    for settlement in settlements:
        by_wallet.setdefault(settlement.wallet_id, []).append(settlement)
    if not by_wallet:
        return []
    wallets = list(Wallet.objects.select_for_update().filter(pk__in=by_wallet).order_by("pk"))
    if len(wallets) != len(by_wallet):
        raise NotFoundError(WALLET_NOT_FOUND_MESSAGE)
    now = timezone.now()
    entries: list[LedgerEntry] = []
    alerts: list[tuple[Wallet, LedgerEntry]] = []
    for wallet in wallets:
        crossing: LedgerEntry | None = None
        for settlement in by_wallet[wallet.pk]:
            entry, crossed_below = _settlement_entry_build(wallet, settlement)
            entries.append(entry)
            if crossed_below:
                crossing = entry
        wallet.updated_at = now
        if crossing is not None and wallet.low_balance_alerted:
            alerts.append((wallet, crossing))
    rows_update(wallets, SETTLED_WALLET_FIELDS)
    LedgerEntry.objects.bulk_create(entries)
    for wallet, crossing in alerts:
        _balance_low_send(wallet, crossing)
    return entries


@transaction.atomic
def wallet_return(
    *,
    wallet_id: int,
    amount: Decimal,
    fee_amount: Decimal,
    reference: str,
    payout_id: int | None = None,
) -> LedgerEntry:
    """Credits a returned payout (sent back by the beneficiary's bank after it succeeded) to the
    available balance: ``amount`` (the principal) plus ``fee_amount`` (the fee refunded, zero
    when it is kept); one ``payout_return`` entry. The wallet may be inactive: money owed back is
    always credited."""
    amount = _require_positive(amount)
    fee_amount = _require_non_negative(fee_amount, name="fee_amount")
    wallet = wallet_lock(wallet_id=wallet_id)
    return _ledger_write(
        wallet=wallet,
        entry_type=LedgerEntryType.PAYOUT_RETURN,
        amount=amount,
        fee_amount=fee_amount,
        available_delta=amount + fee_amount,
        reserved_delta=ZERO,
        reference=reference,
        payout_id=payout_id,
        description="returned by the beneficiary bank",
    )


# --- Settlement and refunds --------------------------------------------------------------------
# What each collection-side writer may record (``COLLECTION_CREDIT_TYPES``); the type says
# which way the money moves.


def wallet_collection_credit(
    *, wallet: Wallet, entry_type: str, amount: Decimal, reference: str, description: str = ""
) -> LedgerEntry:
    """Credits collected money to the available balance of ``wallet``, which the caller has
    locked (``wallet_lock``) in its transaction: a settlement's net, a failed refund's wallet
    part put back, or a settlement's subaccount shares on the platform's wallet. The wallet
    may be inactive: money owed is always credited."""
    if entry_type not in COLLECTION_CREDIT_TYPES:
        raise ValueError(f"entry_type: {entry_type!r} is not a collection credit")
    amount = _require_positive(amount)
    if not _in_atomic_block():
        raise RuntimeError("wallet_collection_credit must be called inside transaction.atomic()")
    return _ledger_write(
        wallet=wallet,
        entry_type=entry_type,
        amount=amount,
        available_delta=amount,
        reserved_delta=ZERO,
        reference=reference,
        description=description,
    )


def wallet_refund_debit(
    *, wallet: Wallet, amount: Decimal, reference: str, description: str = ""
) -> LedgerEntry:
    """Takes a refund's wallet part from the available balance of ``wallet``, which the caller
    has locked (``wallet_lock``) in its transaction; ``InsufficientBalanceError`` (400, nothing
    changed) when the balance does not cover it. One ``refund`` entry."""
    amount = _require_positive(amount)
    if not _in_atomic_block():
        raise RuntimeError("wallet_refund_debit must be called inside transaction.atomic()")
    if wallet.available_balance < amount:
        raise InsufficientBalanceError()
    return _ledger_write(
        wallet=wallet,
        entry_type=LedgerEntryType.REFUND,
        amount=amount,
        available_delta=-amount,
        reserved_delta=ZERO,
        reference=reference,
        description=description,
    )


# --- Funding -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FundingResult:
    funding_transfer: FundingTransfer
    wallet: Wallet
    duplicate: bool

    @property
    def ledger_entry(self) -> LedgerEntry:
        return self.funding_transfer.ledger_entry


def _funding_same_reference(*, wallet: Wallet, reference: str) -> FundingTransfer | None:
    """The funding that already holds ``reference`` where the wallet's mode looks for it: any
    live wallet for a live wallet (the provider's reference names one transfer), the wallet
    itself in test mode (a merchant-chosen reference, private to that wallet)."""
    fundings = FundingTransfer.objects.select_related("ledger_entry").filter(
        provider_reference=reference
    )
    if wallet.mode == Mode.LIVE:
        fundings = fundings.filter(mode=Mode.LIVE)
    else:
        fundings = fundings.filter(wallet_id=wallet.pk)
    return fundings.first()


def _funding_duplicate(
    *, existing: FundingTransfer, wallet_id: int, amount: Decimal
) -> FundingResult:
    if existing.wallet_id != wallet_id or existing.amount != amount:
        logger.warning(
            "funding reference %s replayed with different wallet or amount; ignored",
            existing.provider_reference,
        )
        raise FundingReferenceConflictError()
    logger.info(
        "funding reference %s already credited; replay ignored", existing.provider_reference
    )
    return FundingResult(
        funding_transfer=existing,
        wallet=Wallet.objects.get(pk=wallet_id),
        duplicate=True,
    )


@transaction.atomic
def wallet_fund(
    *,
    wallet_id: int,
    amount: Decimal,
    reference: str,
    source: str = FundingSource.PROVIDER,
    currency: str = CURRENCY_NGN,
    sender_account_name: str = "",
    sender_account_number: str = "",
    sender_bank_name: str = "",
    narration: str = "",
    raw_payload: dict[str, Any] | None = None,
) -> FundingResult:
    """Credits an inbound transfer to available balance, once per ``reference``.

    A live reference is credited once among all live wallets (the same reference to another
    live wallet is a conflict); a test reference once per wallet, whatever other merchants or
    the live mode hold. Replays of the same reference (even concurrent ones) return the
    original transfer with ``duplicate=True``: the wallet lock serialises them, the unique
    constraints back it up. Inactive wallets are still credited: the money has arrived in the
    static account.
    """
    amount = _require_positive(amount)
    reference = reference.strip()
    if not reference or len(reference) > 100:
        raise ApplicationError("reference: must be 1 to 100 characters")
    if currency != CURRENCY_NGN:
        raise ApplicationError("currency: only NGN transfers can be credited")
    wallet = wallet_lock(wallet_id=wallet_id)
    existing = _funding_same_reference(wallet=wallet, reference=reference)
    if existing is not None:
        return _funding_duplicate(existing=existing, wallet_id=wallet.pk, amount=amount)
    try:
        with transaction.atomic():
            entry = _ledger_write(
                wallet=wallet,
                entry_type=LedgerEntryType.FUNDING,
                amount=amount,
                available_delta=amount,
                reserved_delta=ZERO,
                reference=reference,
                description=narration,
            )
            funding = FundingTransfer.objects.create(
                provider_reference=reference,
                wallet=wallet,
                mode=wallet.mode,
                ledger_entry=entry,
                amount=amount,
                currency=currency,
                source=source,
                receiving_account_number=wallet.static_account_number,
                sender_account_name=sender_account_name[:200],
                sender_account_number=sender_account_number[:20],
                sender_bank_name=sender_bank_name[:150],
                narration=narration[:255],
                raw_payload=raw_payload or {},
            )
    except IntegrityError:
        # The same live reference was credited to another live wallet concurrently.
        wallet.refresh_from_db()
        existing = _funding_same_reference(wallet=wallet, reference=reference)
        if existing is None:
            raise
        return _funding_duplicate(existing=existing, wallet_id=wallet.pk, amount=amount)
    logger.info("wallet %s funded %s (reference %s)", wallet.pk, amount, reference)
    return FundingResult(funding_transfer=funding, wallet=wallet, duplicate=False)


class FundingDetails(TypedDict, total=False):
    """What an inbound transfer says besides the wallet it went to: ``wallet_fund``'s keyword
    arguments, whose defaults apply to what is left out."""

    amount: Required[Decimal]
    reference: Required[str]
    source: str
    currency: str
    sender_account_name: str
    sender_account_number: str
    sender_bank_name: str
    narration: str
    raw_payload: dict[str, Any] | None


def funding_receive(*, account_number: str, **details: Unpack[FundingDetails]) -> FundingResult:
    """Credits the wallet that owns the receiving static ``account_number`` (``wallet_fund``)."""
    wallet_id = (
        Wallet.objects.filter(static_account_number=account_number)
        .values_list("pk", flat=True)
        .first()
    )
    if wallet_id is None:
        raise NotFoundError("Receiving account number is not assigned to any wallet")
    return wallet_fund(wallet_id=wallet_id, **details)


__all__ = [
    "FundingResult",
    "NameEnquiryResult",
    "WalletReservation",
    "ReservationSettlement",
    "ReservationSettlementKind",
    "beneficiary_account_number_validate",
    "funding_receive",
    "name_enquiry_resolve",
    "wallet_alerts_set",
    "wallet_fund",
    "wallet_lock",
    "wallet_reserve_if_covered",
    "wallet_reserve_each",
    "wallet_status_set",
    "wallets_create_for_merchant",
    "wallet_reservations_settle",
    "wallet_collection_credit",
    "wallet_refund_debit",
]
