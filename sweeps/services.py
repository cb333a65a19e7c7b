"""Sweep writes: setting the schedule and the settlement account (with its cooling-off period,
its ``settlement_account.changed`` event and its audit record), and making sweeps, by beat on
the schedule or at once when the merchant asks.

Why a new account waits: the classic way to steal a merchant's money is a stolen secret key
that points the payouts at the thief's account. A settlement account (the first one too: a key
stolen before any account was set is the same attack) takes effect only
``SWEEP_ACCOUNT_COOLING_OFF_HOURS`` after it is set, and the change is announced at once by a
``settlement_account.changed`` event, so the merchant has that long to notice and set their own
account back, which cancels the pending one at once.

A sweep is an ordinary payout (``payouts.services.payout_create``) to the account in effect,
with the idempotency key ``sweep-<wallet id>-<Lagos day>``: at most one per wallet per Lagos
day, whatever runs it, however often. The schedule row of the wallet is locked while a sweep is
made (concurrent runs skip a locked wallet), the ``Sweep`` row and the payout commit in one
transaction, and the unique (wallet, day) constraint holds it if all else failed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.services import audit_record
from core.dates import local_date
from core.exceptions import ApplicationError, NotFoundError
from core.money import MAX_AMOUNT, TWO_PLACES, format_amount
from merchants.models import Mode
from payouts.services import payout_create
from sweeps.models import (
    SettlementAccount,
    Sweep,
    SweepSchedule,
    SweepScheduleKind,
    SweepTrigger,
    Weekday,
    account_number_masked,
)
from sweeps.selectors import (
    SWEEP_SETTINGS_NOT_FOUND_MESSAGE,
    SweepSettings,
    settlement_account_in_effect,
    settlement_account_pending,
    settlement_accounts_at,
    sweep_schedules_due,
    sweep_settings_get,
)
from wallets.exceptions import WalletInactiveError
from wallets.models import Bank, Wallet
from wallets.name_enquiry import beneficiary_account_number_validate, name_enquiry_resolve
from wallets.selectors import bank_resolve, payout_fee_calculate, wallet_get
from webhooks.events import event_record, event_timestamp
from webhooks.models import EventType

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from merchants.models import Merchant

logger = logging.getLogger(__name__)

SWEEP_NARRATION = "Sweep to settlement account"
ACCOUNT_REQUIRED_MESSAGE = "settlement_account: required until a settlement account is set"
NO_ACCOUNT_IN_EFFECT_MESSAGE = (
    "settlement_account: no settlement account is in effect yet (a new account takes effect "
    "after its cooling-off period)"
)
NOTHING_TO_SWEEP_MESSAGE = (
    "Nothing to sweep: the available balance does not exceed the amount to keep plus the payout fee"
)
# Enough for any fee schedule whose fee does not fall as the amount grows.
FEE_FIT_STEPS = 8
NO_ACCOUNT_COOLING_OFF_MESSAGE = "No test settlement account is in its cooling-off period"


# --- Settings ----------------------------------------------------------------------------------


def sweep_idempotency_key(*, wallet_id: int, day: Any) -> str:
    """The payout key of a wallet's sweep on a Lagos day (``sweep-42-2026-11-27``)."""
    return f"sweep-{wallet_id}-{day:%Y-%m-%d}"


def cooling_off_period() -> timedelta:
    return timedelta(hours=settings.SWEEP_ACCOUNT_COOLING_OFF_HOURS)


