"""``audit_record``: who, what, which object, before and after, why, from where; never a secret."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from audit.models import AuditRecord
from audit.services import REDACTED, audit_record
from merchants.keys import secret_key_generate, webhook_secret_generate
from tests.audit.factories import StaffUserFactory
from tests.merchants.factories import MerchantFactory

pytestmark = pytest.mark.django_db


def test_records_actor_object_change_reason_and_address() -> None:
    user = StaffUserFactory(username="amaka")
    merchant = MerchantFactory(name="Ade Stores")
    request = RequestFactory().post("/admin/", REMOTE_ADDR="203.0.113.9")
    record = audit_record(
        actor=user,
        action="merchants.merchant.change",
        obj=merchant,
        before={"name": "Ade"},
        after={"name": "Ade Stores"},
        reason="  Renamed at the merchant's request  ",
        request=request,
    )
    record = AuditRecord.objects.get(pk=record.pk)
    assert (record.actor, record.actor_label) == (user, "amaka")
    assert (record.object_type, record.object_id) == ("merchants.merchant", str(merchant.pk))
    assert record.object_repr == f"Ade Stores (#{merchant.pk})"
    assert (record.before, record.after) == ({"name": "Ade"}, {"name": "Ade Stores"})
    assert record.reason == "Renamed at the merchant's request"
    assert record.ip_address == "203.0.113.9"
    assert record.created_at is not None


def test_a_command_line_actor_and_a_model_wide_act() -> None:
    record = audit_record(
        actor="manage.py staff_role (root)",
        action="payouts.payout.export",
        obj=MerchantFactory._meta.model,
        after={"count": 3},
    )
    assert record.actor is None
    assert record.actor_label == "manage.py staff_role (root)"
    assert (record.object_type, record.object_id) == ("merchants.merchant", "")
    assert record.ip_address is None


def test_related_objects_money_and_dates_are_stored_as_json() -> None:
    merchant = MerchantFactory(name="Ade Stores")
    record = audit_record(
        actor=None,
        action="test",
        obj=merchant,
        after={"merchant": merchant, "when": merchant.created_at, "ids": (1, 2)},
    )
    record.refresh_from_db()
    assert record.after["merchant"] == {"id": merchant.pk, "repr": f"Ade Stores (#{merchant.pk})"}
    assert record.after["when"] == merchant.created_at.isoformat()
    assert record.after["ids"] == [1, 2]


def test_secrets_are_never_stored() -> None:
    live_key = secret_key_generate(mode="live")
    webhook_secret = webhook_secret_generate()
    record = audit_record(
        actor=None,
        action="test",
        obj=MerchantFactory(),
        before={"secret": webhook_secret, "key_hash": "ab" * 32, "password1": "hunter2hunter2"},
        after={
            "secret": "rotated",
            "note": f"old key {live_key} and secret {webhook_secret}",
            "nested": {"api_key": live_key},
        },
        reason=f"pasted {live_key} by mistake",
    )
    record.refresh_from_db()
    stored = f"{record.before} {record.after} {record.reason}"
    assert live_key not in stored
    assert webhook_secret not in stored
    assert record.before == {"secret": REDACTED, "key_hash": REDACTED, "password1": REDACTED}
    assert record.after["secret"] == "rotated"
    assert record.after["nested"] == {"api_key": REDACTED}
    assert live_key[:12] in record.after["note"]  # the visible prefix is kept
    assert live_key[:12] in record.reason


def test_a_standard_base64_webhook_secret_in_text_keeps_only_its_prefix() -> None:
    secret = "whsec_ab+/cdEFgh+ijKLmn/opQRst+uvWXyz0123456789AB="
    record = audit_record(actor=None, action="test", obj=None, reason=f"pasted {secret}")
    record.refresh_from_db()
    assert record.reason == "pasted whsec_ab+/…[redacted]"
