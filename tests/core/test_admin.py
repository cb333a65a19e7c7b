"""The read-only admin mixin: nothing is added; change and delete only where an admin allows."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.admin.sites import AdminSite
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import RequestFactory

from core.admin import ReadOnlyAdminMixin


class _ReadOnlyGroupAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    pass


class _ChangeableGroupAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    allow_change = True


class _DeletableGroupAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    allow_delete = True


@pytest.fixture
def superuser_request(db):
    request = RequestFactory().get("/admin/")
    request.user = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    return request


def test_read_only_by_default(superuser_request) -> None:
    model_admin = _ReadOnlyGroupAdmin(Group, AdminSite())
    assert model_admin.has_add_permission(superuser_request) is False
    assert model_admin.has_change_permission(superuser_request) is False
    assert model_admin.has_delete_permission(superuser_request) is False
    assert model_admin.has_view_permission(superuser_request) is True


def test_allow_change_defers_to_the_usual_check(superuser_request) -> None:
    model_admin = _ChangeableGroupAdmin(Group, AdminSite())
    assert model_admin.has_add_permission(superuser_request) is False
    assert model_admin.has_change_permission(superuser_request) is True
    assert model_admin.has_delete_permission(superuser_request) is False


def test_allow_delete_defers_to_the_usual_check(superuser_request) -> None:
    model_admin = _DeletableGroupAdmin(Group, AdminSite())
    assert model_admin.has_change_permission(superuser_request) is False
    assert model_admin.has_delete_permission(superuser_request) is True
