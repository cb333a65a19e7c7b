"""``distinct_people_check``: the proposer and the approver are two people, judged from the
staff-account records of the audit trail, not only from their user ids."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.actors import acting_as
from audit.two_person import SAME_USER_MESSAGE, distinct_people_check, distinct_people_problem
from core.exceptions import ApplicationError
from tests.audit.factories import StaffUserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def proposer():
    return StaffUserFactory(username="proposer", roles=["finance_operator"])


@pytest.fixture
def approver():
    return StaffUserFactory(username="approver", roles=["finance_approver"])


def set_password(user, *, by) -> None:  # type: ignore[no-untyped-def]
    with acting_as(by):
        user.set_password("a-new-passphrase-for-them")
        user.save()


def later(hours: float):  # type: ignore[no-untyped-def]
    return timezone.now() + timedelta(hours=hours)


def test_two_different_users_with_their_own_credentials_pass(proposer, approver) -> None:
    set_password(approver, by=approver)
    set_password(proposer, by=proposer)
    distinct_people_check(proposer=proposer, approver=approver)


def test_the_same_user_is_refused(proposer) -> None:
    with pytest.raises(ApplicationError, match=SAME_USER_MESSAGE) as refused:
        distinct_people_check(proposer=proposer, approver=proposer)
    assert refused.value.status == 403


def test_an_approver_whose_password_the_proposer_set_is_refused_for_good(
    proposer, approver
) -> None:
    set_password(approver, by=proposer)
    set_password(approver, by=approver)  # changing it back does not undo who could sign in
    problem = distinct_people_problem(proposer=proposer, approver=approver, now=later(24 * 90))
    assert problem is not None
    assert problem.startswith("The approver's password was changed by the proposer (proposer, ")


def test_an_approver_whose_device_the_proposer_added_is_refused(proposer, approver) -> None:
    with acting_as(proposer):
        TOTPDevice.objects.create(user=approver, name="chosen", confirmed=True)
    with pytest.raises(ApplicationError, match="approver's TOTP devices were changed by the"):
        distinct_people_check(proposer=proposer, approver=approver, now=later(24 * 90))


def test_a_proposer_whose_password_the_approver_set_is_refused(proposer, approver) -> None:
    set_password(proposer, by=approver)
    with pytest.raises(ApplicationError, match="proposer's password was changed by the approver"):
        distinct_people_check(proposer=proposer, approver=approver, now=later(24 * 90))


def test_an_approver_reset_by_someone_else_is_held(proposer, approver) -> None:
    security = StaffUserFactory(username="security", roles=["security_admin"])
    with acting_as(security):
        TOTPDevice.objects.create(user=approver, name="new phone", confirmed=True)

    problem = distinct_people_problem(proposer=proposer, approver=approver, now=later(23))
    assert problem is not None
    assert "reset by security at" in problem
    assert "held for 24 hours" in problem
    assert distinct_people_problem(proposer=proposer, approver=approver, now=later(25)) is None


def test_a_command_line_reset_holds_the_approver_too(proposer, approver) -> None:
    set_password(approver, by="manage.py changepassword (root)")
    problem = distinct_people_problem(proposer=proposer, approver=approver)
    assert problem is not None
    assert "reset by manage.py changepassword (root)" in problem


def test_the_hold_is_a_setting(settings, proposer, approver) -> None:
    settings.STAFF_CREDENTIAL_RESET_HOLD_HOURS = 2
    set_password(approver, by="system")
    assert distinct_people_problem(proposer=proposer, approver=approver, now=later(1))
    assert distinct_people_problem(proposer=proposer, approver=approver, now=later(3)) is None


def test_the_proposers_own_reset_by_a_third_person_does_not_hold_the_approval(
    proposer, approver
) -> None:
    set_password(proposer, by="system")
    assert distinct_people_problem(proposer=proposer, approver=approver) is None
