"""Ops commands: progress on stderr, a one-line summary on stdout, non-zero exit on failure."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from payouts.models import Payout, PayoutStatus
from payouts.services import payout_dispatch
from payouts.tasks import payouts_dispatch_stuck_task, payouts_requery_due_task
from tests.payouts.factories import PayoutFactory
from tests.payouts.helpers import assert_wallet_balanced, reload

pytestmark = pytest.mark.django_db


def run(name: str, *args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(name, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_dispatch_stuck_command(funded_wallet, create_payout) -> None:
    payouts = [create_payout().payout, create_payout(account_number="1000000001").payout]
    out, err = run("dispatch_stuck", "--older-than", "0")
    assert out.strip() == (
        "dispatch_stuck: 2 payout(s) selected: 1 failed, 1 successful; 0 error(s)"
    )
    assert "dispatch [" in err and "2/2" in err
    assert [reload(p).status for p in payouts] == [PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED]
    assert_wallet_balanced(funded_wallet)


def test_dispatch_stuck_default_age_spares_fresh_payouts(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    out, _ = run("dispatch_stuck")
    assert out.strip() == "dispatch_stuck: 0 payout(s) selected; 0 error(s)"
    assert reload(payout).status == PayoutStatus.RESERVED


def test_dispatch_stuck_enqueue(funded_wallet, create_payout) -> None:
    create_payout()
    out, _ = run("dispatch_stuck", "--older-than", "0", "--enqueue")
    assert out.strip() == "dispatch_stuck: 1 payout(s) selected: 1 queued; 0 error(s)"


@pytest.mark.parametrize("args", [("--limit", "0"), ("--older-than", "-1")])
def test_dispatch_stuck_rejects_bad_options(db, args: tuple[str, str]) -> None:
    with pytest.raises(CommandError):
        run("dispatch_stuck", *args)


def test_requery_ambiguous_command(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number="1000000002").payout
    payout_dispatch(payout_id=payout.pk)
    Payout.objects.filter(pk=payout.pk).update(
        next_requery_at=timezone.now() - timedelta(seconds=1)
    )
    out, err = run("requery_ambiguous")
    assert out.strip() == "requery_ambiguous: 1 payout(s) selected: 1 successful; 0 error(s)"
    assert "1/1" in err
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert_wallet_balanced(funded_wallet)


def test_requery_ambiguous_fails_loudly_on_errors(test_wallet) -> None:
    PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.AMBIGUOUS,
        provider_name="retired-provider",
        next_requery_at=timezone.now() - timedelta(minutes=1),
    )
    out = StringIO()
    with pytest.raises(CommandError, match="1 payout requery"):
        call_command("requery_ambiguous", stdout=out, stderr=StringIO())
    assert out.getvalue().strip() == "requery_ambiguous: 1 payout(s) selected; 1 error(s)"


def test_beat_tasks_hand_work_to_the_workers(funded_wallet, create_payout, settings) -> None:
    settings.PAYOUT_DISPATCH_STUCK_AFTER = timedelta(0)
    create_payout()
    assert payouts_dispatch_stuck_task() == (
        "dispatch_stuck: 1 payout(s) selected: 1 queued; 0 error(s)"
    )
    assert payouts_requery_due_task() == "requery_ambiguous: 0 payout(s) selected; 0 error(s)"


def test_beat_schedule_lists_both_sweepers(settings) -> None:
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {
        "payouts.tasks.payouts_requery_due_task",
        "payouts.tasks.payouts_dispatch_stuck_task",
    } <= tasks
