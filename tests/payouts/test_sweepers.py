"""Sweepers: lost dispatches are recovered exactly once; ambiguous payouts are requeried no
sooner than the configured delay, then with exponential backoff."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from payouts.models import Payout, PayoutStatus, SandboxTransfer
from payouts.selectors import (
    PayoutsWaiting,
    payout_find,
    payouts_waiting_for_requery,
    payouts_waiting_to_be_stuck,
)
from payouts.services import (
    payout_dispatch,
    payouts_dispatch_stuck,
    payouts_requery_due,
)
from tests.payouts.factories import PayoutFactory
from tests.payouts.helpers import assert_wallet_balanced, dispatch_claim, reload
from wallets.models import LedgerEntry, LedgerEntryType

pytestmark = pytest.mark.django_db


def debits(payout: Payout) -> int:
    return LedgerEntry.objects.filter(
        payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
    ).count()


# --- dispatch_stuck -------------------------------------------------------------------------


def test_lost_dispatch_is_recovered_with_one_provider_call_and_one_capture(
    funded_wallet, create_payout
) -> None:
    """Reserve, drop the task (on_commit callbacks never run here), run the sweeper."""
    payout = create_payout().payout
    later = timezone.now() + timedelta(minutes=3)
    report = payouts_dispatch_stuck(now=later)
    assert report.selected == 1
    assert report.outcomes == {"successful": 1}
    assert report.errors == 0
    transfer = SandboxTransfer.objects.get(reference=payout.internal_reference)
    assert transfer.initiate_count == 1
    assert SandboxTransfer.objects.count() == 1
    assert debits(payout) == 1
    assert reload(payout).status == PayoutStatus.SUCCESSFUL

    again = payouts_dispatch_stuck(now=later + timedelta(minutes=5))
    assert again.selected == 0
    assert transfer.__class__.objects.get(pk=transfer.pk).initiate_count == 1
    assert debits(payout) == 1
    assert_wallet_balanced(funded_wallet)


def test_lost_dispatches_and_a_stale_claim_go_through_one_round(
    funded_wallet, create_payout
) -> None:
    """Three reserved payouts whose dispatch was lost and a stale claim are claimed together
    (one claim, one instant); the stale claim is verified with the provider before it is sent,
    and every payout is sent once."""
    lost = [create_payout().payout for _ in range(3)]
    stale = create_payout().payout
    dispatch_claim(payout_id=stale.pk)
    Payout.objects.filter(pk=stale.pk).update(
        dispatch_claimed_at=timezone.now() - timedelta(minutes=4)
    )

    report = payouts_dispatch_stuck(now=timezone.now() + timedelta(minutes=3))

    assert (report.selected, report.stuck_reserved, report.stale_processing) == (4, 3, 1)
    assert report.outcomes == {"successful": 4}
    claimed = {reload(payout).dispatch_claimed_at for payout in [*lost, stale]}
    assert len(claimed) == 1
    assert all(reload(payout).dispatch_attempts == 1 for payout in lost)
    assert reload(stale).dispatch_attempts == 2
    for payout in [*lost, stale]:
        assert debits(payout) == 1
        assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    assert_wallet_balanced(funded_wallet)


def test_enqueue_mode_publishes_one_round_for_the_lost_and_a_task_per_stale_claim(
    funded_wallet, create_payout
) -> None:
    lost = [create_payout().payout for _ in range(2)]
    stale = create_payout().payout
    dispatch_claim(payout_id=stale.pk)
    Payout.objects.filter(pk=stale.pk).update(dispatch_claimed_at=None)  # released

    report = payouts_dispatch_stuck(older_than=timedelta(0), enqueue=True)

    assert report.outcomes == {"queued": 3}
    assert [reload(payout).status for payout in lost] == [PayoutStatus.RESERVED] * 2


def test_fresh_reserved_payouts_are_left_to_their_task(funded_wallet, create_payout) -> None:
    create_payout()
    assert payouts_dispatch_stuck().selected == 0
    assert not SandboxTransfer.objects.exists()


def test_older_than_is_configurable(settings, funded_wallet, create_payout) -> None:
    settings.PAYOUT_DISPATCH_STUCK_AFTER = timedelta(seconds=0)
    create_payout()
    assert payouts_dispatch_stuck().selected == 1


def test_stale_processing_claim_is_picked_up(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    dispatch_claim(payout_id=payout.pk)
    assert payouts_dispatch_stuck(older_than=timedelta(0)).selected == 0  # claim is fresh
    Payout.objects.filter(pk=payout.pk).update(
        dispatch_claimed_at=timezone.now() - timedelta(minutes=4)
    )
    report = payouts_dispatch_stuck()
    assert report.outcomes == {"successful": 1}
    assert debits(payout) == 1


def test_dispatch_stuck_leaves_other_statuses_alone(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number="1000000003").payout
    payout_dispatch(payout_id=payout.pk)
    assert payouts_dispatch_stuck(now=timezone.now() + timedelta(hours=1)).selected == 0


def test_dispatch_stuck_enqueue_mode_queues(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    report = payouts_dispatch_stuck(older_than=timedelta(0), enqueue=True)
    assert report.outcomes == {"queued": 1}
    assert reload(payout).status == PayoutStatus.RESERVED  # the worker will dispatch it


def test_progress_is_reported(funded_wallet, create_payout) -> None:
    create_payout()
    create_payout()
    seen: list[tuple[int, int]] = []
    payouts_dispatch_stuck(older_than=timedelta(0), progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 2), (2, 2)]


# --- requery_ambiguous ----------------------------------------------------------------------


@pytest.fixture
def ambiguous(funded_wallet, create_payout) -> Payout:
    payout = create_payout(account_number="1000000002").payout
    payout_dispatch(payout_id=payout.pk)
    return reload(payout)


def test_not_requeried_before_the_first_step(ambiguous) -> None:
    report = payouts_requery_due(now=ambiguous.ambiguous_since + timedelta(seconds=59))
    assert report.selected == 0
    assert SandboxTransfer.objects.get(reference=ambiguous.internal_reference).query_count == 0


def test_the_first_requery_comes_60_to_90_seconds_after_sending(ambiguous) -> None:
    first = ambiguous.next_requery_at - ambiguous.ambiguous_since
    assert timedelta(seconds=60) <= first <= timedelta(seconds=90)


def test_requeried_after_the_first_step(funded_wallet, ambiguous) -> None:
    report = payouts_requery_due(now=ambiguous.ambiguous_since + timedelta(seconds=91))
    assert report.selected == 1
    assert report.outcomes == {"successful": 1}
    assert reload(ambiguous).status == PayoutStatus.SUCCESSFUL
    assert debits(ambiguous) == 1
    assert_wallet_balanced(funded_wallet)


def test_schedule_is_configurable(settings, funded_wallet, create_payout) -> None:
    settings.PAYOUT_REQUERY_SCHEDULE = [timedelta(minutes=30)]
    settings.PAYOUT_REQUERY_FIRST_JITTER = timedelta(0)
    payout = create_payout(account_number="1000000002").payout
    payout_dispatch(payout_id=payout.pk)
    since = reload(payout).ambiguous_since
    assert payouts_requery_due(now=since + timedelta(minutes=29)).selected == 0
    assert payouts_requery_due(now=since + timedelta(minutes=31)).selected == 1


def test_requeries_follow_the_schedule_then_hourly(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number="1000000003").payout
    payout_dispatch(payout_id=payout.pk)
    far = timezone.now() + timedelta(days=2)  # every requery is due
    gaps = []
    for _requery in range(5):
        assert payouts_requery_due(now=far).outcomes == {"ambiguous": 1}
        gaps.append(reload(payout).next_requery_at - timezone.now())
    expected = [180, 600, 1800, 3600, 3600]
    for gap, seconds in zip(gaps, expected, strict=True):
        assert timedelta(seconds=seconds - 5) < gap <= timedelta(seconds=seconds)
    assert reload(payout).requery_count == 5
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("1010.00")
    assert_wallet_balanced(funded_wallet)


def test_a_dispatched_payout_still_pending_is_asked_60_to_90_seconds_later(
    funded_wallet, create_payout
) -> None:
    payout = create_payout().payout
    claim = dispatch_claim(payout_id=payout.pk)
    assert claim is not None
    from payouts.providers.base import TransferOutcome, TransferResult
    from payouts.services import DispatchAnswer, payouts_dispatch_apply

    pending = DispatchAnswer(
        result=TransferResult(outcome=TransferOutcome.PENDING), verify_before_send=False
    )
    payouts_dispatch_apply(claims={payout.pk: claim}, answers={payout.pk: pending})
    dispatched = reload(payout)
    assert dispatched.status == PayoutStatus.DISPATCHED
    delay = dispatched.next_requery_at - dispatched.dispatched_at
    assert timedelta(seconds=60) <= delay <= timedelta(seconds=90)


def test_unresolved_past_a_day_is_escalated_once_and_logged_once(test_wallet, caplog) -> None:
    now = timezone.now()
    overdue = PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.AMBIGUOUS,
        dispatched_at=now - timedelta(hours=25),
        next_requery_at=now + timedelta(minutes=30),
    )
    PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.AMBIGUOUS,
        dispatched_at=now - timedelta(hours=23),
        next_requery_at=now + timedelta(minutes=30),
    )
    with caplog.at_level("WARNING", logger="payouts.services.sweepers"):
        first = payouts_requery_due(now=now)
        second = payouts_requery_due(now=now + timedelta(minutes=1))
    assert (first.escalated, first.overdue) == (1, 1)
    assert (second.escalated, second.overdue) == (0, 1)
    crossings = [r for r in caplog.records if "escalated to finance" in r.getMessage()]
    assert len(crossings) == 1
    assert overdue.internal_reference in crossings[0].getMessage()
    assert reload(overdue).requery_escalated_at == now
    assert reload(overdue).status == PayoutStatus.AMBIGUOUS  # never failed without an answer
    assert "Overdue: 1 payout(s) unresolved past 24 h (0 newly escalated)." in second.summary()


def test_a_transfer_the_provider_cannot_find_is_never_failed_by_a_requery(
    funded_wallet, ambiguous
) -> None:
    from payouts.providers.base import TransferOutcome, TransferResult
    from payouts.services import payout_requery_apply

    not_found = TransferResult(outcome=TransferOutcome.NOT_FOUND, message="Transfer not found")
    for _requery in range(3):
        answered = payout_requery_apply(payout_id=ambiguous.pk, result=not_found)
    assert answered.status == PayoutStatus.AMBIGUOUS
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == Decimal("1010.00")


def test_long_dispatched_payouts_are_requeried(funded_wallet, test_wallet) -> None:
    dispatched = PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.DISPATCHED,
        next_requery_at=timezone.now() - timedelta(seconds=1),
    )
    fresh = PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.DISPATCHED,
        next_requery_at=timezone.now() + timedelta(minutes=4),
    )
    report = payouts_requery_due()
    assert report.selected == 1
    # The sandbox has no transfer under the factory's reference: inconclusive, so ambiguous.
    assert reload(dispatched).status == PayoutStatus.AMBIGUOUS
    assert reload(fresh).status == PayoutStatus.DISPATCHED


def test_requery_enqueue_mode_leases_the_payout(ambiguous) -> None:
    now = ambiguous.next_requery_at + timedelta(seconds=1)
    report = payouts_requery_due(now=now, enqueue=True)
    assert report.outcomes == {"queued": 1}
    assert reload(ambiguous).next_requery_at == now + timedelta(seconds=120)
    assert payouts_requery_due(now=now + timedelta(seconds=60), enqueue=True).selected == 0


def test_requery_errors_are_counted_and_do_not_stop_the_run(test_wallet) -> None:
    broken = PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.AMBIGUOUS,
        provider_name="retired-provider",
        next_requery_at=timezone.now() - timedelta(minutes=1),
    )
    fine = PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.AMBIGUOUS,
        next_requery_at=timezone.now() - timedelta(seconds=30),
    )
    report = payouts_requery_due()
    assert report.selected == 2
    assert report.errors == 1
    assert report.outcomes == {"ambiguous": 1}
    assert reload(broken).status == PayoutStatus.AMBIGUOUS
    assert reload(fine).requery_count == 1
    assert "1 error(s)" in report.summary()


# --- what waits -----------------------------------------------------------------------------


def test_waiting_for_requery_is_one_query_with_count_and_first_due(
    test_wallet, django_assert_num_queries
) -> None:
    now = timezone.now()
    PayoutFactory(wallet=test_wallet, status=PayoutStatus.AMBIGUOUS, next_requery_at=now)
    first = PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.DISPATCHED,
        next_requery_at=now + timedelta(minutes=5),
    )
    PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.AMBIGUOUS,
        next_requery_at=now + timedelta(hours=2),
    )
    PayoutFactory(wallet=test_wallet, status=PayoutStatus.FAILED, next_requery_at=now)
    with django_assert_num_queries(1):
        waiting = payouts_waiting_for_requery(now=now)
    assert waiting == PayoutsWaiting(
        count=2,
        next_due_at=now + timedelta(minutes=5),
        next_reference=first.internal_reference,
    )
    assert payouts_waiting_for_requery(now=now, excluding=[first.pk]).count == 1


def test_nothing_waiting(db) -> None:
    assert payouts_waiting_for_requery(now=timezone.now()) == PayoutsWaiting(count=0)


def test_waiting_to_be_stuck_counts_young_reserved_payouts(
    test_wallet, django_assert_num_queries
) -> None:
    old = PayoutFactory(wallet=test_wallet)
    Payout.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=1))
    young = PayoutFactory(wallet=test_wallet)
    PayoutFactory(wallet=test_wallet)
    with django_assert_num_queries(1):
        waiting = payouts_waiting_to_be_stuck(now=timezone.now(), older_than=timedelta(minutes=2))
    assert waiting == PayoutsWaiting(
        count=2,
        next_due_at=reload(young).created_at + timedelta(minutes=2),
        next_reference=young.internal_reference,
    )


def test_a_payout_is_found_by_id_or_internal_reference(test_wallet) -> None:
    payout = PayoutFactory(wallet=test_wallet)
    assert payout_find(identifier=str(payout.pk)) == payout
    assert payout_find(identifier=payout.internal_reference) == payout
    assert payout_find(identifier="99999999999999999999999") is None
    assert payout_find(identifier="po_unknown") is None
