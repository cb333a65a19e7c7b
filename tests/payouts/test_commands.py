"""Ops commands: what each sweeper considered, did and leaves waiting on stdout (or one JSON
object), progress on stderr, exit 1 on failure; ``--id`` forces one payout now."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, ManagementUtility, call_command
from django.utils import timezone

from audit.models import AuditRecord
from core.dates import local_isoformat, local_text
from payouts.management.commands.requery_ambiguous import Command as RequeryCommand
from payouts.models import Payout, PayoutStatus
from payouts.services import payout_dispatch
from payouts.tasks import payouts_dispatch_stuck_task, payouts_requery_due_task
from tests.payouts.factories import PayoutFactory
from tests.payouts.helpers import assert_wallet_balanced, reload

pytestmark = pytest.mark.django_db

AMBIGUOUS_THEN_SUCCESSFUL = "1000000002"
FAILED = "1000000001"


def run(name: str, *args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(name, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


class TerminalStream(StringIO):
    def isatty(self) -> bool:
        return True


def test_dispatch_stuck_says_what_it_considered_and_did(funded_wallet, create_payout) -> None:
    payouts = [create_payout().payout, create_payout(account_number=FAILED).payout]
    out, err = run("dispatch_stuck", "--older-than", "0")
    assert out.strip() == (
        "Considered 2 stuck payout(s) (2 reserved for over 0 s, 0 processing with a stale or "
        "released claim): 1 successful, 1 failed; 0 error(s). "
        "Waiting: no reserved payout younger than 0 s."
    )
    assert "dispatch [" in err and "2/2 payouts" in err
    assert "dispatch [" not in out
    assert [reload(p).status for p in payouts] == [PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED]
    assert_wallet_balanced(funded_wallet)


def test_dispatch_stuck_says_how_many_young_payouts_wait(funded_wallet, create_payout) -> None:
    first = create_payout().payout
    create_payout()
    out, _ = run("dispatch_stuck")
    becomes_stuck = reload(first).created_at + timedelta(seconds=120)
    assert out.strip() == (
        "Considered 0 stuck payout(s) (0 reserved for over 2 min, 0 processing with a stale or "
        "released claim); 0 error(s). Waiting: 2 reserved payout(s) younger than 2 min, the "
        f"next becomes stuck at {local_text(becomes_stuck)} (payout {first.internal_reference})."
    )
    assert reload(first).status == PayoutStatus.RESERVED


def test_dispatch_stuck_json_is_one_object_with_the_counts(funded_wallet, create_payout) -> None:
    stuck = create_payout().payout
    Payout.objects.filter(pk=stuck.pk).update(created_at=timezone.now() - timedelta(hours=1))
    young = create_payout().payout
    out, err = run("dispatch_stuck", "--json")
    report = json.loads(out)
    assert report["considered"] == 1
    assert report["considered_reserved"] == 1
    assert report["outcomes"] == {"successful": 1}
    assert report["errors"] == 0
    assert report["waiting"]["count"] == 1
    assert report["waiting"]["next_payout"] == young.internal_reference
    assert report["ok"] is True
    assert "1/1 payouts" in err


def test_dispatch_stuck_enqueue(funded_wallet, create_payout) -> None:
    create_payout()
    out, _ = run("dispatch_stuck", "--older-than", "0", "--enqueue")
    assert out.startswith("Considered 1 stuck payout(s) (1 reserved for over 0 s, ")
    assert ": 1 queued; 0 error(s)." in out


@pytest.mark.parametrize("args", [("--limit", "0"), ("--older-than", "-1")])
def test_dispatch_stuck_rejects_bad_options(db, args: tuple[str, str]) -> None:
    with pytest.raises(CommandError):
        run("dispatch_stuck", *args)


def test_dispatch_stuck_id_dispatches_a_young_payout_now(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    out, _ = run("dispatch_stuck", "--id", str(payout.pk))
    assert out.strip() == (
        f"Dispatched payout {payout.internal_reference} (#{payout.pk}) now: reserved → successful."
    )
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    record = AuditRecord.objects.get(action="payouts.payout.dispatch_now")
    assert record.object_id == str(payout.pk)
    assert record.actor_label.startswith("manage.py dispatch_stuck (")
    assert record.after == {"status": "successful", "outcome": "successful"}
    assert_wallet_balanced(funded_wallet)


def test_dispatch_stuck_id_refuses_a_final_payout(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    payout_dispatch(payout_id=payout.pk)
    with pytest.raises(CommandError, match=r"\(#\d+\) is successful: only a reserved payout"):
        run("dispatch_stuck", "--id", payout.internal_reference)
    assert not AuditRecord.objects.filter(action="payouts.payout.dispatch_now").exists()


def test_dispatch_stuck_id_leaves_a_live_claim_alone(test_wallet) -> None:
    claimed = PayoutFactory(
        wallet=test_wallet, status=PayoutStatus.PROCESSING, dispatch_claimed_at=timezone.now()
    )
    with pytest.raises(CommandError, match=r"is processing: a worker claimed it at "):
        run("dispatch_stuck", "--id", str(claimed.pk))
    assert reload(claimed).status == PayoutStatus.PROCESSING


OVERDUE_NONE = " Overdue: 0 payout(s) unresolved past 24 h (0 newly escalated)."


def test_requery_ambiguous_says_what_it_did_and_what_waits(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number=AMBIGUOUS_THEN_SUCCESSFUL).payout
    payout_dispatch(payout_id=payout.pk)
    Payout.objects.filter(pk=payout.pk).update(
        next_requery_at=timezone.now() - timedelta(seconds=1)
    )
    later = timezone.now() + timedelta(minutes=20)
    waiting = [
        PayoutFactory(wallet=funded_wallet, status=PayoutStatus.AMBIGUOUS, next_requery_at=due)
        for due in (later + timedelta(hours=3), later)
    ]
    out, err = run("requery_ambiguous")
    assert out.strip() == (
        "Considered 1 due payout(s): 1 successful; 0 error(s). Waiting: 2 ambiguous or "
        f"dispatched payout(s) not yet due, next due {local_text(later)} "
        f"(payout {waiting[1].internal_reference}). Overdue: 0 payout(s) unresolved past 24 h "
        "(0 newly escalated)."
    )
    assert "1/1 payouts" in err
    assert "requery [" not in out
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    assert_wallet_balanced(funded_wallet)


def test_requery_ambiguous_json_has_the_counts(test_wallet) -> None:
    due = timezone.now() - timedelta(minutes=1)
    PayoutFactory(wallet=test_wallet, status=PayoutStatus.AMBIGUOUS, next_requery_at=due)
    later = PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.AMBIGUOUS,
        next_requery_at=timezone.now() + timedelta(minutes=2),
    )
    out, _ = run("requery_ambiguous", "--json", "--no-progress")
    report = json.loads(out)
    assert report["sweeper"] == "requery_ambiguous"
    assert report["considered"] == 1
    assert report["errors"] == 0
    assert report["outcomes"] == {"ambiguous": 1}  # requeried, due again in 3 minutes
    assert (report["overdue"], report["escalated"]) == (0, 0)
    assert report["waiting"] == {
        "count": 2,
        "next_due_at": local_isoformat(reload(later).next_requery_at),
        "next_payout": later.internal_reference,
    }


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
    assert out.getvalue().strip() == (
        "Considered 1 due payout(s); 1 error(s). "
        "Waiting: no ambiguous or dispatched payout is due later." + OVERDUE_NONE
    )


def test_requery_ambiguous_exits_1_from_the_command_line(test_wallet, capsys) -> None:
    PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.AMBIGUOUS,
        provider_name="retired-provider",
        next_requery_at=timezone.now() - timedelta(minutes=1),
    )
    with pytest.raises(SystemExit) as exited:
        ManagementUtility(["manage.py", "requery_ambiguous", "--no-progress"]).execute()
    assert exited.value.code == 1
    assert capsys.readouterr().out.startswith("Considered 1 due payout(s); 1 error(s).")


def test_requery_id_requeries_a_payout_not_yet_due(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number=AMBIGUOUS_THEN_SUCCESSFUL).payout
    payout_dispatch(payout_id=payout.pk)
    assert reload(payout).next_requery_at > timezone.now()
    assert run("requery_ambiguous")[0].startswith("Considered 0 due payout(s); 0 error(s).")

    out, _ = run("requery_ambiguous", "--id", str(payout.pk))

    assert out.strip() == (
        f"Requeried payout {payout.internal_reference} (#{payout.pk}) now: ambiguous → successful."
    )
    assert reload(payout).status == PayoutStatus.SUCCESSFUL
    record = AuditRecord.objects.get(action="payouts.payout.requery_now")
    assert record.object_id == str(payout.pk)
    assert record.actor_label.startswith("manage.py requery_ambiguous (")
    assert record.before == {"status": "ambiguous"}
    assert_wallet_balanced(funded_wallet)


def test_requery_id_takes_the_internal_reference_and_json(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number=AMBIGUOUS_THEN_SUCCESSFUL).payout
    payout_dispatch(payout_id=payout.pk)
    out, _ = run("requery_ambiguous", "--id", payout.internal_reference, "--json")
    assert json.loads(out) == {
        "action": "requery",
        "payout_id": payout.pk,
        "payout": payout.internal_reference,
        "amount": "1000.00",
        "from_status": "ambiguous",
        "outcome": "successful",
        "next_requery_at": None,
        "ok": True,
    }


def test_requery_id_unknown_is_a_clear_error(db) -> None:
    with pytest.raises(CommandError, match="no payout with id or internal reference '999999'"):
        run("requery_ambiguous", "--id", "999999")


def test_requery_id_names_the_status_it_cannot_requery(funded_wallet, create_payout) -> None:
    payout = create_payout().payout
    with pytest.raises(CommandError, match=r"is reserved: only a dispatched or ambiguous payout"):
        run("requery_ambiguous", "--id", str(payout.pk))


def test_progress_goes_to_the_raw_stderr_not_in_error_style(test_wallet) -> None:
    PayoutFactory(
        wallet=test_wallet,
        status=PayoutStatus.AMBIGUOUS,
        next_requery_at=timezone.now() - timedelta(minutes=1),
    )
    out, err = StringIO(), TerminalStream()
    command = RequeryCommand(stdout=out, stderr=err, force_color=True)
    call_command(command)
    assert err.getvalue() == f"\rrequery [{'#' * 30}] 1/1 payouts\n"
    assert out.getvalue().startswith("Considered 1 due payout(s): 1 still ambiguous;")


def test_beat_tasks_hand_work_to_the_workers(funded_wallet, create_payout, settings) -> None:
    settings.PAYOUT_DISPATCH_STUCK_AFTER = timedelta(0)
    create_payout()
    assert payouts_dispatch_stuck_task() == (
        "Considered 1 stuck payout(s) (1 reserved for over 0 s, 0 processing with a stale or "
        "released claim): 1 queued; 0 error(s). Waiting: no reserved payout younger than 0 s."
    )
    assert payouts_requery_due_task() == (
        "Considered 0 due payout(s); 0 error(s). "
        "Waiting: no ambiguous or dispatched payout is due later." + OVERDUE_NONE
    )


def test_beat_schedule_lists_both_sweepers(settings) -> None:
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {
        "payouts.tasks.payouts_requery_due_task",
        "payouts.tasks.payouts_dispatch_stuck_task",
    } <= tasks