def _schedule_fields_validate(
    *, schedule: str, time: time | None, weekday: str | None, amount_to_keep: Decimal
) -> None:
    if schedule not in SweepScheduleKind.values:
        raise ApplicationError(f"schedule: must be one of {', '.join(SweepScheduleKind.values)}")
    if schedule == SweepScheduleKind.MANUAL:
        if time is not None:
            raise ApplicationError("time: not used by a manual schedule")
        if weekday is not None:
            raise ApplicationError("weekday: not used by a manual schedule")
    else:
        if time is None:
            raise ApplicationError(f"time: required for a {schedule} schedule")
        if schedule == SweepScheduleKind.WEEKLY and weekday is None:
            raise ApplicationError("weekday: required for a weekly schedule")
        if schedule == SweepScheduleKind.DAILY and weekday is not None:
            raise ApplicationError("weekday: only for a weekly schedule")
    if weekday is not None and weekday not in Weekday.values:
        raise ApplicationError(f"weekday: must be one of {', '.join(Weekday.values)}")
    if not isinstance(amount_to_keep, Decimal) or not amount_to_keep.is_finite():
        raise TypeError("amount_to_keep must be a finite Decimal")
    if amount_to_keep < 0 or amount_to_keep != amount_to_keep.quantize(TWO_PLACES):
        raise ApplicationError(
            "amount_to_keep: must be zero or more with at most two decimal places"
        )
    if amount_to_keep > MAX_AMOUNT:
        raise ApplicationError(f"amount_to_keep: must not exceed {MAX_AMOUNT}")


def _account_view(account: SettlementAccount | None) -> dict[str, Any] | None:
    """An account as events and audit records show it: the number masked to its last four."""
    if account is None:
        return None
    return {
        "bank_code": account.bank.bank_code,
        "bank_name": account.bank.name,
        "account_number": account_number_masked(account.account_number),
        "account_name": account.account_name,
        "effective_at": event_timestamp(account.effective_at),
    }


def _settings_view(
    schedule: SweepSchedule | None,
    account: SettlementAccount | None,
    pending: SettlementAccount | None,
) -> dict[str, Any]:
    if schedule is None:
        return {}
    return {
        "schedule": schedule.schedule,
        "time": None if schedule.time is None else f"{schedule.time:%H:%M}",
        "weekday": schedule.weekday,
        "amount_to_keep": format_amount(schedule.amount_to_keep),
        "settlement_account": _account_view(account),
        "pending_account": _account_view(pending),
    }


def _same_account(account: SettlementAccount | None, *, bank: Bank, account_number: str) -> bool:
    return (
        account is not None
        and account.bank_id == bank.pk
        and account.account_number == account_number
    )


@dataclass(frozen=True)
class _AccountRequest:
    bank: Bank
    account_number: str
    account_name: str
    name_enquiry_reference: str


def _account_request_resolve(
    *, merchant: Merchant, mode: str, bank_code: str, account_number: str, now: datetime
) -> _AccountRequest:
    """The requested account, its name resolved by the name enquiry of the mode (the payout
    create's errors: 400 malformed number, unknown bank, name not resolved; 503 unavailable),
    unless it is the account in effect or the pending one, whose name is known."""
    beneficiary_account_number_validate(account_number)
    bank = bank_resolve(bank_code=bank_code)
    for known in settlement_accounts_at(merchant_id=merchant.pk, mode=mode, at=now):
        if known is not None and _same_account(known, bank=bank, account_number=account_number):
            return _AccountRequest(bank, account_number, known.account_name, "")
    resolved = name_enquiry_resolve(mode=mode, account_number=account_number, bank_code=bank_code)
    return _AccountRequest(bank, account_number, resolved.account_name[:200], resolved.reference)


def _schedule_lock(*, wallet: Wallet, defaults: dict[str, Any]) -> tuple[SweepSchedule, bool]:
    """The wallet's schedule row, locked (created with ``defaults`` if it has none)."""
    schedule, created = SweepSchedule.objects.get_or_create(wallet=wallet, defaults=defaults)
    if created:
        return schedule, True
    return SweepSchedule.objects.select_for_update().get(pk=schedule.pk), False


