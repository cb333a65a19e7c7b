"""Failed admin logins lock out the username and client address pair (django-axes) after
``AXES_FAILURE_LIMIT`` failures for ``AXES_COOLOFF_MINUTES``; the test settings turn it off and
these tests turn it on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.db.models import F
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple"  # noqa: S105 - a test password
ADMIN_LOGIN = "/admin/login/"
ATTACKER = "203.0.113.7"
COLLEAGUE = "203.0.113.8"


@pytest.fixture
def lockout(settings, db: None):  # type: ignore[no-untyped-def]
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    settings.OTP_REQUIRED = False
    get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)
    get_user_model().objects.create_superuser("finance", "fin@example.com", PASSWORD)
    return settings


def _login(address: str, password: str, username: str = "ops"):  # type: ignore[no-untyped-def]
    return Client(REMOTE_ADDR=address).post(
        ADMIN_LOGIN, {"username": username, "password": password, "next": "/admin/"}
    )


def _fail(address: str, times: int, username: str = "ops") -> None:
    for _ in range(times):
        _login(address, "wrong password", username)


def test_the_right_password_gets_in_below_the_limit(lockout) -> None:  # type: ignore[no-untyped-def]
    assert _login(ATTACKER, "wrong password").status_code == 200
    assert _login(ATTACKER, "wrong password").status_code == 200
    assert _login(ATTACKER, PASSWORD).status_code == 302


def test_the_failure_that_reaches_the_limit_is_answered_429(lockout) -> None:  # type: ignore[no-untyped-def]
    _fail(ATTACKER, 2)
    assert _login(ATTACKER, "wrong password").status_code == 429


def test_after_the_limit_even_the_right_password_is_locked_out(lockout) -> None:  # type: ignore[no-untyped-def]
    _fail(ATTACKER, 3)
    response = _login(ATTACKER, PASSWORD)
    assert response.status_code == 429
    assert b"too many login attempts" in response.content


def test_the_lockout_is_per_username_and_address(lockout) -> None:  # type: ignore[no-untyped-def]
    _fail(ATTACKER, 3)
    assert _login(ATTACKER, PASSWORD).status_code == 429
    assert _login(COLLEAGUE, PASSWORD).status_code == 302
    assert _login(ATTACKER, PASSWORD, username="finance").status_code == 302


def test_the_lockout_ends_after_the_cool_off(lockout) -> None:  # type: ignore[no-untyped-def]
    _fail(ATTACKER, 3)
    assert _login(ATTACKER, PASSWORD).status_code == 429
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=16))
    assert _login(ATTACKER, PASSWORD).status_code == 302


def test_failed_attempts_never_store_the_password_or_token(lockout) -> None:  # type: ignore[no-untyped-def]
    Client(REMOTE_ADDR=ATTACKER).post(
        ADMIN_LOGIN,
        {"username": "ops", "password": "hunter2-secret", "otp_token": "424242"},
    )
    attempt = AccessAttempt.objects.get()
    assert "hunter2-secret" not in attempt.post_data
    assert "424242" not in attempt.post_data


@pytest.mark.multiprocess
@pytest.mark.probe
def test_the_limit_and_cool_off_come_from_the_environment(tmp_path: Path) -> None:
    script = (
        "import json, django; django.setup(); from django.conf import settings;"
        "print(json.dumps([settings.AXES_ENABLED, settings.AXES_FAILURE_LIMIT,"
        " settings.AXES_COOLOFF_TIME.total_seconds(), settings.AXES_LOCKOUT_PARAMETERS]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXES_") and k != "DEBUG"}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "VAR_DIR": str(tmp_path / "var"),
            "DATABASE_URL": "postgres://postgres@127.0.0.1:1/unreachable",  # never connected to
            "AXES_FAILURE_LIMIT": "7",
            "AXES_COOLOFF_MINUTES": "30",
        }
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    enabled, limit, cool_off, parameters = json.loads(result.stdout.splitlines()[-1])
    assert enabled is True
    assert limit == 7
    assert cool_off == 1800
    assert parameters == [["username", "ip_address"]]
