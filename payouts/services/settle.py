"""Settling payouts: a provider's answer (or a person's decision) applied to locked payouts,
with the money and the events that follow, applied once for every payout settled together."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from core.db import rows_update
from payouts.events import payout_events_emit
from payouts.models import (
    Payout,
    PayoutAttempt,
    PayoutStatus,
)
from payouts.providers.base import (
    TransferOutcome,
    TransferResult,
)
from payouts.services.attempts import (
    attempt_answer_record,
    attempt_follow_payout,
    attempts_write,
    payouts_final_attempts_close,
)
from payouts.services.timing import next_requery_at
from payouts.signals import payouts_final
from payouts.state_machine import payout_transition
from wallets.services import (
    ReservationSettlement,
    ReservationSettlementKind,
    wallet_reservations_settle,
)

logger = logging.getLogger(__name__)


DEFAULT_FAILURE_MESSAGE = "Transfer failed"
PROVIDER_RESPONSES_KEPT = 50
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
    "fraud_flagged_at",
    "fraud_nip_code",
    "requery_escalated_at",
    "updated_at",
)


def provider_answer_record(payout: Payout, result: TransferResult) -> None:
    """Keeps the raw exchange of a provider answer on the payout (the last
    ``PROVIDER_RESPONSES_KEPT``), whatever the answer does to it."""
    if not result.raw:
        return
    responses = list(payout.provider_responses or [])
    responses.extend(exchange.as_dict() for exchange in result.raw)
    payout.provider_responses = responses[-PROVIDER_RESPONSES_KEPT:]


@dataclass
class PayoutFinalEffects:
    """What payouts that end final change beyond their own rows, collected while their answers
    are applied and written once, in the transaction that settles them, whether one payout ends
    (a requery, a resolution, a dispatch of one) or many (a dispatch round): the wallets'
    captures and releases (``wallet_reservations_settle``: the wallets locked together, one
    balance update, one ledger insert), the final payouts' events (``payout_events_emit``:
    one insert) and ``payouts.signals.payouts_final`` for the apps above."""

    settlements: list[ReservationSettlement] = field(default_factory=list)
    final_payouts: list[Payout] = field(default_factory=list)
    # Payouts whose attempts the caller brought up to date itself (dispatch, requery).
    attempts_followed: set[int] = field(default_factory=set)

    def apply(self) -> None:
        wallet_reservations_settle(settlements=self.settlements)
        payout_events_emit(payouts=self.final_payouts)
        if self.final_payouts:
            payouts_final.send(sender=Payout, payouts=self.final_payouts)


def _payout_final(
    payout: Payout,
    *,
    status: str,
    now: datetime,
    error_message: str | None,
    settlement: ReservationSettlement,
    effects: PayoutFinalEffects,
) -> None:
    """The payout reaches the final ``status`` at ``now`` and is not requeried again; the
    ``settlement`` of its reservation and its event follow when ``effects`` are applied."""
    payout_transition(payout=payout, to_status=status)
    payout.completed_at = now
    payout.next_requery_at = None
    payout.error_message = error_message
    effects.settlements.append(settlement)
    effects.final_payouts.append(payout)


def payout_succeed(payout: Payout, *, now: datetime, effects: PayoutFinalEffects) -> None:
    """``successful``: the reserved total debit is captured and the event recorded when
    ``effects`` are applied."""
    capture = ReservationSettlement(
        kind=ReservationSettlementKind.CAPTURE,
        wallet_id=payout.wallet_id,
        amount=payout.amount,
        fee_amount=payout.fee_amount,
        reference=payout.internal_reference,
        payout_id=payout.pk,
    )
    _payout_final(
        payout,
        status=PayoutStatus.SUCCESSFUL,
        now=now,
        error_message=None,
        settlement=capture,
        effects=effects,
    )


def payout_fail(
    payout: Payout, *, now: datetime, message: str, effects: PayoutFinalEffects
) -> None:
    """``failed`` with ``message`` (or ``DEFAULT_FAILURE_MESSAGE``): the reserved total debit is
    released and the event recorded when ``effects`` are applied."""
    release = ReservationSettlement(
        kind=ReservationSettlementKind.RELEASE,
        wallet_id=payout.wallet_id,
        amount=payout.total_debit_amount,
        reference=payout.internal_reference,
        payout_id=payout.pk,
    )
    _payout_final(
        payout,
        status=PayoutStatus.FAILED,
        now=now,
        error_message=(message or DEFAULT_FAILURE_MESSAGE)[:255],
        settlement=release,
        effects=effects,
    )


def _make_ambiguous(payout: Payout, *, now: datetime) -> None:
    if payout.status != PayoutStatus.AMBIGUOUS:
        payout_transition(payout=payout, to_status=PayoutStatus.AMBIGUOUS)
        payout.ambiguous_since = now
    payout.next_requery_at = next_requery_at(now=now, requery_count=payout.requery_count)


def payout_hold_for_fraud(payout: Payout, result: TransferResult, *, now: datetime) -> None:
    """The provider or the beneficiary's bank held the transfer for suspected fraud: the payout
    is flagged (the first time, with the NIP code) and stays ``ambiguous``, its reservation
    untouched: finance settles it with two people (``payouts.services.resolution``). Requeries
    go on, so that a later success can still capture it. The merchant is not told of the flag
    (it sees an ambiguous payout); finance sees it on the payout and the dashboard."""
    if payout.fraud_flagged_at is None:
        payout.fraud_flagged_at = now
        payout.fraud_nip_code = (result.nip_code or "")[:4]
        logger.warning(
            "payout %s held for suspected fraud (NIP %s): finance must resolve it",
            payout.internal_reference,
            payout.fraud_nip_code or "?",
        )
    _make_ambiguous(payout, now=now)


def provider_answer_settle(
    payout: Payout,
    result: TransferResult,
    *,
    now: datetime,
    from_requery: bool,
    effects: PayoutFinalEffects,
) -> None:
    """Applies a provider answer to a locked ``dispatched`` or ``ambiguous`` payout, in memory:
    ``successful`` or ``failed`` when the answer is final (its money and event go to
    ``effects``), still ``dispatched`` while a fresh dispatch is pending, else ``ambiguous``
    with its next requery. A ``HELD`` answer flags it for suspected fraud; once flagged, a
    failure never releases it automatically (it stays ``ambiguous`` for finance), while a
    success still captures it."""
    if result.provider_reference and not payout.provider_reference:
        payout.provider_reference = result.provider_reference[:100]
    if result.session_id and not payout.nip_session_id:
        payout.nip_session_id = result.session_id[:64]
    if result.outcome == TransferOutcome.SUCCESSFUL:
        payout_succeed(payout, now=now, effects=effects)
    elif result.outcome == TransferOutcome.HELD:
        payout_hold_for_fraud(payout, result, now=now)
    elif result.outcome == TransferOutcome.FAILED and payout.fraud_flagged_at is not None:
        # Never released automatically once flagged: a person decides.
        _make_ambiguous(payout, now=now)
    elif result.outcome == TransferOutcome.FAILED:
        payout_fail(payout, now=now, message=result.message, effects=effects)
    elif result.outcome == TransferOutcome.PENDING and not from_requery:
        # Accepted and in progress: stays dispatched; the sweeper asks again later.
        payout.next_requery_at = next_requery_at(now=now, requery_count=payout.requery_count)
    else:
        # Timeout, 5xx, unknown reference, or still pending when asked: not conclusive.
        _make_ambiguous(payout, now=now)


def payouts_settled_write(
    payouts: Sequence[Payout], *, effects: PayoutFinalEffects, now: datetime
) -> None:
    """Writes what applying answers to the locked ``payouts`` decided, in the caller's
    transaction, the one way every settling path writes: the money and events of those that
    ended (``effects``) and their attempts that could still succeed (closed as the payout
    ended), then every payout's settlement fields in one statement."""
    effects.apply()
    payouts_final_attempts_close(
        effects.final_payouts, now=now, followed=frozenset(effects.attempts_followed)
    )
    for payout in payouts:
        payout.updated_at = now
    rows_update(list(payouts), SETTLEMENT_FIELDS)


def payout_answer_settle_write(
    payout: Payout, result: TransferResult, *, attempt: PayoutAttempt | None, now: datetime
) -> None:
    """Settles a locked ``payout`` from the provider's answer to a question about it (a requery,
    a transfer event) and writes it (``payouts_settled_write``); the attempt asked about, if
    any, keeps the answer and follows its payout."""
    effects = PayoutFinalEffects()
    provider_answer_settle(payout, result, now=now, from_requery=True, effects=effects)
    if attempt is not None:
        attempt_answer_record(attempt, result)
        attempt_follow_payout(attempt, payout, now=now)
        attempts_write([attempt])
        effects.attempts_followed.add(payout.pk)
    payouts_settled_write([payout], effects=effects, now=now)