def _account_change(
    *,
    merchant: Merchant,
    mode: str,
    request: _AccountRequest,
    now: datetime,
) -> dict[str, Any] | None:
    """Applies the requested account under the schedule lock; the event's data, or None when
    nothing changed.

    The account in effect again: a pending account is cancelled at once (going back to the
    account in effect is never a risk). The pending account again: nothing. Any other account:
    a new pending row effective after the cooling-off period, replacing any pending one; the
    account in effect stays in effect until then."""
    current, pending = settlement_accounts_at(merchant_id=merchant.pk, mode=mode, at=now)
    if _same_account(pending, bank=request.bank, account_number=request.account_number):
        return None
    if _same_account(current, bank=request.bank, account_number=request.account_number):
        if pending is None:
            return None
        assert current is not None  # noqa: S101 - _same_account implies it
        SettlementAccount.objects.filter(pk=pending.pk).update(superseded_at=now)
        SettlementAccount.objects.filter(pk=current.pk).update(superseded_at=None)
        return {
            "old_account": _account_view(current),
            "new_account": _account_view(current),
            "cancelled_pending_account": _account_view(pending),
            "effective_at": event_timestamp(current.effective_at),
        }
    new = SettlementAccount.objects.create(
        merchant=merchant,
        mode=mode,
        bank=request.bank,
        account_number=request.account_number,
        account_name=request.account_name,
        effective_at=now + cooling_off_period(),
        name_enquiry_reference=request.name_enquiry_reference,
    )
    if pending is not None:
        SettlementAccount.objects.filter(pk=pending.pk).update(superseded_at=now)
    if current is not None:
        SettlementAccount.objects.filter(pk=current.pk).update(superseded_at=new.effective_at)
    return {
        "old_account": _account_view(current),
        "new_account": _account_view(new),
        "cancelled_pending_account": _account_view(pending),
        "effective_at": event_timestamp(new.effective_at),
    }


def sweep_settings_set(
    *,
    merchant: Merchant,
    mode: str,
    schedule: str,
    time: time | None,
    weekday: str | None,
    amount_to_keep: Decimal,
    bank_code: str | None = None,
    account_number: str | None = None,
    actor: AbstractBaseUser | str | None,
    now: datetime | None = None,
) -> SweepSettings:
    """Sets the wallet's sweep schedule, the amount it keeps and, when given, the settlement
    account (``bank_code`` and ``account_number`` together).

    A new account is resolved by name enquiry and takes effect after the cooling-off period
    (see the module's docstring); it is announced by ``settlement_account.changed`` with both
    accounts masked. Every change is audited (``actor``: who made it, e.g. the API key's
    label). A bad value raises a 400 naming its field and changes nothing."""
    now = now or timezone.now()
    _schedule_fields_validate(
        schedule=schedule, time=time, weekday=weekday, amount_to_keep=amount_to_keep
    )
    if (bank_code is None) != (account_number is None):
        raise ApplicationError("settlement_account: bank_code and account_number go together")
    wallet = wallet_get(merchant=merchant, mode=mode)
    request = None
    if bank_code is not None and account_number is not None:
        request = _account_request_resolve(
            merchant=merchant,
            mode=mode,
            bank_code=bank_code,
            account_number=account_number,
            now=now,
        )
    values = {
        "schedule": schedule,
        "time": time.replace(second=0, microsecond=0) if time is not None else None,
        "weekday": weekday,
        "amount_to_keep": amount_to_keep,
    }
    with transaction.atomic():
        row, created = _schedule_lock(wallet=wallet, defaults=values)
        current, pending = settlement_accounts_at(merchant_id=merchant.pk, mode=mode, at=now)
        before = None if created else _settings_view(row, current, pending)
        if request is None and current is None and pending is None:
            raise ApplicationError(ACCOUNT_REQUIRED_MESSAGE)
        changed_fields = [name for name, value in values.items() if getattr(row, name) != value]
        if changed_fields:
            for name in changed_fields:
                setattr(row, name, values[name])
            row.save(update_fields=[*changed_fields, "updated_at"])
        event_data = None
        if request is not None:
            event_data = _account_change(merchant=merchant, mode=mode, request=request, now=now)
        if event_data is not None:
            event_record(
                merchant_id=merchant.pk,
                mode=mode,
                event_type=EventType.SETTLEMENT_ACCOUNT_CHANGED,
                reference=f"settlement-account-{wallet.pk}",
                data={"mode": mode, **event_data},
            )
        if created or changed_fields or event_data is not None:
            current, pending = settlement_accounts_at(merchant_id=merchant.pk, mode=mode, at=now)
            audit_record(
                actor=actor,
                action="sweeps.sweep_settings_set",
                obj=row,
                before=before,
                after=_settings_view(row, current, pending),
            )
            logger.info(
                "sweep settings of wallet %s set (%s)%s",
                wallet.pk,
                schedule,
                "; settlement account changed" if event_data is not None else "",
            )
    return sweep_settings_get(wallet_id=wallet.pk, merchant_id=merchant.pk, mode=mode, now=now)


