"""Generated statements against generated payouts: whatever the mix of agreeing lines, changed
amounts, changed statuses, foreign lines, repeated lines and payouts left off, each line gets
exactly the category an independent oracle expects, and each payout the statement should list
is accounted for exactly once (by its first line, or as missing)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.money import minor_units_from_decimal
from payouts.models import PayoutStatus
from reconciliation.models import MatchCategory
from reconciliation.services import statement_import
from tests.payouts.factories import PayoutFactory
from wallets.models import Wallet

pytestmark = pytest.mark.django_db

DAY_START = datetime(2026, 11, 19, 23, 0, tzinfo=UTC)  # 2026-11-20 00:00 Lagos
PROVIDER_STATUS = {"successful": "success", "failed": "failed", "pending": "pending"}
OUR_STATUS_AGREEING = {
    PayoutStatus.SUCCESSFUL: "successful",
    PayoutStatus.FAILED: "failed",
    PayoutStatus.DISPATCHED: "pending",
    PayoutStatus.AMBIGUOUS: "pending",
}
DISAGREEING = {
    PayoutStatus.SUCCESSFUL: "failed",
    PayoutStatus.FAILED: "successful",
    PayoutStatus.DISPATCHED: "successful",
    PayoutStatus.AMBIGUOUS: "failed",
}

payout_case = st.fixed_dictionaries(
    {
        "status": st.sampled_from(list(OUR_STATUS_AGREEING)),
        "kobo": st.integers(min_value=1, max_value=10**11),
        "minute": st.integers(min_value=0, max_value=24 * 60 - 1),
        # How the statement shows it: agree, another amount, another status, left off.
        "shown": st.sampled_from(["agree", "amount", "status", "left_off"]),
        "repeated": st.booleans(),
        "by": st.sampled_from(["reference", "transfer_code"]),
    }
)


def _row(reference: str, code: str, kobo: int, status: str, at: datetime) -> list[str]:
    return [reference, code, str(kobo), PROVIDER_STATUS[status], at.isoformat()]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    cases=st.lists(payout_case, min_size=1, max_size=12),
    foreign=st.integers(min_value=0, max_value=3),
)
def test_every_line_gets_the_oracles_category(live_wallet: Wallet, cases, foreign: int) -> None:
    with transaction.atomic():
        rows: list[list[str]] = []
        expected_lines: list[str] = []
        expected_missing: set[int] = set()
        for index, case in enumerate(cases):
            amount = Decimal(case["kobo"]) / 100
            payout = PayoutFactory(
                wallet=live_wallet,
                internal_reference=f"po_prop_{index}",
                provider_reference=f"TRF_prop_{index}",
                provider_name="paystack",
                amount=amount,
                status=case["status"],
                dispatched_at=DAY_START + timedelta(minutes=case["minute"]),
            )
            if case["shown"] == "left_off":
                expected_missing.add(payout.pk)
                continue
            kobo = minor_units_from_decimal(amount)
            status = OUR_STATUS_AGREEING[payout.status]
            category = MatchCategory.MATCHED
            if case["shown"] == "amount":
                kobo, category = kobo + 1, MatchCategory.AMOUNT_MISMATCH
            elif case["shown"] == "status":
                status, category = DISAGREEING[payout.status], MatchCategory.STATUS_MISMATCH
            reference = payout.internal_reference if case["by"] == "reference" else ""
            at = payout.dispatched_at
            rows.append(_row(reference, payout.provider_reference, kobo, status, at))
            expected_lines.append(category)
            if case["repeated"]:
                rows.append(_row(reference, payout.provider_reference, kobo, status, at))
                expected_lines.append(MatchCategory.DUPLICATE)
        for number in range(foreign):
            rows.append(_row(f"EXT-{number}", f"TRF_ext_{number}", 100, "successful", DAY_START))
            expected_lines.append(MatchCategory.NOT_OURS)
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["Reference", "Transfer Code", "Amount", "Status", "Date"])
        writer.writerows(rows)

        if not rows:
            transaction.set_rollback(True)
            return
        run = statement_import(
            content=buffer.getvalue().encode(),
            file_name="generated.csv",
            statement_format="paystack_transfers",
            mode="live",
            period=(DAY_START.date() + timedelta(days=1), DAY_START.date() + timedelta(days=1)),
            actor_label="test",
        ).run

        line_items = list(run.items.filter(line_number__isnull=False).order_by("line_number"))
        assert [item.category for item in line_items] == expected_lines
        missing = set(
            run.items.filter(category=MatchCategory.MISSING).values_list("payout_id", flat=True)
        )
        assert missing == expected_missing
        first_lines = [
            item.payout_id
            for item in line_items
            if item.payout_id and item.category != MatchCategory.DUPLICATE
        ]
        assert len(first_lines) == len(set(first_lines))
        assert set(first_lines).isdisjoint(missing)
        assert sum(run.category_counts.values()) == len(rows) + len(expected_missing)
        transaction.set_rollback(True)
