"""The payout state machine: one map of allowed transitions, checked in one place.

    reserved ──▶ processing ──▶ dispatched ──▶ successful
       │             │              │  ▲ │
       │             │              │  │ └──▶ failed
       ▼             ▼              ▼  │
     failed        failed        ambiguous ──▶ successful | failed

* ``reserved → processing``: a dispatch worker claimed the payout.
* ``reserved → failed``: a held payout (awaiting approval or its scheduled time) was cancelled
  by the merchant or its approval expired, before any dispatch (``payouts.services.controls``).
* ``processing → dispatched``: the transfer request went to the provider.
* ``processing → failed``: the provider refused it before a transfer existed (no money moved).
* ``dispatched → successful | failed | ambiguous``: the provider's answer, or a requery.
* ``ambiguous → successful | failed``: a requery or a manual resolution settled it.

``successful`` and ``failed`` are final (``payouts.models.FINAL_STATUSES``): nothing leaves
them. Any other move raises ``IllegalTransitionError`` (``core.state_machine``), a 409 conflict.
"""

from __future__ import annotations

from types import MappingProxyType

from core import state_machine
from core.state_machine import IllegalTransitionError
from payouts.models import Payout, PayoutStatus

__all__ = ["ALLOWED_TRANSITIONS", "IllegalTransitionError", "payout_transition", "transition_check"]

SUBJECT = "payout"

ALLOWED_TRANSITIONS: MappingProxyType[str, frozenset[str]] = MappingProxyType(
    {
        PayoutStatus.RESERVED: frozenset({PayoutStatus.PROCESSING, PayoutStatus.FAILED}),
        PayoutStatus.PROCESSING: frozenset({PayoutStatus.DISPATCHED, PayoutStatus.FAILED}),
        PayoutStatus.DISPATCHED: frozenset(
            {PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED, PayoutStatus.AMBIGUOUS}
        ),
        PayoutStatus.AMBIGUOUS: frozenset({PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED}),
        PayoutStatus.SUCCESSFUL: frozenset(),
        PayoutStatus.FAILED: frozenset(),
    }
)


def transition_check(*, from_status: str, to_status: str) -> None:
    """Raises ``IllegalTransitionError`` unless ``from_status → to_status`` is allowed."""
    state_machine.transition_check(
        allowed=ALLOWED_TRANSITIONS, subject=SUBJECT, from_status=from_status, to_status=to_status
    )


def payout_transition(*, payout: Payout, to_status: str) -> None:
    """Moves the (locked) payout in memory; the caller saves it in the same transaction."""
    transition_check(from_status=payout.status, to_status=to_status)
    payout.status = to_status
