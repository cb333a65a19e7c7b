"""Live-mode lifecycle through the Paystack adapter (HTTP mocked with ``responses``): a timeout
or 5xx after sending makes the payout ambiguous (never failed), a later requery settles it, and
Paystack sees exactly one transfer."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal

import pytest
import requests
import responses
from django.utils import timezone

from merchants.models import Mode
from payouts.exceptions import DispatchDeferredError
from payouts.models import Payout, PayoutStatus
from payouts.services import (
    payout_dispatch,
    payout_requery,
)
from payouts.tasks import payout_dispatch_task
from tests.payouts.conftest import PAYSTACK_BASE
from tests.payouts.helpers import assert_wallet_balanced, dispatch_claim, reload
from wallets.models import LedgerEntry, LedgerEntryType

pytestmark = pytest.mark.django_db

RECIPIENT = {"status": True, "message": "ok", "data": {"recipient_code": "RCP_live_1"}}


def transfer(status: str, reference: str) -> dict:
    return {
        "status": True,
        "message": "Transfer has been queued",
        "data": {"reference": reference, "status": status, "transfer_code": "TRF_live_1"},
    }


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def live_payout(live_mode, create_payout) -> Payout:
    payout = create_payout(mode=Mode.LIVE, amount=Decimal("2000.00")).payout
    assert payout.provider_name == "paystack"
    return payout


def transfer_posts(rsps: responses.RequestsMock) -> int:
    return sum(1 for call in rsps.calls if call.request.url == f"{PAYSTACK_BASE}/transfer")


def test_success(rsps, live_mode, live_payout) -> None:
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(f"{PAYSTACK_BASE}/transfer", json=transfer("success", live_payout.internal_reference))
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.provider_reference == "TRF_live_1"
    assert [r["operation"] for r in payout.provider_responses] == [
        "paystack.create_recipient",
        "paystack.initiate_transfer",
    ]
    assert_wallet_balanced(live_mode)


def test_pending_stays_dispatched_until_requery(rsps, live_mode, live_payout) -> None:
    reference = live_payout.internal_reference
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(f"{PAYSTACK_BASE}/transfer", json=transfer("pending", reference))
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.DISPATCHED
    assert payout.dispatched_at is not None
    assert payout.next_requery_at is not None
    rsps.get(f"{PAYSTACK_BASE}/transfer/verify/{reference}", json=transfer("success", reference))
    assert payout_requery(payout=reload(payout)).status == PayoutStatus.SUCCESSFUL
    assert_wallet_balanced(live_mode)


def test_still_pending_on_requery_becomes_ambiguous(rsps, live_mode, live_payout) -> None:
    reference = live_payout.internal_reference
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(f"{PAYSTACK_BASE}/transfer", json=transfer("pending", reference))
    payout_dispatch(payout_id=live_payout.pk)
    rsps.get(f"{PAYSTACK_BASE}/transfer/verify/{reference}", json=transfer("pending", reference))
    payout = payout_requery(payout=reload(live_payout))
    assert payout.status == PayoutStatus.AMBIGUOUS
    assert payout.ambiguous_since is not None


@pytest.mark.parametrize(
    "failure",
    [
        {"body": requests.ReadTimeout("read timed out")},
        {"json": {"status": False, "message": "Internal error"}, "status": 500},
        {"body": "<html>504 Gateway Time-out</html>", "status": 504},
    ],
)
def test_timeout_or_5xx_is_ambiguous_then_requery_settles_once(
    rsps, live_mode, live_payout, failure: dict
) -> None:
    reference = live_payout.internal_reference
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(f"{PAYSTACK_BASE}/transfer", **failure)
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.AMBIGUOUS
    live_mode.refresh_from_db()
    assert live_mode.reserved_balance == payout.total_debit_amount
    rsps.get(f"{PAYSTACK_BASE}/transfer/verify/{reference}", json=transfer("success", reference))
    settled = payout_requery(payout=reload(payout))
    assert settled.status == PayoutStatus.SUCCESSFUL
    assert transfer_posts(rsps) == 1
    assert (
        LedgerEntry.objects.filter(
            payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
        ).count()
        == 1
    )
    assert_wallet_balanced(live_mode)


def test_requery_reversed_fails_and_releases(rsps, live_mode, live_payout) -> None:
    reference = live_payout.internal_reference
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(f"{PAYSTACK_BASE}/transfer", status=502)
    payout_dispatch(payout_id=live_payout.pk)
    rsps.get(f"{PAYSTACK_BASE}/transfer/verify/{reference}", json=transfer("reversed", reference))
    payout = payout_requery(payout=reload(live_payout))
    assert payout.status == PayoutStatus.FAILED
    live_mode.refresh_from_db()
    assert live_mode.available_balance == Decimal("50000.00")
    assert live_mode.reserved_balance == Decimal("0.00")
    assert_wallet_balanced(live_mode)


def test_requery_not_found_stays_ambiguous(rsps, live_mode, live_payout) -> None:
    reference = live_payout.internal_reference
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(f"{PAYSTACK_BASE}/transfer", body=requests.ReadTimeout())
    payout_dispatch(payout_id=live_payout.pk)
    rsps.get(
        f"{PAYSTACK_BASE}/transfer/verify/{reference}",
        json={"status": False, "message": "Transfer not found"},
        status=404,
    )
    assert payout_requery(payout=reload(live_payout)).status == PayoutStatus.AMBIGUOUS


def test_rejected_before_transfer_fails_and_releases(rsps, live_mode, live_payout) -> None:
    rsps.post(
        f"{PAYSTACK_BASE}/transferrecipient",
        json={"status": False, "message": "Account number is invalid"},
        status=400,
    )
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.FAILED
    assert payout.error_message == "Account number is invalid"
    assert transfer_posts(rsps) == 0
    assert_wallet_balanced(live_mode)


def test_unreachable_provider_defers_without_moving_money(rsps, live_mode, live_payout) -> None:
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(f"{PAYSTACK_BASE}/transfer", body=requests.ConnectTimeout())
    with pytest.raises(DispatchDeferredError):
        payout_dispatch(payout_id=live_payout.pk)
    payout = reload(live_payout)
    assert payout.status == PayoutStatus.PROCESSING
    assert payout.dispatch_claimed_at is None
    live_mode.refresh_from_db()
    assert live_mode.reserved_balance == payout.total_debit_amount


def test_deferred_dispatch_is_retried_without_verifying(rsps, live_mode, live_payout) -> None:
    """Nothing reached Paystack the first time, so the retry sends straight away."""
    reference = live_payout.internal_reference
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(f"{PAYSTACK_BASE}/transfer", body=requests.ConnectTimeout())
    with pytest.raises(DispatchDeferredError):
        payout_dispatch(payout_id=live_payout.pk)
    rsps.replace(responses.POST, f"{PAYSTACK_BASE}/transfer", json=transfer("success", reference))
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.dispatch_attempts == 2
    assert not [c for c in rsps.calls if "/transfer/verify/" in c.request.url]
    assert_wallet_balanced(live_mode)


def test_crashed_attempt_is_verified_before_anything_is_resent(
    rsps, live_mode, live_payout
) -> None:
    """The worker died holding the claim: its transfer may exist. While Paystack cannot be
    asked, nothing is sent; once it says it has no such transfer, it is sent once."""
    reference = live_payout.internal_reference
    dispatch_claim(payout_id=live_payout.pk)
    Payout.objects.filter(pk=live_payout.pk).update(
        dispatch_claimed_at=timezone.now() - timedelta(minutes=10)
    )
    rsps.get(f"{PAYSTACK_BASE}/transfer/verify/{reference}", status=503)
    with pytest.raises(DispatchDeferredError):
        payout_dispatch(payout_id=live_payout.pk)
    assert transfer_posts(rsps) == 0
    assert reload(live_payout).verify_before_send is True

    rsps.replace(
        responses.GET,
        f"{PAYSTACK_BASE}/transfer/verify/{reference}",
        json={"status": False, "message": "Transfer not found"},
        status=404,
    )
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", json=RECIPIENT, status=201)
    rsps.post(f"{PAYSTACK_BASE}/transfer", json=transfer("success", reference))
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert payout.verify_before_send is False
    assert transfer_posts(rsps) == 1
    assert_wallet_balanced(live_mode)


def test_crashed_attempt_that_got_through_is_not_resent(rsps, live_mode, live_payout) -> None:
    reference = live_payout.internal_reference
    dispatch_claim(payout_id=live_payout.pk)
    Payout.objects.filter(pk=live_payout.pk).update(
        dispatch_claimed_at=timezone.now() - timedelta(minutes=10)
    )
    rsps.get(f"{PAYSTACK_BASE}/transfer/verify/{reference}", json=transfer("success", reference))
    payout = payout_dispatch(payout_id=live_payout.pk)
    assert payout.status == PayoutStatus.SUCCESSFUL
    assert transfer_posts(rsps) == 0
    assert_wallet_balanced(live_mode)


def test_task_retries_then_gives_up_leaving_funds_reserved(rsps, live_mode, live_payout) -> None:
    """Task body in eager mode: each retry tries again; after the last one the payout stays
    ``processing`` (released claim) for the dispatch_stuck sweeper, with funds reserved."""
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", status=503)
    result = payout_dispatch_task.apply(args=[live_payout.pk])
    assert result.state == "FAILURE"
    assert isinstance(result.result, DispatchDeferredError)
    recipient_calls = [c for c in rsps.calls if c.request.url.endswith("/transferrecipient")]
    assert len(recipient_calls) == payout_dispatch_task.max_retries + 1
    payout = reload(live_payout)
    assert payout.status == PayoutStatus.PROCESSING
    assert payout.dispatch_claimed_at is None
    assert_wallet_balanced(live_mode)


def test_task_without_retry_leaves_it_to_the_sweeper(rsps, live_mode, live_payout) -> None:
    rsps.post(f"{PAYSTACK_BASE}/transferrecipient", status=503)
    result = payout_dispatch_task.apply(args=[live_payout.pk], kwargs={"allow_retry": False})
    assert result.state == "SUCCESS"
    assert result.result is None
    assert len(rsps.calls) == 1
