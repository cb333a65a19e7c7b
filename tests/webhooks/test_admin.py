"""Events back office: everyone with the view permission reads the log; only a user with
``webhooks.resend_event`` (ops) resends, and each resend is audited."""

from __future__ import annotations

import pytest

from collections_app.models import PaymentStatus
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import act_records, actions_offered, assert_admin_forbidden, client_for
from tests.collections_app.factories import CollectionTransactionFactory
from webhooks.models import Event, WebhookDelivery

pytestmark = pytest.mark.django_db

EVENTS = "/admin/webhooks/event/"
DELIVERIES = "/admin/webhooks/webhookdelivery/"


def _paid_event() -> Event:
    from collections_app.services import transaction_confirm

    txn = CollectionTransactionFactory()
    transaction_confirm(collection=txn, outcome=PaymentStatus.PAID)
    return Event.objects.get(transaction=txn)


@pytest.mark.parametrize("role", ["finance_viewer", "finance_approver", "security_admin"])
def test_staff_without_the_resend_permission_cannot_resend(role) -> None:
    event = _paid_event()
    delivery = WebhookDelivery.objects.get(event=event)
    client = client_for(StaffUserFactory(roles=[role]))
    if role == "security_admin":  # no view permission on events at all
        assert_admin_forbidden(client.get(EVENTS))
    else:
        listing = client.get(EVENTS)
        assert listing.status_code == 200
        assert event.event_id in listing.content.decode()
        assert actions_offered(listing) == set()
        assert actions_offered(client.get(DELIVERIES)) == set()
    assert_admin_forbidden(
        client.post(EVENTS, {"action": "resend", "_selected_action": [event.pk]})
    )
    assert_admin_forbidden(
        client.post(DELIVERIES, {"action": "resend", "_selected_action": [delivery.pk]})
    )
    assert not WebhookDelivery.objects.filter(resend_of__isnull=False).exists()
    assert not act_records().exists()


def test_ops_resends_an_event_and_it_is_audited() -> None:
    event = _paid_event()
    ops = StaffUserFactory(roles=["ops"])
    client = client_for(ops)
    assert actions_offered(client.get(EVENTS)) == {"resend"}
    response = client.post(EVENTS, {"action": "resend", "_selected_action": [event.pk]})
    assert response.status_code == 302
    resent = WebhookDelivery.objects.get(resend_of__isnull=False)
    assert resent.event_id == event.pk
    record = act_records().get()
    assert (record.actor, record.action, record.object_id) == (
        ops,
        "webhooks.event.resend",
        str(event.pk),
    )
    assert record.after == {"deliveries": [[resent.pk, resent.url]]}


def test_ops_resends_a_delivery_and_it_is_audited() -> None:
    delivery = WebhookDelivery.objects.get(event=_paid_event())
    ops = StaffUserFactory(roles=["ops"])
    response = client_for(ops).post(
        DELIVERIES, {"action": "resend", "_selected_action": [delivery.pk]}
    )
    assert response.status_code == 302
    resent = WebhookDelivery.objects.get(resend_of=delivery)
    record = act_records().get()
    assert record.action == "webhooks.webhookdelivery.resend"
    assert record.after == {"delivery": resent.pk, "event_id": delivery.event.event_id}


def test_the_event_log_stays_read_only_for_ops() -> None:
    event = _paid_event()
    client = client_for(StaffUserFactory(roles=["ops"]))
    assert_admin_forbidden(client.post(f"{EVENTS}{event.pk}/change/", {"reference": "x"}))
    assert_admin_forbidden(client.post(f"{EVENTS}{event.pk}/delete/", {"post": "yes"}))
    assert Event.objects.filter(pk=event.pk, reference=event.reference).exists()
