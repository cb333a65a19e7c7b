"""Generated sequences through the real payout and wallet services: fundings (with provider
replays) and payouts of odd-cent amounts that succeed, fail, or go ambiguous and are then settled
by requery or by finance. After every step each wallet is exact to the kobo: balances equal the
sums of their ledger deltas and available + reserved + captured == funded; at the end
``reconcile_wallets`` passes."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO
from itertools import count

import pytest
from django.core.management import call_command
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from merchants.models import Mode
from merchants.services import merchant_create
from payouts.models import Payout, PayoutStatus
from payouts.providers.sandbox import (
    ACCOUNT_ALWAYS_AMBIGUOUS,
    ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL,
    ACCOUNT_FAILED,
)
from payouts.services import (
    payout_create,
    payout_dispatch,
    payout_requery,
    payout_resolve_manually,
)
from tests.payouts.helpers import GOOD_ACCOUNT, GTB_CODE
from wallets.exceptions import InsufficientBalanceError
from wallets.models import LedgerEntry
from wallets.selectors import payout_fee_calculate, wallet_get, wallet_totals
from wallets.services import wallet_fund

pytestmark = pytest.mark.django_db

# Odd-cent amounts that once came out a kobo off (binary floats), and any other.
ISSUE_AMOUNTS = ["0.07", "1.13", "59.96", "506.17", "8188.62", "65534.29"]
odd_cents = st.one_of(
    st.sampled_from([Decimal(value) for value in ISSUE_AMOUNTS]),
    st.integers(min_value=1, max_value=10_000_000).map(lambda kobo: Decimal(kobo).scaleb(-2)),
)
beneficiaries = st.sampled_from(
    [GOOD_ACCOUNT, ACCOUNT_FAILED, ACCOUNT_AMBIGUOUS_THEN_SUCCESSFUL, ACCOUNT_ALWAYS_AMBIGUOUS]
)
_sequence = count(1)


class PayoutMoneyMachine(RuleBasedStateMachine):
    """A model of one merchant's test wallet beside the real one."""

    fundings = Bundle("fundings")
    ambiguous = Bundle("ambiguous")

    @initialize()
    def create_merchant(self) -> None:
        from django.contrib.auth import get_user_model

        number = next(_sequence)
        account = merchant_create(name=f"Prop {number}", email=f"prop{number}@example.com")
        self.merchant = account.merchant
        self.wallet = wallet_get(merchant=self.merchant, mode=Mode.TEST)
        self.finance_user = get_user_model().objects.create_user(
            username=f"finance-{number}", password="not-used-here"
        )
        self.funded = Decimal("0.00")
        self.available = Decimal("0.00")
        self.reserved = Decimal("0.00")
        self.captured = Decimal("0.00")

    @rule(target=fundings, amount=odd_cents)
    def fund(self, amount: Decimal) -> tuple[str, Decimal]:
        reference = f"PROP-FUND-{next(_sequence)}"
        result = wallet_fund(wallet_id=self.wallet.pk, amount=amount, reference=reference)
        assert result.duplicate is False
        self.funded += amount
        self.available += amount
        return reference, amount

    @rule(funding=fundings)
    def replay_funding(self, funding: tuple[str, Decimal]) -> None:
        reference, amount = funding
        result = wallet_fund(wallet_id=self.wallet.pk, amount=amount, reference=reference)
        assert result.duplicate is True

    @rule(target=ambiguous, amount=odd_cents, account=beneficiaries)
    def create_and_dispatch(self, amount: Decimal, account: str) -> object:
        fee = payout_fee_calculate(amount=amount)
        try:
            created = payout_create(
                merchant=self.merchant,
                mode=Mode.TEST,
                account_number=account,
                bank_code=GTB_CODE,
                amount=amount,
                idempotency_key=f"prop-{next(_sequence)}",
            )
        except InsufficientBalanceError:
            assert amount + fee > self.available
            return None
        payout = created.payout
        assert payout.total_debit_amount == amount + fee
        self.available -= amount + fee
        self.reserved += amount + fee
        payout = payout_dispatch(payout_id=payout.pk)
        return self._apply(payout)

    @rule(payout_id=consumes(ambiguous), finance_says=st.sampled_from(["requery", "ok", "no"]))
    def settle_ambiguous(self, payout_id: int | None, finance_says: str) -> None:
        if payout_id is None:
            return
        payout = Payout.objects.get(pk=payout_id)
        if finance_says == "requery":
            payout = payout_requery(payout=payout)
        else:
            payout_resolve_manually(
                payout_id=payout_id,
                to_status=PayoutStatus.SUCCESSFUL if finance_says == "ok" else PayoutStatus.FAILED,
                reason="checked against the bank statement",
                resolved_by=self.finance_user,
            )
            payout.refresh_from_db()
        self._apply(payout)

    def _apply(self, payout: Payout) -> int | None:
        total = payout.total_debit_amount
        if payout.status == PayoutStatus.SUCCESSFUL:
            self.reserved -= total
            self.captured += total
        elif payout.status == PayoutStatus.FAILED:
            self.reserved -= total
            self.available += total
        else:
            assert payout.status == PayoutStatus.AMBIGUOUS
            return payout.pk
        return None

    @invariant()
    def wallet_is_exact_to_the_kobo(self) -> None:
        totals = wallet_totals(wallet=self.wallet)
        assert totals.available == self.available == totals.ledger_available
        assert totals.reserved == self.reserved == totals.ledger_reserved
        assert totals.captured == self.captured
        assert totals.funded == self.funded
        assert totals.available + totals.reserved + totals.captured == totals.funded

    def teardown(self) -> None:
        if not hasattr(self, "wallet"):
            return
        out = StringIO()
        call_command("reconcile_wallets", "--no-progress", stdout=out, stderr=StringIO())
        assert "0 mismatch; 0 ledger snapshot mismatch(es)" in out.getvalue()
        assert LedgerEntry.objects.filter(wallet_id=self.wallet.pk).exists() == (self.funded > 0)


@pytest.mark.slow
def test_payout_sequences_keep_every_wallet_exact() -> None:
    run_state_machine_as_test(
        PayoutMoneyMachine,
        settings=settings(
            max_examples=25,
            stateful_step_count=25,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
