"""The shape every status machine in the service shares.

Each app with statuses keeps one map from every status to the statuses it may move to
(``ALLOWED_TRANSITIONS`` in its ``state_machine.py``) and checks it only through
``transition_check``. A move the map does not allow raises ``IllegalTransitionError``: a
conflict, answered 409 in the envelope when it reaches an API view.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.exceptions import ConflictError


class IllegalTransitionError(ConflictError):
    """Something was asked to move to a status its current status does not allow."""

    def __init__(self, *, subject: str, from_status: str, to_status: str) -> None:
        super().__init__(f"{subject} cannot move from {from_status} to {to_status}")
        self.subject = subject
        self.from_status = from_status
        self.to_status = to_status


def transition_check(
    *,
    allowed: Mapping[str, frozenset[str]],
    subject: str,
    from_status: str,
    to_status: str,
) -> None:
    """Raises ``IllegalTransitionError`` unless ``allowed`` lets ``subject`` move from
    ``from_status`` to ``to_status``. A status missing from ``allowed`` has no way out."""
    if to_status not in allowed.get(from_status, frozenset()):
        raise IllegalTransitionError(subject=subject, from_status=from_status, to_status=to_status)
