"""The payout list's per-day counts: folding the changes the triggers append, and rebuilding
the counts from the payouts."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

from django.db import connection, transaction

from audit.services import audit_record
from core.db import quoted_column, quoted_table
from payouts.models import (
    Payout,
    PayoutCountChange,
    PayoutDailyCount,
)
from payouts.selectors import (
    PayoutCountMismatch,
    payout_counts_mismatches,
    payout_counts_recount,
)

logger = logging.getLogger(__name__)


_KEY = ("wallet", "status", "day")  # a count's key, unique in PayoutDailyCount


@functools.cache
def _fold_sql() -> str:
    """One round of the fold, in one statement, named from the models' metadata. The changes
    taken are deleted and returned (so exactly the rows summed go, and a change committed
    meanwhile waits for the next round); their sums are added to the counts in key order;
    concurrent folds skip each other's rows. Parameter: the round's size."""
    changes, counts = (
        quoted_table(PayoutCountChange, connection),
        quoted_table(PayoutDailyCount, connection),
    )
    change_id = quoted_column(PayoutCountChange, "id", connection)
    key = ", ".join(quoted_column(PayoutDailyCount, name, connection) for name in _KEY)
    change_key = ", ".join(quoted_column(PayoutCountChange, name, connection) for name in _KEY)
    delta = quoted_column(PayoutCountChange, "delta", connection)
    count = quoted_column(PayoutDailyCount, "count", connection)
    return f"""
WITH taken AS (
    DELETE FROM {changes}
    WHERE {change_id} IN (
        SELECT {change_id} FROM {changes} ORDER BY {change_id} LIMIT %s FOR UPDATE SKIP LOCKED
    )
    RETURNING {change_key}, {delta}
), folded AS (
    INSERT INTO {counts} ({key}, {count})
    SELECT {change_key}, sum({delta}) FROM taken GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ({key})
    DO UPDATE SET {count} = {counts}.{count} + EXCLUDED.{count}
    RETURNING 1
)
SELECT count(*) FROM taken
"""  # noqa: S608 - names from the models; the one value is %s


FOLD_ROUND_SIZE = 10_000


def payout_counts_fold(*, round_size: int = FOLD_ROUND_SIZE) -> int:
    """Folds the count changes the PostgreSQL triggers appended (``PayoutCountChange``) into
    the per-day counts, ``round_size`` changes per transaction, until none is left; returns how
    many it folded. A list total reads counts and changes together, so it is exact before,
    during and after a fold; folding only keeps the changes few."""
    folded = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_fold_sql(), [round_size])
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
    payouts = quoted_table(Payout, connection)
    changes = quoted_table(PayoutCountChange, connection)
    counts = quoted_table(PayoutDailyCount, connection)
    with connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {payouts} IN SHARE ROW EXCLUSIVE MODE")
        cursor.execute(f"LOCK TABLE {changes}, {counts} IN EXCLUSIVE MODE")
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
