"""Final payouts emit ``payout.successful`` / ``payout.failed`` events, once, in the same
transaction as the final transition."""

from __future__ import annotations

import json

import pytest

from merchants.models import Mode
from merchants.services import webhook_settings_set
from payouts.events import payout_event_data, payout_event_emit, payout_events_emit
from payouts.models import PayoutStatus
from payouts.services import (
    payout_dispatch,
    payout_requery,
    payout_resolve_manually,
    payouts_dispatch_round,
)
from tests.payouts.helpers import reload
from webhooks.models import Event, WebhookDelivery

pytestmark = pytest.mark.django_db


def _events(payout_id: int) -> list[Event]:
    return list(Event.objects.filter(payout_id=payout_id).order_by("id"))


def test_successful_payout_emits_one_payout_successful_event(
    funded_wallet, create_payout, merchant_account
) -> None:
    webhook_settings_set(
        merchant=merchant_account.merchant, mode=Mode.TEST, url="https://m.example.com/hooks"
    )
    payout = create_payout().payout
    payout_dispatch(payout_id=payout.pk)
    events = _events(payout.pk)
    assert [event.event_type for event in events] == ["payout.successful"]
    body = json.loads(events[0].body)
    assert body["event"] == "payout.successful"
    assert body["data"]["internal_reference"] == payout.internal_reference
    assert body["data"]["idempotency_key"] == payout.idempotency_key
    assert body["data"]["status"] == "successful"
    assert body["data"]["amount"] == "1000.00"
    assert body["data"]["completed_at"] is not None


def test_failed_payout_emits_payout_failed_with_the_error(funded_wallet, create_payout) -> None:
    payout = create_payout(account_number="1000000001").payout
    payout_dispatch(payout_id=payout.pk)
    events = _events(payout.pk)
    assert [event.event_type for event in events] == ["payout.failed"]
    assert json.loads(events[0].body)["data"]["error_message"]


def test_ambiguous_payout_emits_nothing_until_the_requery_settles_it(
    funded_wallet, create_payout
) -> None:
    payout = create_payout(account_number="1000000002").payout
    payout_dispatch(payout_id=payout.pk)
    assert reload(payout).status == PayoutStatus.AMBIGUOUS
    assert _events(payout.pk) == []
    payout_requery(payout=reload(payout))
    assert [event.event_type for event in _events(payout.pk)] == ["payout.successful"]


def test_manual_resolution_emits_the_event(funded_wallet, create_payout) -> None:
    from django.contrib.auth import get_user_model

    finance = get_user_model().objects.create_user("finance-clerk", password="pw-123456789")
    payout = create_payout(account_number="1000000003").payout
    payout_dispatch(payout_id=payout.pk)
    payout_resolve_manually(
        payout_id=payout.pk,
        to_status=PayoutStatus.FAILED,
        reason="Bank confirmed the transfer never arrived",
        resolved_by=finance,
    )
    assert [event.event_type for event in _events(payout.pk)] == ["payout.failed"]


def test_a_batch_records_its_events_together_with_what_single_dispatches_record(
    funded_wallet, create_payout, merchant_account, django_capture_on_commit_callbacks
) -> None:
    webhook_settings_set(
        merchant=merchant_account.merchant, mode=Mode.TEST, url="https://m.example.com/hooks"
    )
    succeeded = create_payout().payout
    failed = create_payout(account_number="1000000001").payout
    ambiguous = create_payout(account_number="1000000002").payout

    with django_capture_on_commit_callbacks() as callbacks:
        payouts_dispatch_round()

    bodies = {event.payout_id: json.loads(event.body) for event in Event.objects.all()}
    assert sorted(bodies) == sorted([succeeded.pk, failed.pk])
    assert bodies[succeeded.pk]["event"] == "payout.successful"
    assert bodies[succeeded.pk]["data"] == payout_event_data(payout=reload(succeeded))
    assert bodies[failed.pk]["event"] == "payout.failed"
    assert bodies[failed.pk]["data"] == payout_event_data(payout=reload(failed))
    assert _events(ambiguous.pk) == []
    deliveries = WebhookDelivery.objects.order_by("event__payout_id")
    assert [(d.event.payout_id, d.url) for d in deliveries] == [
        (succeeded.pk, "https://m.example.com/hooks"),
        (failed.pk, "https://m.example.com/hooks"),
    ]
    assert len(callbacks) == 1  # one enqueue for both deliveries


def test_a_batch_payout_whose_event_exists_keeps_it_and_the_rest_are_recorded(
    funded_wallet, create_payout
) -> None:
    first, second = create_payout().payout, create_payout().payout
    first.status = PayoutStatus.SUCCESSFUL
    payout_event_emit(payout=first)  # recorded before, as if by another path

    second.status = PayoutStatus.SUCCESSFUL
    payout_events_emit(payouts=[first, second])

    assert [event.event_type for event in _events(first.pk)] == ["payout.successful"]
    assert [event.event_type for event in _events(second.pk)] == ["payout.successful"]
