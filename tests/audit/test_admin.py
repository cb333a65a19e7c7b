"""The audit trail in the back office: read-only, filterable, exportable by who may export; role
changes made in the user admin are recorded."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import Group

from audit.models import AuditRecord
from tests.audit.factories import AuditRecordFactory, StaffUserFactory
from tests.audit.helpers import actions_offered, assert_admin_forbidden, client_for

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/audit/auditrecord/"


def test_finance_viewer_lists_filters_and_reads_records() -> None:
    viewer = StaffUserFactory(roles=["finance_viewer"])
    rotation = AuditRecordFactory(action="merchants.merchant.rotate_secret_key")
    AuditRecordFactory(action="payouts.payout.requery", object_repr="po_other")
    client = client_for(viewer)
    listing = client.get(CHANGELIST, {"action": "merchants.merchant.rotate_secret_key"})
    assert listing.status_code == 200
    assert list(listing.context["cl"].result_list) == [rotation]
    detail = client.get(f"{CHANGELIST}{rotation.pk}/change/")
    assert detail.status_code == 200
    assert "Renamed at the merchant&#x27;s request" in detail.content.decode()
    assert 'name="_save"' not in detail.content.decode()


def test_records_cannot_be_added_changed_or_deleted_even_by_a_superuser(admin_client) -> None:
    record = AuditRecordFactory()
    assert_admin_forbidden(admin_client.get(f"{CHANGELIST}add/"))
    assert_admin_forbidden(
        admin_client.post(f"{CHANGELIST}{record.pk}/change/", {"reason": "rewritten"})
    )
    assert_admin_forbidden(admin_client.post(f"{CHANGELIST}{record.pk}/delete/", {"post": "yes"}))
    assert "delete_selected" not in actions_offered(admin_client.get(CHANGELIST))
    assert AuditRecord.objects.get(pk=record.pk).reason == "Renamed at the merchant's request"


def test_export_writes_a_spreadsheet_safe_csv_and_is_audited() -> None:
    viewer = StaffUserFactory(roles=["finance_viewer"])
    record = AuditRecordFactory(object_repr="=HYPERLINK(evil)")
    response = client_for(viewer).post(
        CHANGELIST, {"action": "export_csv", "_selected_action": [record.pk]}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    row = dict(zip(rows[0], rows[1], strict=True))
    assert row["action"] == "merchants.merchant.change"
    assert row["object_repr"] == "'=HYPERLINK(evil)"
    assert row["after"] == '{"name": "Ade Stores"}'
    export = AuditRecord.objects.get(action="audit.auditrecord.export")
    assert (export.actor, export.after) == (viewer, {"count": 1})


def test_without_the_export_permission_there_is_no_action_and_posting_it_is_refused() -> None:
    security = StaffUserFactory(roles=["security_admin"])  # views the audit trail, no export
    record = AuditRecordFactory()
    client = client_for(security)
    assert actions_offered(client.get(CHANGELIST)) == set()
    before = AuditRecord.objects.count()
    response = client.post(CHANGELIST, {"action": "export_csv", "_selected_action": [record.pk]})
    assert_admin_forbidden(response)
    assert AuditRecord.objects.count() == before


def test_staff_without_any_role_cannot_open_the_audit_trail() -> None:
    response = client_for(StaffUserFactory()).get(CHANGELIST)
    assert_admin_forbidden(response)


def test_granting_a_role_in_the_user_admin_is_recorded(admin_client, admin_user) -> None:
    clerk = StaffUserFactory(username="clerk")
    approver_group = Group.objects.get(name="Finance approver")
    response = admin_client.post(
        f"/admin/auth/user/{clerk.pk}/change/",
        {
            "username": "clerk",
            "email": "clerk@example.com",
            "is_active": "on",
            "is_staff": "on",
            "groups": [approver_group.pk],
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 302
    record = AuditRecord.objects.get(action="auth.user.groups_change")
    assert record.actor == admin_user
    assert record.object_id == str(clerk.pk)
    assert record.before == {"names": []}
    assert record.after == {"names": ["Finance approver"]}
    assert not AuditRecord.objects.filter(
        action="auth.user.password_change", object_id=str(clerk.pk)
    ).exists()
