"""Every back-office admin follows the same rules: each action declares the permission it needs
(with a matching ``has_<name>_permission``), refused requests get the admin's 403 page, and a
user without a role sees no action anywhere."""

from __future__ import annotations

import pytest
from django.contrib import admin

from audit.backoffice import BackOfficeAdminMixin
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import actions_offered, assert_admin_forbidden, client_for

PROJECT_APPS = {
    "merchants",
    "wallets",
    "payouts",
    "payment_items",
    "collections_app",
    "webhooks",
    "audit",
    "sweeps",
    "refunds",
    "settlements",
}


def _project_admins() -> list[admin.ModelAdmin]:
    return [
        model_admin
        for model, model_admin in admin.site._registry.items()
        if model._meta.app_label in PROJECT_APPS
    ]


def test_every_project_admin_uses_the_back_office_rules() -> None:
    for model_admin in _project_admins():
        assert isinstance(model_admin, BackOfficeAdminMixin), type(model_admin).__name__


def test_every_action_declares_permissions_with_a_matching_check() -> None:
    for model_admin in _project_admins():
        for func, name, _description in model_admin._get_base_actions():
            permissions = getattr(func, "allowed_permissions", None)
            assert permissions, f"{type(model_admin).__name__}.{name} declares no permission"
            for permission in permissions:
                assert callable(getattr(model_admin, f"has_{permission}_permission", None)), (
                    f"{type(model_admin).__name__}.{name}: no has_{permission}_permission"
                )


@pytest.mark.django_db
@pytest.mark.parametrize("model_admin", _project_admins(), ids=lambda m: str(m))
def test_a_view_only_user_is_offered_no_action(model_admin: admin.ModelAdmin) -> None:
    opts = model_admin.model._meta
    viewer = StaffUserFactory(permissions=[f"{opts.app_label}.view_{opts.model_name}"])
    response = client_for(viewer).get(f"/admin/{opts.app_label}/{opts.model_name}/")
    assert response.status_code == 200
    assert actions_offered(response) == set()
    assert 'name="action"' not in response.content.decode()


@pytest.mark.django_db
def test_a_page_the_user_may_not_see_is_the_admin_403_page() -> None:
    response = client_for(StaffUserFactory()).get("/admin/payouts/payout/")
    assert_admin_forbidden(response)


@pytest.mark.django_db
def test_a_non_staff_user_is_sent_to_the_login_page() -> None:
    response = client_for(StaffUserFactory(is_staff=False)).get("/admin/payouts/payout/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
