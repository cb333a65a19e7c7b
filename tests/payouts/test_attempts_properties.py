"""Generated sequences of provider answers, dispatches and requeries over two providers: after
every step at most one attempt of the payout can succeed, no provider receives a reference twice,
a new attempt follows only one that certainly moved no money, and money is released only when
no attempt can still succeed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from payouts.exceptions import DispatchDeferredError
from payouts.models import (
    COULD_SUCCEED_OUTCOMES,
    FINAL_STATUSES,
    NO_MONEY_MOVED_OUTCOMES,
    PayoutAttempt,
    PayoutStatus,
)
from payouts.providers.base import TransferOutcome
from payouts.services import payout_dispatch, payout_requery
from tests.payouts.helpers import assert_wallet_balanced, reload
from tests.payouts.test_attempts import TwoProviders, two_providers  # noqa: F401 - a fixture
from wallets.models import LedgerEntry, LedgerEntryType, Wallet

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

INITIATE = st.sampled_from(
    [
        TransferOutcome.SUCCESSFUL,
        TransferOutcome.FAILED,
        TransferOutcome.PENDING,
        TransferOutcome.UNKNOWN,
        TransferOutcome.REJECTED,
        TransferOutcome.NOT_SENT,
    ]
)
VERIFY = st.sampled_from(
    [
        TransferOutcome.SUCCESSFUL,
        TransferOutcome.FAILED,
        TransferOutcome.PENDING,
        TransferOutcome.UNKNOWN,
        TransferOutcome.NOT_FOUND,
    ]
)
STEP = st.tuples(st.sampled_from(["dispatch", "requery"]), INITIATE, INITIATE, VERIFY, VERIFY)


def _check(payout_id: int, pair: TwoProviders, wallet: Wallet) -> None:
    payout = reload_by_id(payout_id)
    attempts = list(PayoutAttempt.objects.filter(payout_id=payout_id).order_by("number"))
    assert [a.number for a in attempts] == list(range(1, len(attempts) + 1))
    assert sum(a.outcome in COULD_SUCCEED_OUTCOMES for a in attempts) <= 1
    for earlier in attempts[:-1]:
        assert earlier.outcome in NO_MONEY_MOVED_OUTCOMES, "a new attempt after a live one"
    for provider in (pair.first, pair.second):
        assert max(Counter(provider.sent).values(), default=0) <= 1, provider.sent
    released = LedgerEntry.objects.filter(
        payout_id=payout_id, entry_type=LedgerEntryType.PAYOUT_REVERSAL
    ).count()
    assert released == (payout.status == PayoutStatus.FAILED)
    if payout.status == PayoutStatus.FAILED:
        assert not any(a.outcome in COULD_SUCCEED_OUTCOMES for a in attempts)
    if payout.status == PayoutStatus.SUCCESSFUL:
        assert attempts[-1].outcome == "successful"
    assert_wallet_balanced(wallet)


def reload_by_id(payout_id: int) -> Any:
    from payouts.models import Payout

    return Payout.objects.get(pk=payout_id)


@hypothesis_settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(STEP, min_size=1, max_size=6))
def test_routing_and_failover_keep_one_attempt_that_can_succeed(
    steps: list[tuple[str, str, str, str, str]],
    funded_wallet: Wallet,
    create_payout: Callable[..., Any],
    two_providers: TwoProviders,  # noqa: F811 - the fixture imported above
) -> None:
    with transaction.atomic():
        two_providers.first.sent.clear()
        two_providers.second.sent.clear()
        payout = create_payout().payout
        for action, first, second, first_verify, second_verify in steps:
            two_providers.first.initiate, two_providers.second.initiate = first, second
            two_providers.first.verify, two_providers.second.verify = first_verify, second_verify
            current = reload(payout)
            if current.status in FINAL_STATUSES:
                break
            try:
                if action == "dispatch":
                    payout_dispatch(payout_id=payout.pk)
                else:
                    payout_requery(payout=current)
            except DispatchDeferredError:
                pass
            _check(payout.pk, two_providers, funded_wallet)
        transaction.set_rollback(True)
