"""The payout state machine (spec §3.1): one map of allowed transitions, checked in one place.

    reserved ──▶ processing ──▶ dispatched ──▶ successful
                     │              │  ▲ │
                     │              │  │ └──▶ failed
                     ▼              ▼  │
                   failed        ambiguous ──▶ successful | failed

* ``reserved → processing``: a dispatch worker claimed the payout.
* ``processing → dispatched``: the transfer request went to the provider.
* ``processing → failed``: the provider refused it before a transfer existed (no money moved).
* ``dispatched → successful | failed | ambiguous``: the provider's answer, or a requery.
* ``ambiguous → successful | failed``: a requery or a manual resolution settled it.

``successful`` and ``failed`` are final: nothing leaves them.
"""

from __future__ import annotations

from types import MappingProxyType

from payouts.models import Payout, PayoutStatus

ALLOWED_TRANSITIONS: MappingProxyType[str, frozenset[str]] = MappingProxyType(
    {
        PayoutStatus.RESERVED: frozenset({PayoutStatus.PROCESSING}),
        PayoutStatus.PROCESSING: frozenset({PayoutStatus.DISPATCHED, PayoutStatus.FAILED}),
        PayoutStatus.DISPATCHED: frozenset(
            {PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED, PayoutStatus.AMBIGUOUS}
        ),
        PayoutStatus.AMBIGUOUS: frozenset({PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED}),
        PayoutStatus.SUCCESSFUL: frozenset(),
        PayoutStatus.FAILED: frozenset(),
    }
)


class IllegalTransitionError(Exception):
    """A payout was asked to move to a status its current status does not allow."""

    def __init__(self, from_status: str, to_status: str) -> None:
        super().__init__(f"payout cannot move from {from_status} to {to_status}")
        self.from_status = from_status
        self.to_status = to_status


def transition_check(*, from_status: str, to_status: str) -> None:
    """Raises ``IllegalTransitionError`` unless ``from_status → to_status`` is allowed."""
    if to_status not in ALLOWED_TRANSITIONS.get(from_status, frozenset()):
        raise IllegalTransitionError(from_status, to_status)


def payout_transition(*, payout: Payout, to_status: str) -> None:
    """Moves the (locked) payout in memory; the caller saves it in the same transaction."""
    transition_check(from_status=payout.status, to_status=to_status)
    payout.status = to_status
