"""Settings guards, checked in fresh interpreters so the test process's settings are untouched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.multiprocess, pytest.mark.probe]

ROOT = Path(__file__).resolve().parents[2]


def _django_check(
    env_overrides: dict[str, str], settings_module: str
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    env.update(env_overrides)
    env["DJANGO_SETTINGS_MODULE"] = settings_module
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_debug_off_refuses_the_default_secret_key() -> None:
    result = _django_check({"DEBUG": "0"}, "config.settings.production")
    assert result.returncode != 0
    assert "SECRET_KEY is the built-in development key" in result.stderr


def test_debug_off_starts_with_a_real_secret_key() -> None:
    result = _django_check(
        {
            "DEBUG": "0",
            "SECRET_KEY": "a-real-secret-key-of-sufficient-length-0123456789",
            "FUNDING_WEBHOOK_SECRET": "a-real-funding-webhook-secret",
            "PAYSTACK_SECRET_KEY": "sk_live_a_real_paystack_key",
            "FIELD_ENCRYPTION_KEYS": "Zm9yIHRoZSBzZXR0aW5ncyBjaGVjazogMzIgYnl0ZXM=",
        },
        "config.settings.production",
    )
    assert result.returncode == 0, result.stderr


def test_local_settings_default_to_debug_and_start_without_configuration() -> None:
    result = _django_check({}, "config.settings.local")
    assert result.returncode == 0, result.stderr


def _database_setting(env_overrides: dict[str, str], name: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    env.update(env_overrides, DJANGO_SETTINGS_MODULE="config.settings.local")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; "
            f"print(settings.DATABASES['default'].get({name!r}))",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_transaction_pooling_turns_server_side_cursors_off() -> None:
    pooled = {
        "DATABASE_URL": "postgres://postgres@127.0.0.1:6432/payments",
        "DATABASE_TRANSACTION_POOLING": "1",
    }
    direct = {"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/payments"}
    assert _database_setting(pooled, "DISABLE_SERVER_SIDE_CURSORS") == "True"
    assert _database_setting(direct, "DISABLE_SERVER_SIDE_CURSORS") == "None"
