"""Races between the merchant's controls and dispatch: approve, cancel, the approval expiry and
a dispatch round on one held payout, each in its own thread and connection; exactly one of the
writes that exclude one another wins and the money stays exact. Then generated sequences of the
same operations, checked after every step."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import connections, transaction
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from core.exceptions import ApplicationError
from merchants.models import Mode
from merchants.services import merchant_create, secret_key_rotate
from payouts.models import Payout, PayoutApprovalStatus, PayoutStatus
from payouts.services import (
    payout_approval_threshold_set,
    payout_approve,
    payout_cancel,
    payout_create,
    payouts_approval_expire,
    payouts_dispatch_round,
)
from tests.payouts.helpers import GOOD_ACCOUNT, GTB_CODE, fund_wallet
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from wallets.selectors import wallet_get, wallet_totals

pytestmark = [pytest.mark.slow]
ROUNDS = 6


def _run_together(actions: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Runs each action in its own thread once all are ready; what each returned or raised."""
    barrier = threading.Barrier(len(actions))
    outcomes: dict[str, Any] = {}
    lock = threading.Lock()

    def run(name: str, action: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=30)
            result: Any = action()
        except BaseException as error:  # noqa: BLE001 - reported to the test
            result = error
        finally:
            connections.close_all()
        with lock:
            outcomes[name] = result

    threads = [threading.Thread(target=run, args=item) for item in actions.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(outcomes) == len(actions)
    return outcomes


def _assert_money_exact(wallet: Wallet) -> None:
    totals = wallet_totals(wallet=wallet)
    assert totals.available == totals.ledger_available
    assert totals.reserved == totals.ledger_reserved
    assert totals.available + totals.reserved + totals.captured == totals.funded
    for payout in Payout.objects.filter(wallet=wallet):
        entries = LedgerEntry.objects.filter(payout_id=payout.pk)
        released = entries.filter(entry_type=LedgerEntryType.PAYOUT_REVERSAL).count()
        captured = entries.filter(entry_type=LedgerEntryType.PAYOUT_DEBIT).count()
        assert released == (1 if payout.status == PayoutStatus.FAILED else 0)
        assert captured == (1 if payout.status == PayoutStatus.SUCCESSFUL else 0)
        if payout.approval_status == PayoutApprovalStatus.PENDING:
            assert payout.status in (PayoutStatus.RESERVED,)


@pytest.mark.django_db(transaction=True)
def test_approve_cancel_expiry_and_dispatch_race_and_exactly_one_wins() -> None:
    created = merchant_create(name="Race Stores", email="race@example.com")
    merchant = created.merchant
    wallet = fund_wallet(wallet_get(merchant=merchant, mode=Mode.TEST), "1000000.00")
    payout_approval_threshold_set(
        wallet_id=wallet.pk, approval_threshold=Decimal("5000.00"), actor="test"
    )
    creator = created.test_key.secret_key.pk
    approver = secret_key_rotate(merchant=merchant, mode=Mode.TEST).secret_key.pk
    winners: list[str] = []
    for n in range(ROUNDS):
        payout = payout_create(
            merchant=merchant,
            mode=Mode.TEST,
            account_number=GOOD_ACCOUNT,
            bank_code=GTB_CODE,
            amount=Decimal("6000.00"),
            idempotency_key=f"race-{n}",
            created_by_key_id=creator,
        ).payout
        # Old enough to expire.
        Payout.objects.filter(pk=payout.pk).update(created_at=timezone.now() - timedelta(days=2))
        scope = {"merchant": merchant, "mode": Mode.TEST, "payout_id": payout.pk}
        outcomes = _run_together(
            {
                "approve": lambda scope=scope: payout_approve(
                    **scope, key_id=approver, actor="race"
                ),
                "cancel": lambda scope=scope: payout_cancel(**scope, actor="race"),
                "expire": lambda: payouts_approval_expire().expired,
                "dispatch": lambda: payouts_dispatch_round().claimed,
            }
        )
        unexpected = [
            value
            for value in outcomes.values()
            if isinstance(value, BaseException) and not isinstance(value, ApplicationError)
        ]
        assert not unexpected, unexpected
        won = [
            name for name in ("approve", "cancel") if not isinstance(outcomes[name], BaseException)
        ]
        if outcomes["expire"] == 1:
            won.append("expire")
        assert len(won) == 1, outcomes
        winners.append(won[0])
        final = Payout.objects.get(pk=payout.pk)
        if won == ["approve"]:
            assert final.approval_status == PayoutApprovalStatus.APPROVED
            payouts_dispatch_round()
            assert Payout.objects.get(pk=payout.pk).status == PayoutStatus.SUCCESSFUL
        else:
            assert final.status == PayoutStatus.FAILED
            assert outcomes["dispatch"] == 0
            assert final.error_message == (
                "Cancelled by the merchant" if won == ["cancel"] else "Approval expired"
            )
        _assert_money_exact(wallet)
    assert winners  # one winner per round, whichever it was


@pytest.mark.django_db(transaction=True)
def test_a_cancel_at_the_scheduled_time_and_the_dispatch_never_both_win() -> None:
    merchant = merchant_create(name="Clock Stores", email="clock@example.com").merchant
    wallet = fund_wallet(wallet_get(merchant=merchant, mode=Mode.TEST), "100000.00")
    for n in range(ROUNDS):
        due = timezone.now() + timedelta(milliseconds=300)
        payout = payout_create(
            merchant=merchant,
            mode=Mode.TEST,
            account_number=GOOD_ACCOUNT,
            bank_code=GTB_CODE,
            amount=Decimal("100.00"),
            idempotency_key=f"clock-{n}",
            scheduled_for=due,
        ).payout
        scope = {"merchant": merchant, "mode": Mode.TEST, "payout_id": payout.pk}

        def at_due(action: Callable[[], Any], due: Any = due) -> Callable[[], Any]:
            def run() -> Any:
                time.sleep(max(0.0, (due - timezone.now()).total_seconds()))
                return action()

            return run

        outcomes = _run_together(
            {
                "cancel": at_due(lambda scope=scope: payout_cancel(**scope, actor="race")),
                "dispatch": at_due(lambda: payouts_dispatch_round().claimed),
            }
        )
        cancelled = not isinstance(outcomes["cancel"], BaseException)
        dispatched = outcomes["dispatch"] == 1
        assert not (cancelled and dispatched), outcomes
        payouts_dispatch_round()  # a round after the time takes it unless it was cancelled
        final = Payout.objects.get(pk=payout.pk)
        assert final.status == (PayoutStatus.FAILED if cancelled else PayoutStatus.SUCCESSFUL)
        _assert_money_exact(wallet)


# --- Generated sequences -----------------------------------------------------------------------


@pytest.fixture
def rolled_back() -> Callable[[], Any]:
    """Each generated example in a transaction of its own, rolled back at its end."""

    @contextmanager
    def block() -> Iterator[None]:
        with transaction.atomic():
            yield
            transaction.set_rollback(True)

    return block


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["create", "approve_same", "approve_other", "cancel", "expire", "round"]),
        st.integers(min_value=0, max_value=3),  # which payout
        st.sampled_from(["100.00", "5000.00", "7000.00"]),  # a create's amount
        st.booleans(),  # a create's schedule: an hour ahead
    ),
    min_size=1,
    max_size=15,
)


