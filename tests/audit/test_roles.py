"""The staff roles: the migration creates one group per role with exactly its permissions, and
``manage.py staff_role`` grants, revokes, lists and re-syncs them, each grant audited."""

from __future__ import annotations

import importlib
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission, User
from django.core.management import CommandError, call_command

from audit.models import AuditRecord
from audit.roles import ROLES, role_get
from audit.services import staff_roles_sync
from tests.audit.factories import StaffUserFactory, permission_get
from tests.audit.helpers import act_records

pytestmark = pytest.mark.django_db

ROLES_MIGRATION = importlib.import_module("audit.migrations.0010_staff_roles_payout_routing")


def _group_permissions(group: Group) -> set[str]:
    return {
        f"{app_label}.{codename}"
        for app_label, codename in group.permissions.values_list(
            "content_type__app_label", "codename"
        )
    }


def test_the_migration_created_every_role_with_exactly_its_permissions() -> None:
    for role in ROLES:
        group = Group.objects.get(name=role.group_name)
        assert _group_permissions(group) == set(role.permissions), role.key


def test_the_migration_copy_matches_the_current_roles() -> None:
    assert {name: set(permissions) for name, permissions in ROLES_MIGRATION.ROLES.items()} == {
        role.group_name: set(role.permissions) for role in ROLES
    }


@pytest.mark.parametrize(
    ("role_key", "granted", "withheld"),
    [
        (
            "finance_viewer",
            {"payouts.view_payout", "wallets.view_ledgerentry", "payouts.export_payouts"},
            {"payouts.requery_payout", "payouts.propose_resolution", "payouts.approve_resolution"},
        ),
        (
            "finance_operator",
            {"payouts.requery_payout", "payouts.propose_resolution"},
            {"payouts.approve_resolution", "wallets.change_wallet_status"},
        ),
        (
            "finance_approver",
            {"payouts.approve_resolution"},
            {
                "payouts.propose_resolution",
                "payouts.requery_payout",
                "audit.reset_staff_credentials",
            },
        ),
        (
            "ops",
            {"webhooks.resend_event", "payment_items.change_paymentitem"},
            {
                "merchants.rotate_secret_key",
                "payouts.view_payout",
                "payment_items.delete_paymentitem",
            },
        ),
        (
            "security_admin",
            {
                "merchants.rotate_secret_key",
                "merchants.rotate_webhook_secret",
                "wallets.change_wallet_status",
                "merchants.add_merchant",
                "audit.reset_staff_credentials",
                "otp_totp.add_totpdevice",
            },
            {
                "payouts.approve_resolution",
                "wallets.change_wallet",
                "merchants.delete_merchant",
                "auth.change_user",
                "auth.add_user",
            },
        ),
    ],
)
def test_each_role_may_do_its_work_and_nothing_else(role_key, granted, withheld) -> None:
    user = StaffUserFactory(roles=[role_key])
    assert all(user.has_perm(name) for name in granted)
    assert not any(user.has_perm(name) for name in withheld)


def test_no_role_may_add_change_or_delete_money_records_or_logs() -> None:
    """Payouts, wallets, the ledger, events and the audit trail change through services only;
    the configuration beside them (fee schedules, banks, payout routes) is edited in the admin."""
    forbidden = {
        f"{app_label}.{verb}_{model._meta.model_name}"
        for app_label in ("payouts", "wallets", "webhooks", "audit")
        for model in apps.get_app_config(app_label).get_models()
        for verb in ("add", "change", "delete")
        if model._meta.model_name not in {"feeschedule", "feetier", "bank", "payoutroute"}
    }
    for role in ROLES:
        assert not forbidden & set(role.permissions), role.key


def test_sync_restores_a_role_changed_by_hand() -> None:
    group = Group.objects.get(name="Finance viewer")
    group.permissions.add(permission_get("payouts.approve_resolution"))
    staff_roles_sync()
    assert _group_permissions(group) == set(role_get("finance_viewer").permissions)


def test_grant_makes_staff_adds_the_group_and_is_audited() -> None:
    user = User.objects.create_user("tunde", password="pw-tunde-12345")
    out = StringIO()
    call_command(
        "staff_role", "grant", "tunde", "finance_approver", "--reason", "March close", stdout=out
    )
    user.refresh_from_db()
    assert user.is_staff
    assert list(user.groups.values_list("name", flat=True)) == ["Finance approver"]
    assert user.has_perm("payouts.approve_resolution")
    assert "granted finance_approver" in out.getvalue()
    record = AuditRecord.objects.get(action="auth.user.role_grant")
    assert record.actor is None
    assert record.actor_label.startswith("manage.py staff_role")
    assert record.object_id == str(user.pk)
    assert record.after == {"is_staff": True, "groups": ["Finance approver"]}
    assert record.reason == "March close"
    account = AuditRecord.objects.filter(
        object_id=str(user.pk), action__in=("auth.user.groups_change", "auth.user.change")
    )
    assert {(r.action, r.actor_label) for r in account} == {
        ("auth.user.groups_change", record.actor_label),
        ("auth.user.change", record.actor_label),
    }


def test_revoke_removes_only_that_role() -> None:
    user = StaffUserFactory(roles=["finance_viewer", "ops"])
    call_command("staff_role", "revoke", user.username, "ops", stdout=StringIO())
    assert list(user.groups.values_list("name", flat=True)) == ["Finance viewer"]
    assert AuditRecord.objects.filter(action="auth.user.role_revoke").count() == 1


def test_list_shows_roles_and_members() -> None:
    StaffUserFactory(username="ngozi", roles=["security_admin"])
    out = StringIO()
    call_command("staff_role", "list", stdout=out)
    assert "security_admin (Security admin)" in out.getvalue()
    assert "members: ngozi" in out.getvalue()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["grant", "nobody", "ops"], "user 'nobody' does not exist"),
        (["grant", "staff-x", "cashier"], "unknown role 'cashier'"),
    ],
)
def test_command_errors(arguments, message) -> None:
    StaffUserFactory(username="staff-x")
    with pytest.raises(CommandError, match=message):
        call_command("staff_role", *arguments, stdout=StringIO())
    assert not act_records().exists()


def test_every_role_permission_exists() -> None:
    for role in ROLES:
        for name in role.permissions:
            app_label, codename = name.split(".")
            assert Permission.objects.filter(
                content_type__app_label=app_label, codename=codename
            ).exists(), name
