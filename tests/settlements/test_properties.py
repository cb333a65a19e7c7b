"""Generated sequences through the real services: collections paid with and without splits,
refunds deducted from what the merchant is owed, settlement runs, share payouts that succeed,
fail or come back. After every step the platform equation holds to the kobo, the merchant's
wallet holds the sum of its settlements' nets, and the platform wallet holds exactly the shares
not yet paid out."""

from __future__ import annotations

from datetime import timedelta
from decimal import ROUND_DOWN, Decimal
from itertools import count

import pytest
from django.db import transaction
from django.db.models import Sum
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from collections_app.models import CollectionTransaction, TransactionSplitEntry
from merchants.models import Mode
from payouts.models import Payout, PayoutStatus
from payouts.providers.sandbox import ACCOUNT_FAILED
from payouts.services import payout_return, payouts_dispatch_round
from settlements.models import PlatformAccount, Settlement, SettlementShare
from settlements.platform_ledger import platform_balances
from settlements.services import platform_wallet_get, settlement_run, settlement_shares_sweep
from tests.settlements.helpers import (
    merchant_with_wallets,
    paid_collection,
    refund_pending,
    subaccount_for,
    wallet_of,
)

# Generated settlement sequences against the database: seconds per run.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ZERO = Decimal("0.00")
amounts = st.integers(min_value=100, max_value=5_000_000).map(lambda kobo: Decimal(kobo).scaleb(-2))
percents = st.sampled_from([0, 5, 10, 33, 50])
_sequence = count(1)


def _part(amount: Decimal, percent: int) -> Decimal:
    return (amount * percent / 100).quantize(Decimal("0.01"), rounding=ROUND_DOWN)


class SettlementMachine(RuleBasedStateMachine):
    """Each generated sequence runs in a savepoint rolled back at its end, so sequences start
    from the same empty platform and an error in one cannot leak into the next."""

    def __init__(self) -> None:
        super().__init__()
        self._savepoint = transaction.atomic()
        self._savepoint.__enter__()

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._savepoint.__exit__(None, None, None)

    @initialize()
    def create_merchant(self) -> None:
        number = next(_sequence)
        self.merchant = merchant_with_wallets(f"Prop {number}")
        self.good = subaccount_for(self.merchant)
        self.failing = subaccount_for(self.merchant, account_number=ACCOUNT_FAILED)

    @rule(amount=amounts, good=percents, failing=percents)
    def pay(self, amount: Decimal, good: int, failing: int) -> None:
        shares = {self.good: _part(amount, good), self.failing: _part(amount, failing)}
        fee = _part(amount, 1)
        paid_collection(
            merchant=self.merchant,
            amount=amount,
            fee=fee,
            shares={subaccount: share for subaccount, share in shares.items() if share > 0},
        )

    @rule(percent=st.integers(min_value=1, max_value=100))
    def refund(self, percent: int) -> None:
        owed = platform_balances(mode=Mode.TEST, merchant_id=self.merchant.pk)[
            PlatformAccount.OWED_MERCHANTS
        ]
        collection = (
            CollectionTransaction.objects.filter(merchant=self.merchant).order_by("-id").first()
        )
        if collection is None:
            return
        refundable = collection.amount_paid - collection.amount_refunded
        deducted = min(_part(owed, percent), refundable)
        if deducted > 0:
            refund_pending(collection=collection, deducted=deducted)

    @rule()
    def settle(self) -> None:
        settlement_run(merchant_id=self.merchant.pk, mode=Mode.TEST)

    @rule()
    def pay_shares(self) -> None:
        settlement_shares_sweep(older_than=timedelta(0))
        payouts_dispatch_round()

    @rule()
    def return_a_paid_share(self) -> None:
        paid = Payout.objects.filter(
            settlement_share__isnull=False,
            status=PayoutStatus.SUCCESSFUL,
            returned_at__isnull=True,
        ).first()
        if paid is not None:
            payout_return(payout_id=paid.pk, reason="Account closed")

    @invariant()
    def the_platform_equation_holds(self) -> None:
        assert platform_balances(mode=Mode.TEST).equation_holds
        assert platform_balances(mode=Mode.TEST, merchant_id=self.merchant.pk).equation_holds

    @invariant()
    def the_wallet_holds_the_sum_of_the_nets(self) -> None:
        nets = Settlement.objects.filter(merchant=self.merchant).aggregate(total=Sum("net"))
        assert wallet_of(self.merchant).available_balance == (nets["total"] or ZERO)
        owed = platform_balances(mode=Mode.TEST, merchant_id=self.merchant.pk)
        assert owed[PlatformAccount.OWED_MERCHANTS] >= 0

    @invariant()
    def the_platform_wallet_holds_the_shares_not_yet_paid(self) -> None:
        settled = SettlementShare.objects.aggregate(total=Sum("amount"))["total"] or ZERO
        paid = (
            Payout.objects.filter(
                settlement_share__isnull=False,
                status=PayoutStatus.SUCCESSFUL,
                returned_at__isnull=True,
            ).aggregate(total=Sum("amount"))["total"]
            or ZERO
        )
        wallet = platform_wallet_get(mode=Mode.TEST)
        assert wallet.available_balance + wallet.reserved_balance == settled - paid
        split = (
            TransactionSplitEntry.objects.filter(
                transaction__mode=Mode.TEST, transaction__payment_status="paid"
            ).aggregate(total=Sum("share"))["total"]
            or ZERO
        )
        balances = platform_balances(mode=Mode.TEST)
        assert balances[PlatformAccount.OWED_SUBACCOUNTS] == split - paid
        assert balances[PlatformAccount.SUBACCOUNT_PAYOUTS] == paid


def test_generated_sequences_keep_the_platform_and_the_wallets_exact() -> None:
    run_state_machine_as_test(
        SettlementMachine,
        settings=settings(
            max_examples=20,
            stateful_step_count=12,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