@hypothesis_settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=OPERATIONS)
def test_generated_controls_keep_the_money_exact(
    merchant_account: Any, rolled_back: Callable[[], Any], operations: list[Any]
) -> None:
    with rolled_back():
        merchant = merchant_account.merchant
        wallet = fund_wallet(wallet_get(merchant=merchant, mode=Mode.TEST), "50000.00")
        payout_approval_threshold_set(
            wallet_id=wallet.pk, approval_threshold=Decimal("5000.00"), actor="test"
        )
        creator = merchant_account.test_key.secret_key.pk
        other = secret_key_rotate(merchant=merchant, mode=Mode.TEST).secret_key.pk
        payouts: list[int] = []
        for step, (operation, which, amount, scheduled) in enumerate(operations):
            target = payouts[which % len(payouts)] if payouts else None
            scope = {"merchant": merchant, "mode": Mode.TEST, "payout_id": target}
            try:
                if operation == "create":
                    payouts.append(
                        payout_create(
                            merchant=merchant,
                            mode=Mode.TEST,
                            account_number=GOOD_ACCOUNT,
                            bank_code=GTB_CODE,
                            amount=Decimal(amount),
                            idempotency_key=f"gen-{step}",
                            created_by_key_id=creator,
                            scheduled_for=timezone.now() + timedelta(hours=1)
                            if scheduled
                            else None,
                        ).payout.pk
                    )
                elif operation == "round":
                    payouts_dispatch_round()
                elif operation == "expire":
                    payouts_approval_expire(now=timezone.now() + timedelta(days=2))
                elif target is not None and operation == "cancel":
                    payout_cancel(**scope, actor="gen")
                elif target is not None:
                    key = creator if operation == "approve_same" else other
                    payout_approve(**scope, key_id=key, actor="gen")
            except ApplicationError as error:
                assert error.status in (400, 403, 409)
            _assert_money_exact(wallet)
            for payout in Payout.objects.filter(pk__in=payouts):
                held = payout.approval_status == PayoutApprovalStatus.PENDING or (
                    payout.scheduled_for is not None and payout.scheduled_for > timezone.now()
                )
                if held:
                    assert payout.status in (PayoutStatus.RESERVED, PayoutStatus.FAILED)
