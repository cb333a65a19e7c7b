"""The two-person rule: a proposal and its approval come from two different people.

Comparing the two accounts is not enough: whoever can set an account's password or TOTP
devices can sign in as it. ``distinct_people_check`` is the one check every two-person
approval runs (payout resolutions, bulk payouts); it reads the staff-account records of the
audit trail (``audit.signals``) and refuses when:

* the approver is the proposer;
* either account's password or TOTP devices were ever set by the other one (the proposer
  could have approved as the approver, or proposed as the proposer);
* the approver's password or TOTP devices were set by anyone but the approver within
  ``STAFF_CREDENTIAL_RESET_HOLD_HOURS`` (default 24) before the approval: a reset account
  approves nothing until its owner has had it for that long.

A refusal is an ``ApplicationError`` with status 403 and says which rule, when and by whom.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import timezone

from audit.models import AuditRecord
from audit.signals import CREDENTIAL_ACTIONS
from core.dates import local_text
from core.exceptions import ApplicationError

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

SAME_USER_MESSAGE = "The approver must be a different user than the proposer"
DEFAULT_HOLD_HOURS = 24


def credential_reset_hold() -> timedelta:
    return timedelta(
        hours=int(getattr(settings, "STAFF_CREDENTIAL_RESET_HOLD_HOURS", DEFAULT_HOLD_HOURS))
    )


def _what(record: AuditRecord) -> str:
    return "password was" if record.action.endswith("password_change") else "TOTP devices were"


def distinct_people_problem(
    *, proposer: AbstractBaseUser, approver: AbstractBaseUser, now: datetime | None = None
) -> str | None:
    """Why ``approver`` may not decide ``proposer``'s proposal, or ``None`` if they may."""
    if proposer.pk == approver.pk:
        return SAME_USER_MESSAGE
    now = now or timezone.now()
    hold = credential_reset_hold()
    records = AuditRecord.objects.filter(
        object_type=approver._meta.label_lower,
        object_id__in=[str(proposer.pk), str(approver.pk)],
        action__in=CREDENTIAL_ACTIONS,
    ).order_by("-created_at", "-id")
    for record in records:
        target_is_approver = record.object_id == str(approver.pk)
        other = proposer if target_is_approver else approver
        if record.actor_id == other.pk:
            whose, by = (
                ("approver's", "proposer") if target_is_approver else ("proposer's", "approver")
            )
            return (
                f"The {whose} {_what(record)} changed by the {by} "
                f"({record.actor_label}, {local_text(record.created_at)}): they may have "
                "signed in as each other, so a different approver must decide"
            )
    for record in records:
        if (
            record.object_id == str(approver.pk)
            and record.actor_id != approver.pk
            and record.created_at > now - hold
        ):
            return (
                f"The approver's {_what(record)} reset by {record.actor_label} at "
                f"{local_text(record.created_at)}: this account may approve again from "
                f"{local_text(record.created_at + hold)} (a reset account is held for "
                f"{int(hold.total_seconds() // 3600)} hours), or a different approver decides"
            )
    return None


def distinct_people_check(
    *, proposer: AbstractBaseUser, approver: AbstractBaseUser, now: datetime | None = None
) -> None:
    """Raises ``ApplicationError`` (403) unless two different people propose and approve."""
    problem = distinct_people_problem(proposer=proposer, approver=approver, now=now)
    if problem is not None:
        raise ApplicationError(problem, status=403)
