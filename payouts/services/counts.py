"""The payout list's per-day counts: folding the changes the triggers append, and rebuilding
the counts from the payouts."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import connection, transaction

from audit.services import audit_record
from payouts.models import (
    PayoutCountChange,
    PayoutDailyCount,
)
from payouts.selectors import (
    PayoutCountMismatch,
    payout_counts_mismatches,
    payout_counts_recount,
)

logger = logging.getLogger(__name__)


# One round of the fold, in one statement. The changes taken are deleted and
# returned (so exactly the rows summed go, and a change committed meanwhile waits for the next
# round); their sums are added to the counts in key order; concurrent folds skip each other's
# rows.
_FOLD_SQL = """
WITH taken AS (
    DELETE FROM payouts_payoutcountchange
    WHERE id IN (
        SELECT id FROM payouts_payoutcountchange ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED
    )
    RETURNING wallet_id, status, day, delta
), folded AS (
    INSERT INTO payouts_payoutdailycount (wallet_id, status, day, count)
    SELECT wallet_id, status, day, sum(delta) FROM taken GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (wallet_id, status, day)
    DO UPDATE SET count = payouts_payoutdailycount.count + EXCLUDED.count
    RETURNING 1
)
SELECT count(*) FROM taken
"""
FOLD_ROUND_SIZE = 10_000


def payout_counts_fold(*, round_size: int = FOLD_ROUND_SIZE) -> int:
    """Folds the count changes the PostgreSQL triggers appended (``PayoutCountChange``) into
    the per-day counts, ``round_size`` changes per transaction, until none is left; returns how
    many it folded. A list total reads counts and changes together, so it is exact before,
    during and after a fold; folding only keeps the changes few."""
    folded = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_FOLD_SQL, [round_size])
            taken = cursor.fetchone()[0]
        folded += taken
        if taken < round_size:
            return folded


@dataclass(frozen=True)
class PayoutCountsRebuild:
    """What ``payout_counts_rebuild`` found and wrote."""

    mismatches: list[PayoutCountMismatch]
    rows_written: int


@transaction.atomic
def payout_counts_rebuild(*, actor: str) -> PayoutCountsRebuild:
    """Recounts every (wallet, status, day) from the payouts and writes the counts afresh (no
    change left to fold), while writes to payouts wait (``SHARE ROW EXCLUSIVE`` on the table
    until commit; reads go on), so no payout written meanwhile is counted twice or missed.
    Recorded in the audit trail with the mismatches it mended. The triggers keep the counts
    from then on; this is the way back should they ever have been bypassed (a trigger
    disabled, the table restored without them)."""
    with connection.cursor() as cursor:
        cursor.execute("LOCK TABLE payouts_payout IN SHARE ROW EXCLUSIVE MODE")
        cursor.execute(
            "LOCK TABLE payouts_payoutcountchange, payouts_payoutdailycount IN EXCLUSIVE MODE"
        )
    counted = payout_counts_recount()
    mismatches = payout_counts_mismatches(counted=counted)
    PayoutCountChange.objects.all().delete()
    PayoutDailyCount.objects.all().delete()
    PayoutDailyCount.objects.bulk_create(
        (
            PayoutDailyCount(wallet_id=wallet_id, status=status, day=day, count=count)
            for (wallet_id, status, day), count in counted.items()
        ),
        batch_size=1000,
    )
    audit_record(
        actor=actor,
        action="payouts.payoutdailycount.rebuild",
        obj=PayoutDailyCount,
        before={"mismatches": len(mismatches)},
        after={"rows": len(counted)},
        reason="payout counts rebuilt from the payouts",
    )
    return PayoutCountsRebuild(mismatches=mismatches, rows_written=len(counted))
