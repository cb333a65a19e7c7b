"""Helpers for back-office tests in every app."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpResponse
from django.test import Client

from audit.models import AuditRecord


def client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def assert_admin_forbidden(response: HttpResponse) -> None:
    """Django's admin 403 page (the back-office layout), not the API's JSON envelope."""
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    assert "admin/403.html" in [template.name for template in response.templates]
    page = response.content.decode()
    assert "403 Forbidden" in page
    assert 'id="site-name"' in page  # the admin header: the page extends admin/base_site.html


def actions_offered(response: HttpResponse) -> set[str]:
    """The action names in a changelist's action menu (empty when there is no menu)."""
    form = response.context["action_form"]
    if form is None:
        return set()
    return {name for name, _label in form.fields["action"].choices if name}


def audit_count() -> int:
    return act_records().count()


def act_records() -> QuerySet[AuditRecord]:
    """The audit records of back-office acts, without the staff-account records
    (``audit.signals``) that creating a test's users writes."""
    return AuditRecord.objects.exclude(object_type="auth.user")
