"""Two-person rules compare people, not sessions: a superuser who resets an approver's password
and adds a TOTP device it chose can sign in as the approver, but cannot approve its own
proposal (a manual resolution or a bulk payout) that way; the trail shows both acts with the
superuser as actor. An approver reset by anyone else is held for a while."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.actors import acting_as
from audit.models import AuditRecord
from core.exceptions import ApplicationError
from merchants.models import Mode
from payouts.models import Payout, PayoutBatch, PayoutBatchProposal, PayoutStatus
from payouts.services import payout_dispatch, payout_resolution_approve, payout_resolution_propose
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import assert_admin_forbidden, client_for
from tests.payouts.helpers import reload

pytestmark = pytest.mark.django_db

ALWAYS_AMBIGUOUS_ACCOUNT = "1000000003"
CHOSEN_KEY = "3132333435363738393031323334353637383930"
CHOSEN_PASSWORD = "the-superuser-knows-this-one"  # noqa: S105 - a test password
REASON = "Ops chat with Paystack: NIP shows reversal by GTB, ticket 5512"


@pytest.fixture
def superuser() -> User:
    return User.objects.create_superuser("root", "root@example.com", "root-passphrase-1234")


@pytest.fixture
def approver() -> User:
    user = StaffUserFactory(username="approver", roles=["finance_approver"])
    with acting_as(user):
        user.set_password("approvers-own-passphrase")
        user.save()
    return user


@pytest.fixture
def ambiguous_payout(funded_wallet, create_payout) -> Payout:
    payout = create_payout(account_number=ALWAYS_AMBIGUOUS_ACCOUNT).payout
    payout_dispatch(payout_id=payout.pk)
    assert reload(payout).status == PayoutStatus.AMBIGUOUS
    return reload(payout)


def take_over(root: Client, approver: User, settings: Any) -> Client:
    """The superuser resets the approver's password, adds a device with a key it chose, and
    signs in as the approver with both (second factor required)."""
    reset = root.post(
        f"/admin/auth/user/{approver.pk}/password/",
        {"password1": CHOSEN_PASSWORD, "password2": CHOSEN_PASSWORD, "usable_password": "true"},
    )
    assert reset.status_code == 302
    added = root.post(
        "/admin/otp_totp/totpdevice/add/",
        {
            "user": approver.pk,
            "name": "definitely mine",
            "confirmed": "on",
            "key": CHOSEN_KEY,
            "step": 30,
            "t0": 0,
            "digits": 6,
            "tolerance": 1,
            "drift": 0,
            "throttling_failure_count": 0,
        },
    )
    assert added.status_code == 302
    device = TOTPDevice.objects.get(user=approver, name="definitely mine")
    settings.OTP_REQUIRED = True
    as_approver = Client()
    signed_in = as_approver.post(
        "/admin/login/?next=/admin/",
        {
            "username": approver.username,
            "password": CHOSEN_PASSWORD,
            "otp_device": device.persistent_id,
            "otp_token": f"{totp(device.bin_key, device.step, device.t0, device.digits):06d}",
            "next": "/admin/",
        },
    )
    assert signed_in.status_code == 302  # the takeover works: the session is the approver's
    assert as_approver.get("/admin/").status_code == 200
    return as_approver


def assert_trail_shows_the_superuser(approver: User, superuser: User) -> None:
    acts = AuditRecord.objects.filter(
        object_type="auth.user", object_id=str(approver.pk), actor=superuser
    )
    assert set(acts.values_list("action", "actor_label")) == {
        ("auth.user.password_change", "root"),
        ("auth.user.totp_device_add", "root"),
    }


def test_a_superuser_who_took_over_the_approver_cannot_approve_its_own_resolution(
    settings, superuser, approver, ambiguous_payout
) -> None:
    root = client_for(superuser)
    proposed = root.post(
        f"/admin/payouts/payout/{ambiguous_payout.pk}/propose-resolution/",
        {"proposed_status": "failed", "reason": REASON, "checked": "on"},
    )
    assert proposed.status_code == 302
    proposal = ambiguous_payout.resolution_proposals.get()
    as_approver = take_over(root, approver, settings)

    response = as_approver.post(
        f"/admin/payouts/payout/resolution-proposals/{proposal.pk}/review/",
        {"_approve": "1", "note": ""},
    )

    assert_admin_forbidden(response)
    assert "were changed by the proposer (root, " in response.content.decode()
    assert reload(ambiguous_payout).status == PayoutStatus.AMBIGUOUS
    proposal.refresh_from_db()
    assert proposal.is_open
    assert not AuditRecord.objects.filter(action="payouts.payout.resolution_approve").exists()
    assert_trail_shows_the_superuser(approver, superuser)


def test_a_superuser_who_took_over_the_approver_cannot_approve_its_own_bulk_payout(
    settings, superuser, approver, merchant_account, funded_wallet
) -> None:
    root = client_for(superuser)
    preview = root.post(
        "/admin/payouts/payout/bulk-upload/",
        {
            "merchant": merchant_account.merchant.pk,
            "mode": Mode.TEST,
            "payouts_file": SimpleUploadedFile(
                "pay-me.csv",
                b"account_number,bank_code,amount,narration,idempotency_key\n"
                b"0123456789,058,90000,Consulting,me-1\n",
            ),
            "_preview": "1",
        },
    )
    root.post(
        "/admin/payouts/payout/bulk-upload/", {"_propose": "1", "token": preview.context["token"]}
    )
    proposal = PayoutBatchProposal.objects.get()
    as_approver = take_over(root, approver, settings)

    page = as_approver.get(f"/admin/payouts/payoutbatchproposal/{proposal.pk}/review/")
    assert "were changed by the proposer (root, " in page.content.decode()
    assert 'name="_approve"' not in page.content.decode()
    response = as_approver.post(
        f"/admin/payouts/payoutbatchproposal/{proposal.pk}/review/", {"_approve": "1"}
    )

    assert_admin_forbidden(response)
    assert not PayoutBatch.objects.exists()
    assert not Payout.objects.exists()
    assert PayoutBatchProposal.objects.get().is_open
    assert_trail_shows_the_superuser(approver, superuser)


def test_an_approver_reset_by_a_security_admin_is_held_before_approving(
    ambiguous_payout, approver
) -> None:
    operator = StaffUserFactory(roles=["finance_operator"])
    security = StaffUserFactory(roles=["security_admin"])
    proposal = payout_resolution_propose(
        payout_id=ambiguous_payout.pk,
        proposed_status=PayoutStatus.FAILED,
        reason=REASON,
        proposed_by=operator,
    )
    reset = client_for(security).post(
        f"/admin/auth/user/{approver.pk}/password/",
        {"password1": CHOSEN_PASSWORD, "password2": CHOSEN_PASSWORD, "usable_password": "true"},
    )
    assert reset.status_code == 302

    with pytest.raises(ApplicationError, match="reset by .* held for 24 hours") as refused:
        payout_resolution_approve(proposal_id=proposal.pk, approver=approver)

    assert refused.value.status == 403
    assert reload(ambiguous_payout).status == PayoutStatus.AMBIGUOUS


def test_an_untouched_approver_still_approves(ambiguous_payout, approver) -> None:
    operator = StaffUserFactory(roles=["finance_operator"])
    proposal = payout_resolution_propose(
        payout_id=ambiguous_payout.pk,
        proposed_status=PayoutStatus.FAILED,
        reason=REASON,
        proposed_by=operator,
    )
    payout_resolution_approve(proposal_id=proposal.pk, approver=approver)
    assert reload(ambiguous_payout).status == PayoutStatus.FAILED
