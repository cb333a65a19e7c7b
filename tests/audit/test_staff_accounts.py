"""Every change to a staff account is recorded with its actor and its target: passwords (the
admin's forms, ``manage.py changepassword``, ``createsuperuser``), TOTP devices (the admin,
``staff_totp_enrol``), groups, direct permissions, the flags, creation and deletion. A password
hash or a device key is never recorded."""

from __future__ import annotations

import io
import json
import sys

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.models import AuditRecord
from tests.audit.factories import StaffUserFactory, permission_get
from tests.audit.helpers import client_for

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-long-enough-new-passphrase-42"  # noqa: S105 - a test password
DEVICE_KEY = "3132333435363738393031323334353637383930"


def records_of(user: User, action: str = "") -> list[AuditRecord]:
    found = AuditRecord.objects.filter(object_type="auth.user", object_id=str(user.pk))
    if action:
        found = found.filter(action=action)
    return list(found.order_by("id"))


def assert_no_secret(record: AuditRecord, *secrets: str) -> None:
    text = json.dumps([record.before, record.after, record.reason, record.object_repr])
    for secret in secrets:
        assert secret not in text


def password_form(client: Client, user: User) -> object:
    return client.post(
        f"/admin/auth/user/{user.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )


def device_form(client: Client, user: User, **fields: object) -> object:
    return client.post(
        "/admin/otp_totp/totpdevice/add/",
        {
            "user": user.pk,
            "name": "phone",
            "confirmed": "on",
            "key": DEVICE_KEY,
            "step": 30,
            "t0": 0,
            "digits": 6,
            "tolerance": 1,
            "drift": 0,
            "throttling_failure_count": 0,
            **fields,
        },
    )


class OneRoundPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """A preferred hasher cheap enough for a test: MD5 hashes get upgraded to it."""

    iterations = 1


@pytest.fixture
def argv(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Runs as ``manage.py <command>`` does."""

    def set_command(command: str) -> None:
        monkeypatch.setattr(sys, "argv", ["manage.py", command])

    return set_command


# --- passwords -------------------------------------------------------------------------------


def test_the_admin_password_form_is_recorded_with_the_signed_in_actor(
    admin_client, admin_user
) -> None:
    target = StaffUserFactory(username="approver")
    target.set_password("old-passphrase-for-approver")
    target.save()
    old_hash = User.objects.get(pk=target.pk).password

    response = password_form(admin_client, target)

    assert response.status_code == 302
    [record] = records_of(target, "auth.user.password_change")[-1:]
    assert (record.actor, record.actor_label) == (admin_user, admin_user.username)
    assert (record.before, record.after) == ({"password": "set"}, {"password": "changed"})
    new_hash = User.objects.get(pk=target.pk).password
    assert_no_secret(record, NEW_PASSWORD, old_hash, new_hash)


def test_the_own_password_change_page_records_the_user_as_actor() -> None:
    user = StaffUserFactory(username="amaka")
    user.set_password("old-passphrase-for-amaka")
    user.save()
    client = Client()
    assert client.login(username="amaka", password="old-passphrase-for-amaka")  # noqa: S106

    response = client.post(
        "/admin/password_change/",
        {
            "old_password": "old-passphrase-for-amaka",
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
        },
    )

    assert response.status_code == 302
    record = records_of(user, "auth.user.password_change")[-1]
    assert (record.actor, record.after) == (user, {"password": "changed"})


def test_manage_py_changepassword_is_recorded_with_the_command(argv, monkeypatch) -> None:
    user = StaffUserFactory(username="ngozi")
    argv("changepassword")
    monkeypatch.setattr(
        "django.contrib.auth.management.commands.changepassword.getpass.getpass",
        lambda prompt="": NEW_PASSWORD,
    )

    call_command("changepassword", "ngozi", stdout=io.StringIO())

    record = records_of(user, "auth.user.password_change")[-1]
    assert record.actor is None
    assert record.actor_label.startswith("manage.py changepassword (")
    assert record.after == {"password": "changed"}


def test_createsuperuser_records_the_user_and_its_password(argv, monkeypatch) -> None:
    argv("createsuperuser")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", NEW_PASSWORD)

    call_command(
        "createsuperuser",
        "--noinput",
        "--username",
        "root2",
        "--email",
        "root2@example.com",
        stdout=io.StringIO(),
    )

    user = User.objects.get(username="root2")
    added, password = records_of(user)
    assert added.action == "auth.user.add"
    assert added.actor_label.startswith("manage.py createsuperuser (")
    assert added.after["is_superuser"] is True
    assert added.after["password"] == "set"
    assert (password.action, password.after) == ("auth.user.password_change", {"password": "set"})
    assert_no_secret(added, user.password, NEW_PASSWORD)


def test_the_hasher_upgrading_a_hash_at_sign_in_is_not_a_change(settings) -> None:
    user = StaffUserFactory(username="tunde")
    user.set_password("tunde-passphrase-1234")
    user.save()
    before = len(records_of(user))
    settings.PASSWORD_HASHERS = [
        "tests.audit.test_staff_accounts.OneRoundPBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]

    assert Client().login(username="tunde", password="tunde-passphrase-1234")  # noqa: S106

    assert User.objects.get(pk=user.pk).password.startswith("pbkdf2_sha256$1$")  # upgraded
    assert len(records_of(user)) == before


# --- flags, groups, permissions, creation and deletion ----------------------------------------


def test_the_flags_changed_in_the_user_admin_are_recorded(admin_client, admin_user) -> None:
    clerk = StaffUserFactory(username="clerk")
    response = admin_client.post(
        f"/admin/auth/user/{clerk.pk}/change/",
        {
            "username": "clerk",
            "email": "clerk@example.com",
            "is_staff": "on",
            "is_superuser": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 302
    record = records_of(clerk, "auth.user.change")[-1]
    assert record.actor == admin_user
    assert record.before == {"is_active": True, "is_superuser": False}
    assert record.after == {"is_active": False, "is_superuser": True}


def test_groups_and_permissions_are_recorded_from_either_side() -> None:
    user = StaffUserFactory(username="bola")
    approvers = Group.objects.get(name="Finance approver")
    viewers = Group.objects.get(name="Finance viewer")

    user.groups.add(approvers)
    viewers.user_set.add(user)
    approvers.user_set.remove(user)
    user.user_permissions.add(permission_get("payouts.approve_resolution"))
    user.groups.clear()

    groups = [(r.before, r.after) for r in records_of(user, "auth.user.groups_change")]
    assert groups == [
        ({"names": []}, {"names": ["Finance approver"]}),
        ({"names": ["Finance approver"]}, {"names": ["Finance approver", "Finance viewer"]}),
        ({"names": ["Finance approver", "Finance viewer"]}, {"names": ["Finance viewer"]}),
        ({"names": ["Finance viewer"]}, {"names": []}),
    ]
    [permissions] = records_of(user, "auth.user.permissions_change")
    assert permissions.after == {"names": ["payouts.approve_resolution"]}
    assert permissions.actor_label == "system"


def test_users_added_and_deleted_in_the_admin_are_recorded(admin_client, admin_user) -> None:
    response = admin_client.post(
        "/admin/auth/user/add/",
        {
            "username": "newcomer",
            "usable_password": "true",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
        },
    )
    assert response.status_code == 302
    user = User.objects.get(username="newcomer")
    added, password = records_of(user)
    assert (added.action, added.actor) == ("auth.user.add", admin_user)
    assert (password.action, password.actor) == ("auth.user.password_change", admin_user)
    assert_no_secret(added, user.password, NEW_PASSWORD)

    response = admin_client.post(f"/admin/auth/user/{user.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    deleted = records_of(user)[-1]
    assert (deleted.action, deleted.actor) == ("auth.user.delete", admin_user)
    assert deleted.before["username"] == "newcomer"


# --- TOTP devices -----------------------------------------------------------------------------


def test_totp_devices_changed_in_the_admin_are_recorded_without_their_key(
    admin_client, admin_user
) -> None:
    target = StaffUserFactory(username="approver")

    assert device_form(admin_client, target, confirmed="").status_code == 302
    device = TOTPDevice.objects.get(user=target)
    change_url = f"/admin/otp_totp/totpdevice/{device.pk}/change/"
    changed = {
        "user": target.pk,
        "name": "phone",
        "confirmed": "on",
        "step": 30,
        "t0": 0,
        "digits": 6,
        "tolerance": 1,
        "drift": 0,
        "throttling_failure_count": 0,
    }
    assert admin_client.post(change_url, changed).status_code == 302
    assert admin_client.post(change_url, {**changed, "name": "work phone"}).status_code == 302
    delete_url = f"/admin/otp_totp/totpdevice/{device.pk}/delete/"
    assert admin_client.post(delete_url, {"post": "yes"}).status_code == 302

    records = [r for r in records_of(target) if "totp_device" in r.action]
    assert [r.action for r in records] == [
        "auth.user.totp_device_add",
        "auth.user.totp_device_confirm",
        "auth.user.totp_device_change",
        "auth.user.totp_device_delete",
    ]
    assert {r.actor for r in records} == {admin_user}
    assert records[0].after == {
        "device_id": device.pk,
        "device": "phone",
        "confirmed": False,
        "key": "set",
    }
    assert records[2].after == {
        "device_id": device.pk,
        "device": "work phone",
        "name": "work phone",
    }
    for record in records:
        assert_no_secret(record, DEVICE_KEY)


def test_a_device_key_change_is_recorded_as_changed() -> None:
    user = StaffUserFactory()
    device = TOTPDevice.objects.create(user=user, name="phone", confirmed=True)
    old_key = device.key
    device.key = DEVICE_KEY
    device.save()
    record = records_of(user, "auth.user.totp_device_change")[-1]
    assert (record.before["key"], record.after["key"]) == ("set", "changed")
    assert_no_secret(record, DEVICE_KEY, old_key)


def test_staff_totp_enrol_records_the_devices_it_replaces_and_adds() -> None:
    user = StaffUserFactory(username="ops")
    TOTPDevice.objects.create(user=user, name="old phone", confirmed=True)
    before = len(records_of(user))

    out = io.StringIO()
    call_command("staff_totp_enrol", "--username", "ops", "--replace", stdout=out, stderr=out)

    deleted, added = records_of(user)[before:]
    assert (deleted.action, added.action) == (
        "auth.user.totp_device_delete",
        "auth.user.totp_device_add",
    )
    for record in (deleted, added):
        assert record.actor is None
        assert record.actor_label.startswith("manage.py staff_totp_enrol (")
    key = TOTPDevice.objects.get(user=user).key
    assert_no_secret(added, key)


def test_a_sign_in_with_a_token_records_nothing(settings) -> None:
    from django_otp.oath import totp

    settings.OTP_REQUIRED = True
    user = StaffUserFactory(username="sola")
    user.set_password("sola-passphrase-1234")
    user.save()
    device = TOTPDevice.objects.create(user=user, name="phone", confirmed=True)
    before = len(records_of(user))
    token = f"{totp(device.bin_key, device.step, device.t0, device.digits):06d}"

    response = Client().post(
        "/admin/login/?next=/admin/",
        {
            "username": "sola",
            "password": "sola-passphrase-1234",
            "otp_device": device.persistent_id,
            "otp_token": token,
            "next": "/admin/",
        },
    )

    assert response.status_code == 302
    assert TOTPDevice.objects.get(pk=device.pk).last_used_at is not None
    assert len(records_of(user)) == before


def test_a_client_for_helper_user_is_recorded_as_actor(admin_user) -> None:
    """``force_login`` sessions act as their user too (the helper most tests use)."""
    target = StaffUserFactory()
    client_for(admin_user).post(
        f"/admin/auth/user/{target.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert records_of(target, "auth.user.password_change")[-1].actor == admin_user
