"""The merchant's payout controls (``payouts.services.controls``): approval by a second key,
scheduled payouts, cancel, and the approval expiry sweeper; through the services and the API."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from audit.models import AuditRecord
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from merchants.models import Mode
from merchants.services import MerchantCreated, merchant_create, secret_key_rotate
from payouts.models import Payout, PayoutApprovalStatus, PayoutStatus
from payouts.services import (
    PayoutCreateResult,
    payout_approval_threshold_set,
    payout_approve,
    payout_batch_create,
    payout_cancel,
    payouts_approval_expire,
    payouts_dispatch_round,
    payouts_dispatch_stuck,
)
from payouts.services.bulk import PayoutBatchItem
from tests.payouts.helpers import (
    GOOD_ACCOUNT,
    GTB_CODE,
    PAYOUTS_URL,
    assert_wallet_balanced,
    new_idempotency_key,
    reload,
)
from wallets.models import LedgerEntry, LedgerEntryType, Wallet
from webhooks.models import Event, EventType

APPROVALS_URL = "/api/v1/transactions/in/merchant-wallet/approvals"
ACTOR = "merchant test key sk_test_…"


def approve_url(payout_id: int) -> str:
    return f"{PAYOUTS_URL}/{payout_id}/approve"


def cancel_url(payout_id: int) -> str:
    return f"{PAYOUTS_URL}/{payout_id}/cancel"


@pytest.fixture
def threshold(funded_wallet: Wallet) -> Wallet:
    """The funded test wallet, with approval from NGN 5,000."""
    return payout_approval_threshold_set(
        wallet_id=funded_wallet.pk, approval_threshold=Decimal("5000.00"), actor=ACTOR
    )


@pytest.fixture
def key_id(merchant_account: MerchantCreated) -> int:
    return int(merchant_account.test_key.secret_key.pk)


@pytest.fixture
def other_key_id(merchant_account: MerchantCreated, key_id: int) -> int:
    """A second test key of the merchant (the first is revoked by the rotation)."""
    return int(secret_key_rotate(merchant=merchant_account.merchant, mode=Mode.TEST).secret_key.pk)


@pytest.fixture
def held(
    threshold: Wallet, create_payout: Callable[..., PayoutCreateResult], key_id: int
) -> Payout:
    """A payout of NGN 6,000 created with the test key: it awaits approval."""
    return create_payout(amount=Decimal("6000.00"), created_by_key_id=key_id).payout


def _control_kwargs(merchant_account: MerchantCreated, payout: Payout) -> dict[str, Any]:
    return {"merchant": merchant_account.merchant, "mode": Mode.TEST, "payout_id": payout.pk}


# --- Approval --------------------------------------------------------------------------------


def test_a_payout_at_the_threshold_is_reserved_and_not_dispatched(
    threshold: Wallet, create_payout: Callable[..., PayoutCreateResult], key_id: int
) -> None:
    at = create_payout(amount=Decimal("5000.00"), created_by_key_id=key_id).payout
    below = create_payout(amount=Decimal("4999.99"), created_by_key_id=key_id).payout

    report = payouts_dispatch_round()

    assert (at.status, at.approval_status) == (PayoutStatus.RESERVED, "pending")
    assert reload(at).status == PayoutStatus.RESERVED
    assert below.approval_status == PayoutApprovalStatus.NOT_REQUIRED
    assert report.claimed == 1
    assert reload(below).status == PayoutStatus.SUCCESSFUL
    threshold.refresh_from_db()
    assert threshold.reserved_balance == at.total_debit_amount


def test_the_service_s_own_payouts_never_wait_for_approval(
    threshold: Wallet, create_payout: Callable[..., PayoutCreateResult]
) -> None:
    payout = create_payout(amount=Decimal("6000.00")).payout
    assert payout.approval_status == PayoutApprovalStatus.NOT_REQUIRED


def test_another_key_approves_and_the_payout_is_dispatched(
    held: Payout, merchant_account: MerchantCreated, other_key_id: int
) -> None:
    approved = payout_approve(
        **_control_kwargs(merchant_account, held), key_id=other_key_id, actor=ACTOR
    )

    assert approved.approval_status == PayoutApprovalStatus.APPROVED
    assert approved.approved_at is not None
    assert approved.approved_by_key_id == other_key_id
    assert payouts_dispatch_round().claimed == 1
    assert reload(held).status == PayoutStatus.SUCCESSFUL
    record = AuditRecord.objects.get(action="payouts.payout.approve")
    assert record.object_id == str(held.pk)


def test_the_key_that_created_it_cannot_approve_it(
    held: Payout, merchant_account: MerchantCreated, key_id: int
) -> None:
    with pytest.raises(ApplicationError) as refused:
        payout_approve(**_control_kwargs(merchant_account, held), key_id=key_id, actor=ACTOR)

    assert refused.value.status == 403
    assert "another key" in refused.value.message
    assert reload(held).approval_status == PayoutApprovalStatus.PENDING
    assert not AuditRecord.objects.filter(action="payouts.payout.approve").exists()


def test_approving_a_payout_that_needs_none_is_a_conflict(
    threshold: Wallet,
    create_payout: Callable[..., PayoutCreateResult],
    merchant_account: MerchantCreated,
    other_key_id: int,
) -> None:
    payout = create_payout(amount=Decimal("10.00")).payout
    with pytest.raises(ConflictError, match="needs no approval"):
        payout_approve(**_control_kwargs(merchant_account, payout), key_id=other_key_id, actor="a")


def test_approving_twice_is_a_conflict(
    held: Payout, merchant_account: MerchantCreated, other_key_id: int
) -> None:
    kwargs = _control_kwargs(merchant_account, held)
    payout_approve(**kwargs, key_id=other_key_id, actor=ACTOR)
    with pytest.raises(ConflictError, match="already approved"):
        payout_approve(**kwargs, key_id=other_key_id, actor=ACTOR)


def test_approving_a_cancelled_payout_is_a_conflict(
    held: Payout, merchant_account: MerchantCreated, other_key_id: int
) -> None:
    kwargs = _control_kwargs(merchant_account, held)
    payout_cancel(**kwargs, actor=ACTOR)
    with pytest.raises(ConflictError, match="failed"):
        payout_approve(**kwargs, key_id=other_key_id, actor=ACTOR)


def test_another_merchant_s_payout_is_not_found(held: Payout, other_key_id: int) -> None:
    stranger = merchant_create(name="Other", email="other@example.com").merchant
    kwargs = {"merchant": stranger, "mode": Mode.TEST, "payout_id": held.pk}
    with pytest.raises(NotFoundError):
        payout_approve(**kwargs, key_id=other_key_id, actor=ACTOR)
    with pytest.raises(NotFoundError):
        payout_cancel(**kwargs, actor=ACTOR)


def test_a_threshold_must_be_greater_than_zero(funded_wallet: Wallet) -> None:
    with pytest.raises(ApplicationError, match="approval_threshold"):
        payout_approval_threshold_set(
            wallet_id=funded_wallet.pk, approval_threshold=Decimal("0"), actor=ACTOR
        )


# --- Cancel ----------------------------------------------------------------------------------


def test_a_cancel_fails_the_payout_and_releases_its_funds_once(
    held: Payout, merchant_account: MerchantCreated, threshold: Wallet
) -> None:
    kwargs = _control_kwargs(merchant_account, held)
    cancelled = payout_cancel(**kwargs, actor=ACTOR)

    assert cancelled.status == PayoutStatus.FAILED
    assert cancelled.error_message == "Cancelled by the merchant"
    assert reload(held).approval_status == PayoutApprovalStatus.CANCELLED
    threshold.refresh_from_db()
    assert (threshold.available_balance, threshold.reserved_balance) == (
        Decimal("100000.00"),
        Decimal("0.00"),
    )
    reversals = LedgerEntry.objects.filter(
        payout_id=held.pk, entry_type=LedgerEntryType.PAYOUT_REVERSAL
    )
    assert [entry.amount for entry in reversals] == [held.total_debit_amount]
    assert Event.objects.filter(payout=held, event_type=EventType.PAYOUT_FAILED).count() == 1
    assert AuditRecord.objects.filter(action="payouts.payout.cancel").count() == 1
    with pytest.raises(ConflictError, match="failed"):
        payout_cancel(**kwargs, actor=ACTOR)
    assert reversals.count() == 1
    assert_wallet_balanced(threshold)


def test_a_payout_that_was_never_held_cannot_be_cancelled(
    funded_wallet: Wallet,
    create_payout: Callable[..., PayoutCreateResult],
    merchant_account: MerchantCreated,
) -> None:
    payout = create_payout().payout
    with pytest.raises(ConflictError, match="awaiting approval or its scheduled time"):
        payout_cancel(**_control_kwargs(merchant_account, payout), actor=ACTOR)
    assert reload(payout).status == PayoutStatus.RESERVED


def test_a_dispatched_payout_cannot_be_cancelled(
    held: Payout, merchant_account: MerchantCreated, other_key_id: int
) -> None:
    kwargs = _control_kwargs(merchant_account, held)
    payout_approve(**kwargs, key_id=other_key_id, actor=ACTOR)
    payouts_dispatch_round()
    with pytest.raises(ConflictError, match="successful"):
        payout_cancel(**kwargs, actor=ACTOR)


# --- Schedule --------------------------------------------------------------------------------


def test_a_scheduled_payout_waits_for_its_time_then_dispatches(
    funded_wallet: Wallet, create_payout: Callable[..., PayoutCreateResult]
) -> None:
    payout = create_payout(scheduled_for=timezone.now() + timedelta(minutes=5)).payout

    assert payouts_dispatch_round().claimed == 0
    funded_wallet.refresh_from_db()
    assert funded_wallet.reserved_balance == payout.total_debit_amount
    Payout.objects.filter(pk=payout.pk).update(scheduled_for=timezone.now() - timedelta(seconds=1))
    assert payouts_dispatch_round().claimed == 1
    assert reload(payout).status == PayoutStatus.SUCCESSFUL


def test_an_approved_payout_still_waits_for_its_time(
    threshold: Wallet,
    create_payout: Callable[..., PayoutCreateResult],
    merchant_account: MerchantCreated,
    key_id: int,
    other_key_id: int,
) -> None:
    payout = create_payout(
        amount=Decimal("6000.00"),
        created_by_key_id=key_id,
        scheduled_for=timezone.now() + timedelta(hours=1),
    ).payout
    payout_approve(**_control_kwargs(merchant_account, payout), key_id=other_key_id, actor=ACTOR)

    assert payouts_dispatch_round().claimed == 0
    cancelled = payout_cancel(**_control_kwargs(merchant_account, payout), actor=ACTOR)
    assert cancelled.status == PayoutStatus.FAILED
    # An approval given stays what it was.
    assert reload(payout).approval_status == PayoutApprovalStatus.APPROVED


@pytest.mark.parametrize(
    ("offset", "message"),
    [
        (timedelta(seconds=-1), "scheduled_for: must be in the future"),
        (timedelta(days=30, minutes=1), "scheduled_for: must be at most 30 days ahead"),
    ],
)
def test_a_scheduled_time_outside_the_window_is_refused(
    funded_wallet: Wallet,
    create_payout: Callable[..., PayoutCreateResult],
    offset: timedelta,
    message: str,
) -> None:
    with pytest.raises(ApplicationError) as refused:
        create_payout(scheduled_for=timezone.now() + offset)
    assert (refused.value.status, refused.value.message) == (400, message)
    assert not Payout.objects.exists()


def test_the_stuck_sweeper_leaves_held_payouts_alone(
    held: Payout, create_payout: Callable[..., PayoutCreateResult]
) -> None:
    scheduled = create_payout(scheduled_for=timezone.now() + timedelta(minutes=10)).payout
    later = timezone.now() + timedelta(minutes=5)

    report = payouts_dispatch_stuck(now=later, older_than=timedelta(minutes=2))

    assert report.selected == 0
    assert reload(held).status == reload(scheduled).status == PayoutStatus.RESERVED
    # Due for longer than the stuck delay, the scheduled one counts as stuck.
    report = payouts_dispatch_stuck(
        now=later + timedelta(minutes=10), older_than=timedelta(minutes=2)
    )
    assert report.selected == 1


# --- Expiry ----------------------------------------------------------------------------------


def test_an_approval_left_pending_expires_like_a_cancel(
    held: Payout, threshold: Wallet, settings: Any
) -> None:
    settings.PAYOUT_APPROVAL_EXPIRES_AFTER = timedelta(hours=24)
    assert payouts_approval_expire(now=timezone.now() + timedelta(hours=23)).expired == 0

    report = payouts_approval_expire(now=timezone.now() + timedelta(hours=24, seconds=1))

    assert report.expired == 1
    expired = reload(held)
    assert (expired.status, expired.error_message, expired.approval_status) == (
        PayoutStatus.FAILED,
        "Approval expired",
        PayoutApprovalStatus.EXPIRED,
    )
    threshold.refresh_from_db()
    assert threshold.reserved_balance == Decimal("0.00")
    assert Event.objects.filter(payout=held, event_type=EventType.PAYOUT_FAILED).count() == 1
    assert AuditRecord.objects.filter(action="payouts.payout.approval_expire").count() == 1
    again = payouts_approval_expire(now=timezone.now() + timedelta(hours=48))
    assert (again.selected, again.expired) == (0, 0)
    assert_wallet_balanced(threshold)


# --- Bulk ------------------------------------------------------------------------------------


def test_each_bulk_item_at_the_threshold_waits_on_its_own(
    threshold: Wallet, merchant_account: MerchantCreated, key_id: int
) -> None:
    def item(amount: str) -> PayoutBatchItem:
        key = new_idempotency_key()
        return PayoutBatchItem(
            idempotency_key=key,
            arguments={
                "account_number": GOOD_ACCOUNT,
                "bank_code": GTB_CODE,
                "amount": Decimal(amount),
                "idempotency_key": key,
            },
        )

    result = payout_batch_create(
        merchant=merchant_account.merchant,
        mode=Mode.TEST,
        batch_reference="controls-bulk",
        items=[item("7000.00"), item("100.00")],
        created_by_key_id=key_id,
    )

    statuses = [outcome.payout.approval_status for outcome in result.items if outcome.payout]
    assert statuses == [PayoutApprovalStatus.PENDING, PayoutApprovalStatus.NOT_REQUIRED]
    assert payouts_dispatch_round().claimed == 1


# --- API -------------------------------------------------------------------------------------


def test_the_approval_threshold_is_set_shown_and_audited(
    test_client: APIClient, funded_wallet: Wallet
) -> None:
    answer = test_client.put(APPROVALS_URL, {"approval_threshold": "5000"}, format="json")

    assert answer.status_code == 200
    assert answer.json()["data"] == {
        "approval_threshold": "5000.00",
        "approval_expires_after_seconds": 86400,
    }
    shown = test_client.get(APPROVALS_URL).json()["data"]
    assert shown["approval_threshold"] == "5000.00"
    record = AuditRecord.objects.get(action="wallets.wallet.approval_threshold_set")
    assert record.after == {"approval_threshold": "5000.00"}
    assert record.actor_label.startswith("merchant ")


@pytest.mark.parametrize("value", ["-1", "0", "abc", 5000, "1e3"])
def test_a_bad_threshold_is_a_400_naming_the_field(
    test_client: APIClient, funded_wallet: Wallet, value: Any
) -> None:
    answer = test_client.put(APPROVALS_URL, {"approval_threshold": value}, format="json")

    assert answer.status_code == 400
    assert answer.json()["message"].startswith("approval_threshold")
    funded_wallet.refresh_from_db()
    assert funded_wallet.approval_threshold is None


def test_the_threshold_is_per_mode(
    test_client: APIClient, live_client: APIClient, funded_wallet: Wallet
) -> None:
    test_client.put(APPROVALS_URL, {"approval_threshold": "5000"}, format="json")
    assert live_client.get(APPROVALS_URL).json()["data"]["approval_threshold"] is None


def test_approve_over_the_api_needs_a_second_key(
    test_client: APIClient,
    client_for: Callable[[str], APIClient],
    merchant_account: MerchantCreated,
    threshold: Wallet,
    payload: Callable[..., dict[str, Any]],
) -> None:
    created = test_client.post(PAYOUTS_URL, payload(amount="6000"), format="json").json()
    payout = created["data"]["payout"]
    assert payout["approval"] == {"required": True, "status": "pending", "approved_at": None}
    assert payout["status"] == "reserved"

    same = test_client.post(approve_url(payout["id"]))
    assert same.status_code == 403
    assert same.json()["status"] is False
    assert "another key" in same.json()["message"]

    second = secret_key_rotate(merchant=merchant_account.merchant, mode=Mode.TEST).plaintext
    approved = client_for(second).post(approve_url(payout["id"]))
    assert approved.status_code == 200
    assert approved.json()["data"]["approval"]["status"] == "approved"
    assert client_for(second).post(approve_url(payout["id"])).status_code == 409


def test_cancel_over_the_api_and_again(
    test_client: APIClient, funded_wallet: Wallet, payload: Callable[..., dict[str, Any]]
) -> None:
    body = payload(scheduled_for=(timezone.localtime() + timedelta(hours=2)).isoformat())
    payout = test_client.post(PAYOUTS_URL, body, format="json").json()["data"]["payout"]

    cancelled = test_client.post(cancel_url(payout["id"]))
    again = test_client.post(cancel_url(payout["id"]))

    assert cancelled.status_code == 200
    assert cancelled.json()["data"]["status"] == "failed"
    assert cancelled.json()["data"]["error_message"] == "Cancelled by the merchant"
    assert again.status_code == 409
    assert again.json()["status"] is False
    funded_wallet.refresh_from_db()
    assert funded_wallet.available_balance == Decimal("100000.00")


def test_a_naive_scheduled_time_is_lagos_time(
    test_client: APIClient, funded_wallet: Wallet, payload: Callable[..., dict[str, Any]]
) -> None:
    lagos = timezone.localtime() + timedelta(days=1)
    naive = lagos.replace(tzinfo=None, microsecond=0).isoformat()

    answer = test_client.post(PAYOUTS_URL, payload(scheduled_for=naive), format="json")

    assert answer.status_code == 202
    assert answer.json()["data"]["payout"]["scheduled_for"] == f"{naive}+01:00"
    stored = Payout.objects.get().scheduled_for
    assert stored == lagos.replace(microsecond=0)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("tomorrow", "scheduled_for: must be an ISO 8601 date or date-time"),
        ("2020-01-01T09:00:00", "scheduled_for: must be in the future"),
        (17, "scheduled_for: must be an ISO 8601 date or date-time"),
    ],
)
def test_a_bad_scheduled_time_is_a_400_naming_the_field(
    test_client: APIClient,
    funded_wallet: Wallet,
    payload: Callable[..., dict[str, Any]],
    value: Any,
    message: str,
) -> None:
    answer = test_client.post(PAYOUTS_URL, payload(scheduled_for=value), format="json")

    assert answer.status_code == 400
    assert answer.json()["message"] == message
    assert not Payout.objects.exists()


def test_a_scheduled_replay_is_a_replay_and_another_time_a_conflict(
    test_client: APIClient, funded_wallet: Wallet, payload: Callable[..., dict[str, Any]]
) -> None:
    when = timezone.now() + timedelta(hours=3)
    body = payload(scheduled_for=when.isoformat())
    first = test_client.post(PAYOUTS_URL, body, format="json")
    replay = test_client.post(PAYOUTS_URL, body, format="json")
    moved = dict(body, scheduled_for=(when + timedelta(hours=1)).isoformat())

    assert first.status_code == replay.status_code == 202
    assert replay.json()["data"]["duplicate"] is True
    assert test_client.post(PAYOUTS_URL, moved, format="json").status_code == 409


def test_an_operator_cannot_force_a_held_payout_out(held: Payout) -> None:
    from payouts.services import payout_dispatch_now

    with pytest.raises(ConflictError, match="held by the merchant"):
        payout_dispatch_now(payout=held, actor="manage.py dispatch_stuck (ops)")
    assert reload(held).status == PayoutStatus.RESERVED


def test_a_bulk_item_in_the_past_is_rejected_naming_its_scheduled_time(
    test_client: APIClient, funded_wallet: Wallet, payload: Callable[..., dict[str, Any]]
) -> None:
    future = (timezone.now() + timedelta(hours=1)).isoformat()
    body = {
        "batch_reference": "scheduled-bulk",
        "items": [payload(scheduled_for=future), payload(scheduled_for="2020-01-01T09:00:00")],
    }

    answer = test_client.post(f"{PAYOUTS_URL}/bulk", body, format="json")

    items = answer.json()["data"]["items"]
    assert answer.status_code == 202
    assert items[0]["payout"]["scheduled_for"] is not None
    assert items[1]["error"] == {
        "message": "scheduled_for: must be in the future",
        "statusCode": 400,
    }


def test_approve_and_cancel_of_another_merchant_s_payout_are_404(
    held: Payout, client_for: Callable[[str], APIClient]
) -> None:
    stranger = merchant_create(name="Other", email="other@example.com")
    client = client_for(stranger.test_key.plaintext)

    assert client.post(approve_url(held.pk)).status_code == 404
    assert client.post(cancel_url(held.pk)).status_code == 404
    assert reload(held).approval_status == PayoutApprovalStatus.PENDING


def test_scopes_a_writer_cannot_approve_or_lift_the_threshold_an_approver_can(
    test_client: APIClient,
    client_for: Callable[[str], APIClient],
    merchant_account: MerchantCreated,
    threshold: Wallet,
    payload: Callable[..., dict[str, Any]],
) -> None:
    from merchants.services import restricted_key_create

    secret = merchant_account.test_key.secret_key

    def restricted(*scopes: str) -> APIClient:
        issued = restricted_key_create(calling_key=secret, name="-".join(scopes), scopes=scopes)
        return client_for(issued.plaintext)

    writer, approver = restricted("payouts:write"), restricted("payouts:approve")
    created = writer.post(PAYOUTS_URL, payload(amount="6000"), format="json").json()
    payout_id = created["data"]["payout"]["id"]

    refused = writer.post(approve_url(payout_id))
    lifted = writer.put(APPROVALS_URL, {"approval_threshold": None}, format="json")
    approved = approver.post(approve_url(payout_id))

    assert (refused.status_code, refused.json()["message"]) == (
        403,
        "This key lacks the scope payouts:approve",
    )
    assert lifted.status_code == 403
    assert approved.status_code == 200
    assert approved.json()["data"]["approval"]["status"] == "approved"
    assert Payout.objects.get(pk=payout_id).approved_by_key_id != secret.pk
