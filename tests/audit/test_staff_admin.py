"""Who may change a staff account in the admin: another user's password or TOTP devices need
the security admin's ``audit.reset_staff_credentials``; nobody sets or clears their own
superuser flag."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.models import AuditRecord
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import assert_admin_forbidden, client_for

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-long-enough-new-passphrase-42"  # noqa: S105 - a test password
USER_ADMIN = ["auth.view_user", "auth.add_user", "auth.change_user", "auth.delete_user"]
DEVICE_ADMIN = [
    "otp_totp.view_totpdevice",
    "otp_totp.add_totpdevice",
    "otp_totp.change_totpdevice",
    "otp_totp.delete_totpdevice",
]


def password_url(user: User) -> str:
    return f"/admin/auth/user/{user.pk}/password/"


def password_post(user: User) -> dict[str, str]:
    return {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"}


def device_post(user: User, **fields: object) -> dict[str, object]:
    return {
        "user": user.pk,
        "name": "phone",
        "confirmed": "on",
        "key": "3132333435363738393031323334353637383930",
        "step": 30,
        "t0": 0,
        "digits": 6,
        "tolerance": 1,
        "drift": 0,
        "throttling_failure_count": 0,
        **fields,
    }


def password_unchanged(user: User) -> bool:
    return User.objects.get(pk=user.pk).password == user.password


def test_a_user_admin_without_the_security_permission_may_not_set_anothers_password() -> None:
    clerk = StaffUserFactory(permissions=USER_ADMIN)
    target = StaffUserFactory()
    client = client_for(clerk)

    assert_admin_forbidden(client.get(password_url(target)))
    assert_admin_forbidden(client.post(password_url(target), password_post(target)))

    assert password_unchanged(target)
    assert not AuditRecord.objects.filter(action="auth.user.password_change").exists()


def test_a_security_admin_sets_anothers_password_without_changing_the_account() -> None:
    security = StaffUserFactory(roles=["security_admin"])
    target = StaffUserFactory()
    client = client_for(security)

    assert client.get(password_url(target)).status_code == 200
    response = client.post(password_url(target), password_post(target))

    assert response.status_code == 302
    assert not password_unchanged(target)
    record = AuditRecord.objects.get(action="auth.user.password_change")
    assert (record.actor, record.object_id) == (security, str(target.pk))
    # The role does not open the rest of the account (groups, flags).
    change = client.post(
        f"/admin/auth/user/{target.pk}/change/",
        {"username": target.username, "is_staff": "on", "is_superuser": "on"},
    )
    assert change.status_code == 403
    assert not User.objects.get(pk=target.pk).is_superuser


def test_a_security_admin_may_not_set_a_superusers_credentials(admin_user) -> None:
    client = client_for(StaffUserFactory(roles=["security_admin"]))
    assert_admin_forbidden(client.post(password_url(admin_user), password_post(admin_user)))
    assert_admin_forbidden(client.post("/admin/otp_totp/totpdevice/add/", device_post(admin_user)))
    assert password_unchanged(admin_user)
    assert not TOTPDevice.objects.exists()


def test_one_may_set_ones_own_password_in_the_user_admin() -> None:
    clerk = StaffUserFactory(permissions=USER_ADMIN)
    response = client_for(clerk).post(password_url(clerk), password_post(clerk))
    assert response.status_code == 302
    assert not password_unchanged(clerk)


def test_creating_a_user_with_a_password_needs_the_security_permission() -> None:
    clerk = StaffUserFactory(permissions=USER_ADMIN)
    response = client_for(clerk).post(
        "/admin/auth/user/add/",
        {"username": "puppet", **password_post(clerk)},
    )
    assert_admin_forbidden(response)
    assert not User.objects.filter(username="puppet").exists()


def test_a_device_admin_without_the_security_permission_may_not_touch_anothers_devices() -> None:
    clerk = StaffUserFactory(permissions=DEVICE_ADMIN)
    target = StaffUserFactory()
    theirs = TOTPDevice.objects.create(user=target, name="their phone", confirmed=True)
    client = client_for(clerk)

    assert_admin_forbidden(client.post("/admin/otp_totp/totpdevice/add/", device_post(target)))
    assert_admin_forbidden(
        client.post(
            f"/admin/otp_totp/totpdevice/{theirs.pk}/change/",
            device_post(target, name="renamed"),
        )
    )
    assert_admin_forbidden(
        client.post(f"/admin/otp_totp/totpdevice/{theirs.pk}/delete/", {"post": "yes"})
    )
    assert_admin_forbidden(
        client.post(
            "/admin/otp_totp/totpdevice/",
            {"action": "delete_selected", "_selected_action": [theirs.pk], "post": "yes"},
        )
    )

    assert list(TOTPDevice.objects.values_list("user_id", "name")) == [(target.pk, "their phone")]


def test_a_device_admin_may_add_their_own_device_but_not_move_it_to_another_user() -> None:
    clerk = StaffUserFactory(permissions=DEVICE_ADMIN)
    target = StaffUserFactory()
    client = client_for(clerk)

    assert client.post("/admin/otp_totp/totpdevice/add/", device_post(clerk)).status_code == 302
    own = TOTPDevice.objects.get(user=clerk)
    moved = client.post(f"/admin/otp_totp/totpdevice/{own.pk}/change/", device_post(target))

    assert_admin_forbidden(moved)
    assert TOTPDevice.objects.get(pk=own.pk).user == clerk


def test_a_security_admin_adds_and_deletes_anothers_device() -> None:
    security = StaffUserFactory(roles=["security_admin"])
    target = StaffUserFactory()
    client = client_for(security)

    assert client.post("/admin/otp_totp/totpdevice/add/", device_post(target)).status_code == 302
    device = TOTPDevice.objects.get(user=target)
    deleted = client.post(f"/admin/otp_totp/totpdevice/{device.pk}/delete/", {"post": "yes"})

    assert deleted.status_code == 302
    assert not TOTPDevice.objects.exists()
    actions = AuditRecord.objects.filter(object_id=str(target.pk), actor=security)
    assert set(actions.values_list("action", flat=True)) == {
        "auth.user.totp_device_add",
        "auth.user.totp_device_delete",
    }


def test_nobody_sets_or_clears_their_own_superuser_flag(admin_client, admin_user) -> None:
    form = {
        "username": admin_user.username,
        "email": admin_user.email,
        "is_active": "on",
        "is_staff": "on",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
    }
    assert_admin_forbidden(admin_client.post(f"/admin/auth/user/{admin_user.pk}/change/", form))
    assert User.objects.get(pk=admin_user.pk).is_superuser

    clerk = StaffUserFactory(permissions=USER_ADMIN)
    own = client_for(clerk).post(
        f"/admin/auth/user/{clerk.pk}/change/",
        {**form, "username": clerk.username, "email": clerk.email, "is_superuser": "on"},
    )
    assert_admin_forbidden(own)
    assert not User.objects.get(pk=clerk.pk).is_superuser


def test_a_superuser_still_sets_another_users_superuser_flag(admin_client) -> None:
    clerk = StaffUserFactory(username="clerk")
    response = admin_client.post(
        f"/admin/auth/user/{clerk.pk}/change/",
        {
            "username": "clerk",
            "is_active": "on",
            "is_staff": "on",
            "is_superuser": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 302
    assert User.objects.get(pk=clerk.pk).is_superuser
