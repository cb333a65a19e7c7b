"""Generated sequences through the real services: fundings, changes of the amount kept, beat runs
and "sweep now" at random Lagos instants over a few days. After every step: at most one sweep
per wallet per Lagos day, each with its own payout keyed by its day; a sweep leaves at least the
amount kept available and is made exactly when the model says one is due; the wallet stays
exact to the kobo."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from decimal import Decimal
from itertools import count
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from core.exceptions import ApplicationError
from merchants.models import Mode
from merchants.services import merchant_create
from payouts.models import Payout
from sweeps.models import Sweep, SweepSchedule
from sweeps.services import sweep_amount, sweep_run_due, sweep_run_now
from tests.payouts.helpers import assert_wallet_balanced
from tests.sweeps.factories import SettlementAccountFactory, SweepScheduleFactory
from wallets.selectors import wallet_get
from wallets.services import wallet_fund

pytestmark = pytest.mark.django_db

LAGOS = ZoneInfo("Africa/Lagos")
START = datetime(2026, 11, 23, 9, 30, tzinfo=LAGOS)  # a Monday, past the sweep time
SWEEP_TIME = time(9, 0)
amounts = st.integers(min_value=1, max_value=20_000_000).map(lambda kobo: Decimal(kobo).scaleb(-2))
_sequence = count(1)


class SweepMachine(RuleBasedStateMachine):
    sweeps_made = 0  # across every example: the sequences are not vacuous (it varies by run)

    @initialize()
    def create_merchant(self) -> None:
        number = next(_sequence)
        account = merchant_create(name=f"Sweep {number}", email=f"sweep{number}@example.com")
        self.merchant = account.merchant
        self.wallet = wallet_get(merchant=self.merchant, mode=Mode.TEST)
        SettlementAccountFactory(
            merchant=self.merchant,
            account_number="0123456789",
            effective_at=START - timedelta(days=2),
        )
        self.schedule = SweepScheduleFactory(wallet=self.wallet, time=SWEEP_TIME)
        wallet_fund(wallet_id=self.wallet.pk, amount=Decimal("100000.00"), reference="F-0")
        self.now = START
        self.swept_days: set[object] = set()

    def _available(self) -> Decimal:
        self.wallet.refresh_from_db()
        return self.wallet.available_balance

    def _keep(self) -> Decimal:
        return SweepSchedule.objects.get(pk=self.schedule.pk).amount_to_keep

    @rule(amount=amounts)
    def fund(self, amount: Decimal) -> None:
        wallet_fund(wallet_id=self.wallet.pk, amount=amount, reference=f"F-{next(_sequence)}")

    @rule(keep=st.sampled_from(["0.00", "10.00", "5000.00", "100000.00"]))
    def keep(self, keep: str) -> None:
        SweepSchedule.objects.filter(pk=self.schedule.pk).update(amount_to_keep=Decimal(keep))

    @rule(minutes=st.integers(min_value=1, max_value=36 * 60))
    def advance(self, minutes: int) -> None:
        self.now += timedelta(minutes=minutes)

    def _expect(self, *, scheduled: bool) -> Decimal | None:
        local = self.now.astimezone(LAGOS)
        if local.date() in self.swept_days or (scheduled and local.time() < SWEEP_TIME):
            return None
        return sweep_amount(available=self._available(), amount_to_keep=self._keep())

    def _check_made(self, expected: Decimal | None, before: int) -> None:
        payouts = Payout.objects.filter(wallet=self.wallet)
        assert payouts.count() == before + (expected is not None)
        if expected is not None:
            payout = payouts.latest("id")
            assert payout.amount == expected
            assert self._available() >= self._keep()
            self.swept_days.add(self.now.astimezone(LAGOS).date())
            type(self).sweeps_made += 1

    @rule()
    def beat(self) -> None:
        expected = self._expect(scheduled=True)
        before = Payout.objects.filter(wallet=self.wallet).count()
        sweep_run_due(now=self.now)
        self._check_made(expected, before)

    @rule()
    def sweep_now(self) -> None:
        expected = self._expect(scheduled=False)
        before = Payout.objects.filter(wallet=self.wallet).count()
        try:
            sweep_run_now(merchant=self.merchant, mode=Mode.TEST, now=self.now)
        except ApplicationError:
            assert expected is None
        self._check_made(expected, before)

    @invariant()
    def one_sweep_a_day_each_with_its_payout(self) -> None:
        if not hasattr(self, "wallet"):
            return
        sweeps = list(Sweep.objects.filter(wallet=self.wallet).select_related("payout"))
        assert len({sweep.sweep_date for sweep in sweeps}) == len(sweeps)
        assert len(sweeps) == Payout.objects.filter(wallet=self.wallet).count()
        for sweep in sweeps:
            assert sweep.payout.idempotency_key == f"sweep-{self.wallet.pk}-{sweep.sweep_date}"
            assert sweep.payout.amount == sweep.amount
        assert_wallet_balanced(self.wallet)


@pytest.mark.slow
def test_sweep_sequences_keep_one_sweep_a_day_and_the_amount_kept() -> None:
    run_state_machine_as_test(
        SweepMachine,
        settings=settings(
            max_examples=25,
            stateful_step_count=25,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
    assert SweepMachine.sweeps_made >= 5
