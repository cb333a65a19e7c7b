"""Subaccount shares: each settlement's shares paid out from the platform's wallet of the
mode, and the platform ledger postings at each payout's outcome.

* A share's payout is an ordinary payout (``payouts.services.payout_create``, dispatched,
  requeried and reconciled like any other) of the platform merchant, to the subaccount's bank
  account, fee waived, with the idempotency key ``settlement-share-<share id>``: the task
  queued when the settlement commits and the sweeper (beat) may both create it, and it is
  created once.
* Its outcome (``payouts.signals``): successful moves the share from ``owed_subaccounts`` to
  ``subaccount_payouts``; failed moves nothing (the share is still owed, the money is back in
  the platform wallet's available balance) until finance sends it again
  (``settlement_share_payout_resend``, key ``settlement-share-<id>-<n>``); returned after
  success moves it back to ``owed_subaccounts``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone

from audit.services import audit_record
from core.exceptions import ConflictError, NotFoundError
from payouts.models import Payout, PayoutStatus
from payouts.services import payout_create
from settlements.models import PlatformAccount, SettlementShare
from settlements.platform_ledger import platform_post
from settlements.services.platform import platform_merchant_get, platform_wallet_get

logger = logging.getLogger(__name__)

SHARE_IDEMPOTENCY_PREFIX = "settlement-share-"
RESEND_AUDIT_ACTION = "settlements.settlementshare.resend_payout"
RESEND_NOT_ALLOWED_MESSAGE = "Only a share whose payout failed or was returned can be sent again"
NO_PAYOUT_YET_MESSAGE = "The share has no payout yet; the share sweeper creates it"
SHARE_NOT_FOUND_MESSAGE = "Settlement share not found"
DEFAULT_SWEEP_LIMIT = 200


def share_idempotency_key(*, share_id: int, attempt: int = 1) -> str:
    """``settlement-share-<id>`` for the first payout, ``settlement-share-<id>-<n>`` for the
    n-th (n ≥ 2, a re-send)."""
    base = f"{SHARE_IDEMPOTENCY_PREFIX}{share_id}"
    return base if attempt == 1 else f"{base}-{attempt}"


def share_narration(share: SettlementShare) -> str:
    return f"Subaccount share of settlement {share.settlement.settlement_id}"


def _share_load(*, share_id: int, lock: bool = False) -> SettlementShare:
    shares = SettlementShare.objects.select_related("settlement", "subaccount__bank", "payout")
    if lock:
        shares = shares.select_for_update(of=("self",))
    share = shares.filter(pk=share_id).first()
    if share is None:
        raise NotFoundError(SHARE_NOT_FOUND_MESSAGE)
    return share


def _share_payout_create(*, share: SettlementShare, idempotency_key: str) -> Payout:
    """The share's payout with this key: the one the platform wallet holds already (a crash
    between the create and the link), else a new one."""
    mode = share.settlement.mode
    wallet = platform_wallet_get(mode=mode)
    earlier = Payout.objects.filter(wallet=wallet, idempotency_key=idempotency_key).first()
    if earlier is not None:
        return earlier
    subaccount = share.subaccount
    result = payout_create(
        merchant=platform_merchant_get(),
        mode=mode,
        account_number=subaccount.account_number,
        bank_code=subaccount.bank.bank_code,
        amount=share.amount,
        idempotency_key=idempotency_key,
        narration=share_narration(share),
        wallet=wallet,
        fee_waived=True,
    )
    return result.payout


def settlement_share_pay(*, share_id: int) -> Payout:
    """Creates the share's payout unless it has one; returns the share's payout. Safe to call
    any number of times, concurrently too: the idempotency key makes one payout, and the link
    is set only while the share has none."""
    share = _share_load(share_id=share_id)
    if share.payout is not None:
        return share.payout
    payout = _share_payout_create(
        share=share, idempotency_key=share_idempotency_key(share_id=share.pk)
    )
    with transaction.atomic():
        SettlementShare.objects.filter(pk=share.pk, payout__isnull=True).update(payout=payout)
    logger.info("share %s of %s: payout %s", share.pk, share.settlement_id, payout.pk)
    return SettlementShare.objects.select_related("payout").get(pk=share.pk).payout or payout


@dataclass
class ShareSweepReport:
    found: int = 0
    paid: int = 0
    errors: int = 0

    def summary(self) -> str:
        return (
            f"{self.found} share(s) without a payout: {self.paid} payout(s) created, "
            f"{self.errors} error(s)."
        )


def settlement_shares_pay(*, settlement_pk: int) -> ShareSweepReport:
    """Creates the payout of each share of the settlement that has none (the task queued on
    commit). A share whose payout cannot be created now is logged; the sweeper tries again."""
    share_ids = list(
        SettlementShare.objects.filter(settlement_id=settlement_pk, payout__isnull=True)
        .order_by("id")
        .values_list("pk", flat=True)
    )
    return _shares_pay(share_ids)


def _shares_pay(share_ids: list[int]) -> ShareSweepReport:
    report = ShareSweepReport(found=len(share_ids))
    for share_id in share_ids:
        try:
            settlement_share_pay(share_id=share_id)
        except Exception:
            logger.exception("could not create the payout of settlement share %s", share_id)
            report.errors += 1
        else:
            report.paid += 1
    return report


def settlement_shares_sweep(
    *, older_than: timedelta | None = None, limit: int = DEFAULT_SWEEP_LIMIT
) -> ShareSweepReport:
    """Beat: creates the payout of every share still without one ``older_than`` (default
    ``SETTLEMENT_SHARE_PAYOUT_AFTER_SECONDS``) after it was recorded (its task was lost or
    failed), oldest first, at most ``limit``."""
    if older_than is None:
        older_than = timedelta(seconds=settings.SETTLEMENT_SHARE_PAYOUT_AFTER_SECONDS)
    share_ids = list(
        SettlementShare.objects.filter(
            payout__isnull=True, created_at__lte=timezone.now() - older_than
        )
        .order_by("id")
        .values_list("pk", flat=True)[:limit]
    )
    return _shares_pay(share_ids)


def settlement_share_payout_resend(
    *, share_id: int, actor: Any, reason: str = "", request: HttpRequest | None = None
) -> Payout:
    """Finance sends a share again whose payout failed (or was returned after success): a new
    payout with the key ``settlement-share-<id>-<n>`` (n counts the share's payouts), linked
    to the share, audited. The caller checks the actor's permission (the back office's
    approver permission). Anything else is a 409: a share without a payout yet, or whose
    payout is in flight or paid.

    The share's row stays locked from the check to the link (the payout's name enquiry
    included), so two people sending it again at once make one payout: the second waits, then
    finds the first one's payout in flight and gets the 409."""
    with transaction.atomic():
        share = _share_load(share_id=share_id, lock=True)
        current = share.payout
        if current is None:
            raise ConflictError(NO_PAYOUT_YET_MESSAGE)
        if not (current.status == PayoutStatus.FAILED or current.returned_at is not None):
            raise ConflictError(RESEND_NOT_ALLOWED_MESSAGE)
        base = share_idempotency_key(share_id=share.pk)
        attempts = Payout.objects.filter(
            Q(idempotency_key=base) | Q(idempotency_key__startswith=f"{base}-"),
            wallet_id=current.wallet_id,
        ).count()
        key = share_idempotency_key(share_id=share.pk, attempt=attempts + 1)
        payout = _share_payout_create(share=share, idempotency_key=key)
        SettlementShare.objects.filter(pk=share.pk).update(payout=payout)
        audit_record(
            actor=actor,
            action=RESEND_AUDIT_ACTION,
            obj=share,
            before={
                "payout": current.internal_reference,
                "status": current.status,
                "returned": current.returned_at is not None,
            },
            after={"payout": payout.internal_reference, "idempotency_key": key},
            reason=reason,
            request=request,
        )
    logger.info("share %s sent again: payout %s (%s)", share.pk, payout.pk, key)
    return payout


