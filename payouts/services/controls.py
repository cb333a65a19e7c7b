"""The merchant's own controls over its payouts (extensions beside the spec's routes): a wallet's
approval threshold, a second key's approval of a payout at or above it, payouts scheduled for
later, cancelling a payout that is still held, and the sweeper that cancels approvals left
pending too long (``PAYOUT_APPROVAL_EXPIRES_AFTER``).

A held payout (its approval pending, or its scheduled time not come) is ``reserved`` with its
funds held, and dispatch never claims it (``payouts.models.payout_dispatchable_q``, checked by
the claim under its row lock). Every write here locks the payout row first and checks again, so
an approve, a cancel, an expiry and the claim exclude one another: exactly one of them wins. A
cancel and an expiry are one path (``_payout_withdraw``): ``reserved → failed``, the funds
released by the one settling write (a ``payout_reversal`` entry) and ``payout.failed`` sent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from audit.services import audit_record
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from payouts import tasks
from payouts.models import Payout, PayoutApprovalStatus, PayoutStatus, payout_is_held
from payouts.selectors import PAYOUT_NOT_FOUND_MESSAGE
from payouts.services.settle import PayoutFinalEffects, payout_fail, payouts_settled_write
from payouts.services.timing import seconds_setting
from wallets.models import Wallet
from wallets.services import wallet_lock

if TYPE_CHECKING:
    from merchants.models import Merchant

logger = logging.getLogger(__name__)

CANCELLED_MESSAGE = "Cancelled by the merchant"
APPROVAL_EXPIRED_MESSAGE = "Approval expired"
NO_APPROVAL_NEEDED_MESSAGE = "Payout needs no approval"
ALREADY_APPROVED_MESSAGE = "Payout is already approved"
SAME_KEY_MESSAGE = "A payout must be approved with another key than the one that created it"
NOT_HELD_MESSAGE = (
    "Only a payout awaiting approval or its scheduled time can be cancelled; this one is {state}"
)
THRESHOLD_POSITIVE_MESSAGE = "approval_threshold: must be greater than zero, or null"
SCHEDULE_FUTURE_MESSAGE = "scheduled_for: must be in the future"
SCHEDULE_TOO_FAR_MESSAGE = "scheduled_for: must be at most {days} days ahead"
EXPIRY_ACTOR = "payouts.approval_expiry"
DEFAULT_EXPIRY_LIMIT = 500


def approval_expires_after() -> timedelta:
    """``PAYOUT_APPROVAL_EXPIRES_AFTER``: a pending approval older than this is cancelled."""
    return seconds_setting("PAYOUT_APPROVAL_EXPIRES_AFTER", 24 * 3600)


def schedule_max_ahead() -> timedelta:
    """``PAYOUT_SCHEDULE_MAX_AHEAD``: how far ahead a payout may be scheduled (30 days)."""
    return seconds_setting("PAYOUT_SCHEDULE_MAX_AHEAD", 30 * 24 * 3600)


def scheduled_for_validate(*, scheduled_for: datetime, now: datetime | None = None) -> None:
    """A payout's scheduled time: in the future and at most ``schedule_max_ahead()`` ahead;
    400 naming ``scheduled_for`` otherwise."""
    now = now or timezone.now()
    if scheduled_for <= now:
        raise ApplicationError(SCHEDULE_FUTURE_MESSAGE)
    max_ahead = schedule_max_ahead()
    if scheduled_for > now + max_ahead:
        days = max_ahead.total_seconds() / 86400
        raise ApplicationError(SCHEDULE_TOO_FAR_MESSAGE.format(days=f"{days:g}"))


def approval_status_for(*, wallet: Wallet, amount: Decimal, created_by_key_id: int | None) -> str:
    """``pending`` for a payout a key creates (the API) of at least the wallet's approval
    threshold; ``not_required`` otherwise (no threshold, or the service's own payouts: sweeps,
    subaccount shares, back-office uploads). The threshold is read as the create read the
    wallet, before its lock."""
    threshold = wallet.approval_threshold
    if created_by_key_id is None or threshold is None or amount < threshold:
        return PayoutApprovalStatus.NOT_REQUIRED
    return PayoutApprovalStatus.PENDING


@transaction.atomic
def payout_approval_threshold_set(
    *, wallet_id: int, approval_threshold: Decimal | None, actor: str
) -> Wallet:
    """Sets the wallet's approval threshold (greater than zero), or turns approval off with
    ``None``; under the wallet lock, audited when it changes. Payouts created before keep the
    approval they were created with."""
    if approval_threshold is not None and approval_threshold <= 0:
        raise ApplicationError(THRESHOLD_POSITIVE_MESSAGE)
    wallet = wallet_lock(wallet_id=wallet_id)
    before = wallet.approval_threshold
    if before == approval_threshold:
        return wallet
    wallet.approval_threshold = approval_threshold
    wallet.save(update_fields=["approval_threshold", "updated_at"])
    audit_record(
        actor=actor,
        action="wallets.wallet.approval_threshold_set",
        obj=wallet,
        before={"approval_threshold": before},
        after={"approval_threshold": approval_threshold},
    )
    logger.info("wallet %s approval threshold set to %s", wallet.pk, approval_threshold)
    return wallet


def _payout_lock(*, merchant: Merchant, mode: str, payout_id: int) -> Payout:
    """The merchant's payout of this mode, row-locked until the transaction ends; 404 for
    another merchant's or mode's."""
    payout = (
        Payout.objects.select_for_update(of=("self",))
        .filter(pk=payout_id, merchant=merchant, mode=mode)
        .first()
    )
    if payout is None:
        raise NotFoundError(PAYOUT_NOT_FOUND_MESSAGE)
    return payout


def _state_text(payout: Payout) -> str:
    if payout.status != PayoutStatus.RESERVED:
        return payout.status
    return f"{payout.status} (approval {payout.approval_status})"


@transaction.atomic
def payout_approve(
    *, merchant: Merchant, mode: str, payout_id: int, key_id: int, actor: str
) -> Payout:
    """Approves a payout awaiting approval, with a key other than the one that created it (403
    otherwise). A payout that needs no approval, is approved already, or is no longer pending
    (cancelled, expired, final) is a 409. Audited; a payout with no scheduled time left to wait
    for wakes the dispatcher when the approval commits."""
    payout = _payout_lock(merchant=merchant, mode=mode, payout_id=payout_id)
    if payout.approval_status == PayoutApprovalStatus.NOT_REQUIRED:
        raise ConflictError(NO_APPROVAL_NEEDED_MESSAGE)
    if payout.approval_status == PayoutApprovalStatus.APPROVED:
        raise ConflictError(ALREADY_APPROVED_MESSAGE)
    if (
        payout.approval_status != PayoutApprovalStatus.PENDING
        or payout.status != PayoutStatus.RESERVED
    ):
        raise ConflictError(
            f"Payout is {_state_text(payout)}: only a payout awaiting approval is approved"
        )
    if payout.created_by_key_id == key_id:
        raise ApplicationError(SAME_KEY_MESSAGE, status=403)
    now = timezone.now()
    payout.approval_status = PayoutApprovalStatus.APPROVED
    payout.approved_at = now
    payout.approved_by_key_id = key_id
    payout.save(update_fields=["approval_status", "approved_at", "approved_by_key", "updated_at"])
    audit_record(
        actor=actor,
        action="payouts.payout.approve",
        obj=payout,
        before={"approval_status": PayoutApprovalStatus.PENDING},
        after={"approval_status": payout.approval_status, "amount": payout.amount},
    )
    if payout.scheduled_for is None or payout.scheduled_for <= now:
        transaction.on_commit(tasks.payout_dispatch_wake)
    logger.info("payout %s approved", payout.internal_reference)
    return payout


def _payout_withdraw(payout: Payout, *, message: str, approval_status: str, now: datetime) -> None:
    """The one path of a cancel and an expiry, on the locked held payout: ``failed`` with
    ``message``, its total debit released (``payout_reversal``) and ``payout.failed`` recorded
    by the settling write every path uses; a pending approval becomes ``approval_status``."""
    effects = PayoutFinalEffects()
    payout_fail(payout, now=now, message=message, effects=effects)
    payouts_settled_write([payout], effects=effects, now=now)
    if payout.approval_status == PayoutApprovalStatus.PENDING:
        payout.approval_status = approval_status
        Payout.objects.filter(pk=payout.pk).update(approval_status=approval_status)


@transaction.atomic
def payout_cancel(*, merchant: Merchant, mode: str, payout_id: int, actor: str) -> Payout:
    """Cancels a payout still held (awaiting approval or its scheduled time): ``failed`` with
    "Cancelled by the merchant", its funds back in the available balance, ``payout.failed``
    sent. A payout being dispatched or after, or one that was never held, is a 409. Audited."""
    payout = _payout_lock(merchant=merchant, mode=mode, payout_id=payout_id)
    now = timezone.now()
    if not payout_is_held(payout, now=now):
        raise ConflictError(NOT_HELD_MESSAGE.format(state=_state_text(payout)))
    before = {"status": payout.status, "approval_status": payout.approval_status}
    _payout_withdraw(
        payout,
        message=CANCELLED_MESSAGE,
        approval_status=PayoutApprovalStatus.CANCELLED,
        now=now,
    )
    audit_record(
        actor=actor,
        action="payouts.payout.cancel",
        obj=payout,
        before=before,
        after={
            "status": payout.status,
            "approval_status": payout.approval_status,
            "released": payout.total_debit_amount,
        },
    )
    logger.info("payout %s cancelled by the merchant", payout.internal_reference)
    return payout


@dataclass
class ApprovalExpiryReport:
    """What one run of the approval expiry sweeper did."""

    selected: int = 0
    expired: int = 0
    skipped: int = 0
    payout_ids: list[int] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"approval_expiry: {self.selected} payout(s) past their approval time, "
            f"{self.expired} expired, {self.skipped} skipped (approved or cancelled meanwhile)"
        )


def _payout_expire(*, payout_id: int, now: datetime, cutoff: datetime) -> bool:
    """Expires one payout if, under its row lock, it still awaits approval since ``cutoff``."""
    with transaction.atomic():
        payout = Payout.objects.select_for_update(of=("self",)).filter(pk=payout_id).first()
        if (
            payout is None
            or payout.status != PayoutStatus.RESERVED
            or payout.approval_status != PayoutApprovalStatus.PENDING
            or payout.created_at > cutoff
        ):
            return False
        _payout_withdraw(
            payout,
            message=APPROVAL_EXPIRED_MESSAGE,
            approval_status=PayoutApprovalStatus.EXPIRED,
            now=now,
        )
        audit_record(
            actor=EXPIRY_ACTOR,
            action="payouts.payout.approval_expire",
            obj=payout,
            before={"status": PayoutStatus.RESERVED, "approval_status": "pending"},
            after={
                "status": payout.status,
                "approval_status": payout.approval_status,
                "released": payout.total_debit_amount,
            },
        )
    logger.info("payout %s: approval expired", payout.internal_reference)
    return True


def payouts_approval_expire(
    *, now: datetime | None = None, limit: int = DEFAULT_EXPIRY_LIMIT
) -> ApprovalExpiryReport:
    """Cancels payouts whose approval has been pending longer than
    ``PAYOUT_APPROVAL_EXPIRES_AFTER``, exactly as a merchant's cancel would, with "Approval
    expired" (beat, ``payouts-approval-expiry``). Idempotent: each payout is locked and checked
    again, so one approved, cancelled or expired meanwhile is skipped."""
    now = now or timezone.now()
    cutoff = now - approval_expires_after()
    report = ApprovalExpiryReport()
    payout_ids = list(
        Payout.objects.filter(
            approval_status=PayoutApprovalStatus.PENDING,
            status=PayoutStatus.RESERVED,
            created_at__lte=cutoff,
        )
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:limit]
    )
    report.selected = len(payout_ids)
    for payout_id in payout_ids:
        if _payout_expire(payout_id=payout_id, now=now, cutoff=cutoff):
            report.expired += 1
            report.payout_ids.append(payout_id)
        else:
            report.skipped += 1
    if report.selected:
        logger.info("%s", report.summary())
    return report
