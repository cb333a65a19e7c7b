"""Random sequences of funding, reserve, capture, release and status changes: after every step
each balance equals the sum of its ledger deltas, nothing is negative, and
available + reserved + captured == funded."""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal
from itertools import count

import pytest
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.wallets.factories import WalletFactory
from tests.wallets.writers import wallet_capture, wallet_release, wallet_reserve
from wallets.exceptions import InsufficientBalanceError, WalletInactiveError
from wallets.models import LedgerEntry, Wallet, WalletStatus
from wallets.selectors import wallet_totals
from wallets.services import (
    wallet_fund,
    wallet_lock,
    wallet_status_set,
)

pytestmark = pytest.mark.django_db

amounts = st.decimals(
    min_value=Decimal("0.01"), max_value=Decimal("100000.00"), places=2, allow_nan=False
)
_references = count(1)


class WalletLedgerMachine(RuleBasedStateMachine):
    """A model of the wallet next to the real one; every rule goes through the services."""

    @initialize()
    def create_wallet(self) -> None:
        self.wallet: Wallet = WalletFactory()
        self.available = Decimal("0.00")
        self.reserved = Decimal("0.00")
        self.captured = Decimal("0.00")
        self.funded = Decimal("0.00")
        self.active = True
        self.pending: list[tuple[str, Decimal]] = []

    @rule(amount=amounts)
    def fund(self, amount: Decimal) -> None:
        wallet_fund(wallet_id=self.wallet.pk, amount=amount, reference=f"F{next(_references)}")
        self.available += amount
        self.funded += amount

    @rule(amount=amounts)
    def reserve(self, amount: Decimal) -> None:
        reference = f"P{next(_references)}"
        try:
            with transaction.atomic():
                locked = wallet_lock(wallet_id=self.wallet.pk)
                wallet_reserve(wallet=locked, amount=amount, reference=reference)
        except WalletInactiveError:
            assert not self.active
            return
        except InsufficientBalanceError:
            assert self.active
            assert amount > self.available
            return
        assert self.active
        assert amount <= self.available
        self.available -= amount
        self.reserved += amount
        self.pending.append((reference, amount))

    @precondition(lambda self: self.pending)
    @rule(data=st.data())
    def capture(self, data: st.DataObject) -> None:
        reference, total = self.pending.pop(data.draw(st.integers(0, len(self.pending) - 1)))
        fee = min(Decimal("50.00"), (total / 2).quantize(Decimal("0.01"), rounding=ROUND_DOWN))
        wallet_capture(
            wallet_id=self.wallet.pk, amount=total - fee, fee_amount=fee, reference=reference
        )
        self.reserved -= total
        self.captured += total

    @precondition(lambda self: self.pending)
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        reference, total = self.pending.pop(data.draw(st.integers(0, len(self.pending) - 1)))
        wallet_release(wallet_id=self.wallet.pk, amount=total, reference=reference)
        self.reserved -= total
        self.available += total

    @rule()
    def toggle_status(self) -> None:
        self.active = not self.active
        status = WalletStatus.ACTIVE if self.active else WalletStatus.INACTIVE
        wallet_status_set(wallet_id=self.wallet.pk, status=status)

    @invariant()
    def balances_match_model_and_ledger(self) -> None:
        totals = wallet_totals(wallet=self.wallet)
        assert (totals.available, totals.reserved) == (self.available, self.reserved)
        assert totals.available >= 0
        assert totals.reserved >= 0
        assert totals.ledger_available == totals.available
        assert totals.ledger_reserved == totals.reserved
        assert totals.captured == self.captured
        assert totals.funded == self.funded
        assert totals.available + totals.reserved + totals.captured == totals.funded

    @invariant()
    def last_entry_snapshot_matches_wallet(self) -> None:
        last = LedgerEntry.objects.filter(wallet_id=self.wallet.pk).order_by("-id").first()
        if last is not None:
            assert last.available_balance_after == self.available
            assert last.reserved_balance_after == self.reserved


@pytest.mark.slow
def test_wallet_ledger_invariants_hold_for_random_operation_sequences() -> None:
    run_state_machine_as_test(
        WalletLedgerMachine,
        settings=settings(
            max_examples=25,
            stateful_step_count=15,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )
