"""NIP session ids (the interbank trace id) read from statements, kept on payouts that have none."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.db.models import Case, CharField, Value, When
from django.utils import timezone

from payouts.models import (
    Payout,
)

logger = logging.getLogger(__name__)


SESSION_IDS_PER_UPDATE = 500


def payout_nip_session_ids_record(*, session_ids: Mapping[int, str]) -> int:
    """Keeps the NIP session ids a provider's or bank's statement shows for payouts that have
    none yet (``{payout_id: session_id}``); a session id already on a payout is never replaced.
    Returns how many payouts gained one."""
    usable = {
        payout_id: session_id[:64]
        for payout_id, session_id in session_ids.items()
        if session_id and session_id.isascii() and session_id.isalnum()
    }
    recorded = 0
    payout_ids = sorted(usable)
    for start in range(0, len(payout_ids), SESSION_IDS_PER_UPDATE):
        chunk = payout_ids[start : start + SESSION_IDS_PER_UPDATE]
        recorded += Payout.objects.filter(pk__in=chunk, nip_session_id="").update(
            nip_session_id=Case(
                *(When(pk=payout_id, then=Value(usable[payout_id])) for payout_id in chunk),
                output_field=CharField(),
            ),
            updated_at=timezone.now(),
        )
    return recorded
