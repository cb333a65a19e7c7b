"""A settlement run's statement count does not grow with the number of collections it settles
(``benchmarks/settlement_run.py`` measures it at 100,000)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from benchmarks.settlement_run import settlement_bench
from settlements.platform_ledger import platform_balances

pytestmark = pytest.mark.django_db


def test_the_statement_count_is_the_same_for_50_and_500_collections() -> None:
    small = settlement_bench(count=50)
    large = settlement_bench(count=500)

    assert small.statements == large.statements
    assert small.statements <= 30
    assert large.settlement.transaction_count == 500
    # 500 x 7,205.00; shares 800.00 on every tenth and 50.00 on every 25th collection.
    assert large.settlement.gross == Decimal("3602500.00")
    assert large.settlement.subaccount_shares == Decimal("41000.00")
    assert large.settlement.net == Decimal("3602500.00") - Decimal("102500.00") - Decimal(
        "41000.00"
    )
    # The seed writes no paid postings, so only the run's own group is checked here.
    assert platform_balances(merchant_id=large.settlement.merchant_id).equation_holds
