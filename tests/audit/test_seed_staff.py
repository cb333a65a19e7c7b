"""``manage.py seed_staff --dev``: one development staff user per role, created once, with a
password that signs in to the back office; refused with DEBUG off. And the admin's "View site"."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client, override_settings

from audit.models import AuditRecord
from audit.roles import ROLES, role_get

pytestmark = pytest.mark.django_db


def _seed() -> list[dict[str, str]]:
    out = StringIO()
    call_command("seed_staff", "--dev", "--json", stdout=out)
    return json.loads(out.getvalue())["users"]


@override_settings(DEBUG=True)
def test_it_creates_one_staff_user_per_role() -> None:
    users = _seed()

    assert sorted(user["role"] for user in users) == sorted(role.key for role in ROLES)
    for seeded in users:
        user = User.objects.get(username=seeded["username"])
        assert user.is_staff and not user.is_superuser
        assert list(user.groups.values_list("name", flat=True)) == [
            role_get(seeded["role"]).group_name
        ]
    assert {"username": "amaka", "role": "finance_operator"}.items() <= next(
        user for user in users if user["username"] == "amaka"
    ).items()
    assert AuditRecord.objects.filter(action="auth.user.role_grant").count() == len(ROLES)


@override_settings(DEBUG=True)
def test_a_second_run_creates_nothing_and_keeps_the_passwords() -> None:
    first = _seed()

    assert _seed() == []
    assert User.objects.count() == len(ROLES)
    amaka = next(user for user in first if user["username"] == "amaka")
    assert User.objects.get(username="amaka").check_password(amaka["password"])


@override_settings(DEBUG=False)
def test_it_is_refused_with_debug_off() -> None:
    with pytest.raises(CommandError, match="DEBUG is off"):
        call_command("seed_staff", "--dev", stdout=StringIO())

    assert not User.objects.exists()


@override_settings(DEBUG=True)
def test_it_is_refused_without_dev() -> None:
    with pytest.raises(CommandError, match="--dev"):
        call_command("seed_staff", stdout=StringIO())

    assert not User.objects.exists()


@override_settings(DEBUG=True)
def test_the_printed_password_signs_in_to_the_back_office() -> None:
    out = StringIO()
    call_command("seed_staff", "--dev", stdout=out)
    line = next(line for line in out.getvalue().splitlines() if line.startswith("amaka "))
    password = line.rsplit(": ", 1)[1]
    client = Client()

    assert client.login(username="amaka", password=password)
    page = client.get("/admin/")
    assert page.status_code == 200
    assert "Reconciliation" in page.content.decode() or "Payouts" in page.content.decode()


@override_settings(DEBUG=True)
def test_the_docs_role_example_works_on_a_fresh_install() -> None:
    _seed()
    out = StringIO()

    call_command(
        "staff_role", "grant", "amaka", "finance_approver", "--reason", "March close", stdout=out
    )

    assert "granted finance_approver" in out.getvalue()


def test_view_site_leads_to_the_api_docs(admin_client: Client) -> None:
    page = admin_client.get("/admin/")

    assert 'href="/api/docs/"' in page.content.decode()
    assert admin_client.get("/api/docs/").status_code == 200
