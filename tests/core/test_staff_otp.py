"""Staff two-factor sign-in: with ``OTP_REQUIRED`` (production) the admin admits only staff
verified by a TOTP device; ``staff_totp_enrol`` enrols one and prints its provisioning URI once."""

from __future__ import annotations

import base64
import io
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

PASSWORD = "correct horse battery staple"  # noqa: S105 - a test password
ADMIN_INDEX = "/admin/"
ADMIN_LOGIN = "/admin/login/"


@pytest.fixture
def staff_user(db: None):  # type: ignore[no-untyped-def]
    return get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)


def _enrol(username: str, *extra: str) -> str:
    out = io.StringIO()
    call_command("staff_totp_enrol", "--username", username, *extra, stdout=out)
    return out.getvalue()


def _token_for_uri(uri: str) -> str:
    secret = parse_qs(urlsplit(uri).query)["secret"][0]
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    return f"{totp(key):06d}"


def _token_for_device(device: TOTPDevice) -> str:
    return f"{totp(device.bin_key, device.step, device.t0, device.digits):0{device.digits}d}"


def _login(client: Client, **fields: str):  # type: ignore[no-untyped-def]
    return client.post(
        f"{ADMIN_LOGIN}?next={ADMIN_INDEX}",
        {"username": "ops", "password": PASSWORD, "next": ADMIN_INDEX, **fields},
    )


# --- OTP required ----------------------------------------------------------------------------


def test_required_otp_refuses_a_password_only_login(settings, staff_user) -> None:  # type: ignore[no-untyped-def]
    settings.OTP_REQUIRED = True
    TOTPDevice.objects.create(user=staff_user, name="phone", confirmed=True)
    client = Client()
    response = _login(client)
    assert response.status_code == 200  # the form again, with an error
    assert b"otp_token" in response.content
    assert client.get(ADMIN_INDEX).status_code == 302


def test_required_otp_refuses_a_wrong_token(settings, staff_user) -> None:  # type: ignore[no-untyped-def]
    settings.OTP_REQUIRED = True
    device = TOTPDevice.objects.create(user=staff_user, name="phone", confirmed=True)
    wrong = f"{(int(_token_for_device(device)) + 1) % 1_000_000:06d}"
    client = Client()
    assert _login(client, otp_device=device.persistent_id, otp_token=wrong).status_code == 200
    assert client.get(ADMIN_INDEX).status_code == 302


def test_required_otp_refuses_staff_without_a_device(settings, staff_user) -> None:  # type: ignore[no-untyped-def]
    settings.OTP_REQUIRED = True
    client = Client()
    assert _login(client, otp_token="123456").status_code == 200
    assert client.get(ADMIN_INDEX).status_code == 302


def test_required_otp_refuses_a_session_that_was_never_verified(settings, staff_user) -> None:  # type: ignore[no-untyped-def]
    settings.OTP_REQUIRED = True
    client = Client()
    client.force_login(staff_user)
    response = client.get(ADMIN_INDEX)
    assert response.status_code == 302
    assert response["Location"].startswith(ADMIN_LOGIN)


def test_required_otp_asks_which_device_after_the_password(settings, staff_user) -> None:  # type: ignore[no-untyped-def]
    settings.OTP_REQUIRED = True
    device = TOTPDevice.objects.create(user=staff_user, name="phone", confirmed=True)
    response = _login(Client(), otp_token=_token_for_device(device))
    assert response.status_code == 200
    assert device.persistent_id.encode() in response.content  # offered in the device list


def test_required_otp_admits_staff_with_a_valid_token(settings, staff_user) -> None:  # type: ignore[no-untyped-def]
    settings.OTP_REQUIRED = True
    device = TOTPDevice.objects.create(user=staff_user, name="phone", confirmed=True)
    client = Client()
    response = _login(client, otp_device=device.persistent_id, otp_token=_token_for_device(device))
    assert response.status_code == 302
    assert response["Location"] == ADMIN_INDEX
    assert client.get(ADMIN_INDEX).status_code == 200


def test_enrolled_device_signs_in_with_the_printed_uri(settings, staff_user) -> None:  # type: ignore[no-untyped-def]
    settings.OTP_REQUIRED = True
    uri = _enrol("ops").strip()
    device = TOTPDevice.objects.get(user=staff_user)
    client = Client()
    response = _login(client, otp_device=device.persistent_id, otp_token=_token_for_uri(uri))
    assert response.status_code == 302
    assert client.get(ADMIN_INDEX).status_code == 200


# --- OTP optional (make run, tests) ----------------------------------------------------------


def test_without_required_otp_a_password_login_reaches_the_admin(settings, staff_user) -> None:  # type: ignore[no-untyped-def]
    settings.OTP_REQUIRED = False
    client = Client()
    response = _login(client)
    assert response.status_code == 302
    assert client.get(ADMIN_INDEX).status_code == 200


# --- enrolment -------------------------------------------------------------------------------


def test_enrol_prints_the_provisioning_uri_once_and_confirms_the_device(
    settings, staff_user
) -> None:  # type: ignore[no-untyped-def]
    settings.OTP_TOTP_ISSUER = "Merchant Payments"
    output = _enrol("ops")
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1
    uri = urlsplit(lines[0])
    assert uri.scheme == "otpauth"
    assert uri.netloc == "totp"
    assert unquote(uri.path) == "/Merchant Payments:ops"
    assert parse_qs(uri.query)["issuer"] == ["Merchant Payments"]
    device = TOTPDevice.objects.get(user=staff_user)
    assert device.confirmed is True
    assert _token_for_uri(lines[0]) == _token_for_device(device)


def test_enrol_refuses_a_second_device_without_replace(staff_user) -> None:  # type: ignore[no-untyped-def]
    _enrol("ops")
    with pytest.raises(CommandError, match="already has a TOTP device"):
        _enrol("ops")
    assert TOTPDevice.objects.filter(user=staff_user).count() == 1


def test_enrol_with_replace_issues_a_new_secret_and_drops_the_old_device(staff_user) -> None:  # type: ignore[no-untyped-def]
    first = _enrol("ops").strip()
    second = _enrol("ops", "--replace").strip()
    assert parse_qs(urlsplit(first).query)["secret"] != parse_qs(urlsplit(second).query)["secret"]
    device = TOTPDevice.objects.get(user=staff_user)
    assert _token_for_uri(second) == _token_for_device(device)


def test_enrol_refuses_unknown_and_non_staff_users(db: None) -> None:
    get_user_model().objects.create_user("customer", "c@example.com", PASSWORD)
    with pytest.raises(CommandError, match="no user"):
        _enrol("nobody")
    with pytest.raises(CommandError, match="not staff"):
        _enrol("customer")
    assert not TOTPDevice.objects.exists()


def test_device_keys_are_hidden_in_the_admin(settings) -> None:  # type: ignore[no-untyped-def]
    assert settings.OTP_ADMIN_HIDE_SENSITIVE_DATA is True
