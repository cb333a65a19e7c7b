"""The collection transaction state machine: one map of allowed transitions, checked in one place.

                 ┌──▶ paid
                 ├──▶ failed
    pending ─────┼──▶ cancelled
                 └──▶ expired

* ``pending → paid | failed | cancelled``: a confirmation (test helper, hosted checkout,
  provider webhook or verification) applied its outcome.
* ``pending → expired``: the transaction was still pending at ``expires_at``.

``paid``, ``failed``, ``cancelled`` and ``expired`` are final (``FINAL_STATUSES``): nothing
leaves them. Any other move raises ``IllegalTransitionError`` (``core.state_machine``), a 409
conflict; a confirmation for a final transaction is recorded, not applied
(``collections_app.services.transaction_confirm``).
"""

from __future__ import annotations

from types import MappingProxyType

from collections_app.models import FINAL_STATUSES, CollectionTransaction, PaymentStatus
from core import state_machine
from core.state_machine import IllegalTransitionError

__all__ = [
    "ALLOWED_TRANSITIONS",
    "FINAL_STATUSES",
    "IllegalTransitionError",
    "collection_transition",
    "transition_allowed",
    "transition_check",
]

SUBJECT = "transaction"

ALLOWED_TRANSITIONS: MappingProxyType[str, frozenset[str]] = MappingProxyType(
    {
        PaymentStatus.PENDING: frozenset(
            {
                PaymentStatus.PAID,
                PaymentStatus.FAILED,
                PaymentStatus.CANCELLED,
                PaymentStatus.EXPIRED,
            }
        ),
        PaymentStatus.PAID: frozenset(),
        PaymentStatus.FAILED: frozenset(),
        PaymentStatus.CANCELLED: frozenset(),
        PaymentStatus.EXPIRED: frozenset(),
    }
)


def transition_check(*, from_status: str, to_status: str) -> None:
    """Raises ``IllegalTransitionError`` unless ``from_status → to_status`` is allowed."""
    state_machine.transition_check(
        allowed=ALLOWED_TRANSITIONS, subject=SUBJECT, from_status=from_status, to_status=to_status
    )


def transition_allowed(*, from_status: str, to_status: str) -> bool:
    """``transition_check`` as a yes or no, for callers that record a refusal instead of
    raising it (a late confirmation)."""
    try:
        transition_check(from_status=from_status, to_status=to_status)
    except IllegalTransitionError:
        return False
    return True


def collection_transition(*, collection: CollectionTransaction, to_status: str) -> None:
    """Moves the (locked) transaction in memory; the caller saves it in the same transaction."""
    transition_check(from_status=collection.payment_status, to_status=to_status)
    collection.payment_status = to_status