def settlement_account_cooling_off_end(
    *, merchant: Merchant, actor: str, now: datetime | None = None
) -> SweepSettings:
    """Test mode only: the pending test settlement account takes effect now, as it would at
    the end of its cooling-off period (the account it replaces stops at the same instant), so
    a merchant can try sweeps without waiting a day. Audited; live accounts are never
    touched. 400 when no test account is cooling off."""
    now = now or timezone.now()
    mode = Mode.TEST
    wallet = wallet_get(merchant=merchant, mode=mode)
    with transaction.atomic():
        row = SweepSchedule.objects.select_for_update().filter(wallet=wallet).first()
        pending = settlement_account_pending(merchant_id=merchant.pk, mode=mode, at=now)
        if row is None or pending is None:
            raise ApplicationError(NO_ACCOUNT_COOLING_OFF_MESSAGE)
        current = settlement_account_in_effect(merchant_id=merchant.pk, mode=mode, at=now)
        before = _settings_view(row, current, pending)
        if current is not None:
            SettlementAccount.objects.filter(pk=current.pk).update(superseded_at=now)
        SettlementAccount.objects.filter(pk=pending.pk).update(effective_at=now)
        current = settlement_account_in_effect(merchant_id=merchant.pk, mode=mode, at=now)
        audit_record(
            actor=actor,
            action="sweeps.settlement_account_cooling_off_end",
            obj=row,
            before=before,
            after=_settings_view(row, current, None),
        )
    logger.info("test settlement account of wallet %s in effect now (test helper)", wallet.pk)
    return sweep_settings_get(wallet_id=wallet.pk, merchant_id=merchant.pk, mode=mode, now=now)


# --- Sweeps ------------------------------------------------------------------------------------


def sweep_amount(*, available: Decimal, amount_to_keep: Decimal) -> Decimal | None:
    """The largest payout amount whose total debit (amount + its fee from the fee schedule in
    effect) fits in ``available - amount_to_keep``; None when nothing fits. A payout's amount
    is at most ``MAX_AMOUNT``."""
    budget = available - amount_to_keep
    amount = min(budget, MAX_AMOUNT)
    for _step in range(FEE_FIT_STEPS):
        if amount <= 0:
            return None
        fee = payout_fee_calculate(amount=amount)
        if amount + fee <= budget:
            larger = min(budget - fee, MAX_AMOUNT)
            if larger > amount and payout_fee_calculate(amount=larger) == fee:
                return larger
            return amount
        amount = budget - fee
    return None


class NothingToSweepError(ApplicationError):
    """The available balance does not exceed the amount kept plus the payout fee."""

    def __init__(self) -> None:
        super().__init__(NOTHING_TO_SWEEP_MESSAGE)


@dataclass(frozen=True)
class SweepMade:
    sweep: Sweep
    duplicate: bool  # the day's sweep was made before; nothing new was paid