# --- Payout outcomes (payouts.signals) --------------------------------------------------------


def _share_payouts(payouts: list[Payout]) -> list[tuple[SettlementShare, Payout]]:
    """The shares these payouts pay (a payout of the platform with a share key only: other
    payouts cost no query)."""
    candidates = {
        payout.pk: payout
        for payout in payouts
        if payout.idempotency_key.startswith(SHARE_IDEMPOTENCY_PREFIX)
    }
    if not candidates:
        return []
    shares = SettlementShare.objects.filter(payout_id__in=list(candidates)).select_related(
        "settlement"
    )
    return [(share, candidates[share.payout_id]) for share in shares if share.payout_id]


def share_payouts_final_post(sender: Any, payouts: list[Payout], **kwargs: Any) -> None:
    """``payouts_final``: a share's successful payout moves the share from what the
    subaccounts are owed to what they were paid. A failed one moves nothing."""
    successful = [payout for payout in payouts if payout.status == PayoutStatus.SUCCESSFUL]
    for share, payout in _share_payouts(successful):
        _share_move_post(
            share,
            payout,
            group="share-paid",
            source=PlatformAccount.OWED_SUBACCOUNTS,
            destination=PlatformAccount.SUBACCOUNT_PAYOUTS,
            description="subaccount share paid",
        )


def share_payout_returned_post(sender: Any, payout: Payout, **kwargs: Any) -> None:
    """``payout_returned``: a share's payout sent back after success is owed again."""
    for share, returned in _share_payouts([payout]):
        _share_move_post(
            share,
            returned,
            group="share-returned",
            source=PlatformAccount.SUBACCOUNT_PAYOUTS,
            destination=PlatformAccount.OWED_SUBACCOUNTS,
            description="subaccount share payout returned",
        )


def _share_move_post(
    share: SettlementShare,
    payout: Payout,
    *,
    group: str,
    source: str,
    destination: str,
    description: str,
) -> None:
    """The share's amount moved from ``source`` to ``destination`` on the platform ledger, once
    per payout (the posting group ``<group>:<payout reference>``)."""
    platform_post(
        mode=share.settlement.mode,
        group=f"{group}:{payout.internal_reference}",
        postings={source: -share.amount, destination: share.amount},
        merchant_id=share.settlement.merchant_id,
        settlement_id=share.settlement_id,
        payout_id=payout.pk,
        description=description,
    )