def _sweep_make(
    *, wallet_id: int, now: datetime, trigger: str, skip_locked: bool
) -> SweepMade | None:
    """Makes the wallet's sweep of the Lagos day of ``now``, or answers the one made already
    (``duplicate``). Under the lock of the wallet's schedule row, in one transaction with the
    payout it creates. None when ``skip_locked`` and another run holds the wallet. Raises the
    payout create's errors (inactive wallet, insufficient balance, name enquiry), and 400 for
    no account in effect or nothing to sweep; nothing is written then."""
    day = local_date(now)
    with transaction.atomic():
        schedule = (
            SweepSchedule.objects.select_for_update(skip_locked=skip_locked, of=("self",))
            .select_related("wallet__merchant")
            .filter(wallet_id=wallet_id)
            .first()
        )
        if schedule is None:
            if skip_locked:
                return None
            raise NotFoundError(SWEEP_SETTINGS_NOT_FOUND_MESSAGE)
        earlier = Sweep.objects.filter(wallet_id=wallet_id, sweep_date=day).first()
        if earlier is not None:
            return SweepMade(sweep=earlier, duplicate=True)
        wallet = schedule.wallet
        account = settlement_account_in_effect(
            merchant_id=wallet.merchant_id, mode=wallet.mode, at=now
        )
        if account is None:
            raise ApplicationError(NO_ACCOUNT_IN_EFFECT_MESSAGE)
        if not wallet.is_active:
            raise WalletInactiveError()
        amount = sweep_amount(
            available=wallet.available_balance, amount_to_keep=schedule.amount_to_keep
        )
        if amount is None:
            raise NothingToSweepError()
        result = payout_create(
            merchant=wallet.merchant,
            mode=wallet.mode,
            account_number=account.account_number,
            bank_code=account.bank.bank_code,
            amount=amount,
            idempotency_key=sweep_idempotency_key(wallet_id=wallet.pk, day=day),
            narration=SWEEP_NARRATION,
            wallet=wallet,
        )
        sweep = Sweep.objects.create(
            wallet=wallet,
            sweep_date=day,
            trigger=trigger,
            settlement_account=account,
            amount=result.payout.amount,
            amount_to_keep=schedule.amount_to_keep,
            payout=result.payout,
        )
    logger.info(
        "sweep of wallet %s on %s: payout %s of %s (%s)",
        wallet_id,
        day,
        result.payout.internal_reference,
        result.payout.amount,
        trigger,
    )
    return SweepMade(sweep=sweep, duplicate=False)


def sweep_run_now(*, merchant: Merchant, mode: str, now: datetime | None = None) -> SweepMade:
    """The merchant's "sweep now" (any schedule): the day's sweep made at once, or the one
    made already today (``duplicate``; one sweep per wallet per Lagos day). Raises what
    ``_sweep_make`` raises: 404 without sweep settings, 400 nothing to sweep, no account in
    effect, inactive wallet, insufficient balance; 503 name enquiry unavailable."""
    wallet = wallet_get(merchant=merchant, mode=mode)
    made = _sweep_make(
        wallet_id=wallet.pk,
        now=now or timezone.now(),
        trigger=SweepTrigger.MANUAL,
        skip_locked=False,
    )
    assert made is not None  # noqa: S101 - only a skip_locked run answers None
    return made


@dataclass
class SweepRunReport:
    swept: list[int] = field(default_factory=list)  # payout ids
    already: int = 0
    busy: int = 0
    skipped: dict[int, str] = field(default_factory=dict)  # wallet id → why

    def summary(self) -> str:
        return (
            f"sweep_run_due: {len(self.swept)} swept, {len(self.skipped)} skipped, "
            f"{self.already} already swept, {self.busy} busy"
        )


def sweep_run_due(*, now: datetime | None = None) -> SweepRunReport:
    """Beat: makes the sweep of every wallet due one at ``now`` (``sweep_schedules_due``).
    A wallet that cannot be swept (inactive, insufficient balance, nothing above the amount
    kept after the fee, name enquiry failing) is logged and skipped, and tried again by the
    next run that day; nothing raises out of here. A wallet another run holds is skipped."""
    now = now or timezone.now()
    report = SweepRunReport()
    wallet_ids = list(sweep_schedules_due(now=now).values_list("wallet_id", flat=True))
    for wallet_id in wallet_ids:
        try:
            made = _sweep_make(
                wallet_id=wallet_id, now=now, trigger=SweepTrigger.SCHEDULE, skip_locked=True
            )
        except NothingToSweepError as error:
            # Only the fee is above the amount kept: routine, tried again by the next run.
            logger.debug("sweep of wallet %s skipped: %s", wallet_id, error.message)
            report.skipped[wallet_id] = error.message
            continue
        except ApplicationError as error:
            logger.info("sweep of wallet %s skipped: %s", wallet_id, error.message)
            report.skipped[wallet_id] = error.message
            continue
        except Exception as error:  # noqa: BLE001 - one wallet never stops the others
            logger.exception("sweep of wallet %s failed", wallet_id)
            report.skipped[wallet_id] = f"{type(error).__name__}"
            continue
        if made is None:
            report.busy += 1
        elif made.duplicate:
            report.already += 1
        else:
            report.swept.append(made.sweep.payout_id)
    if wallet_ids:
        logger.info(report.summary())
    return report
