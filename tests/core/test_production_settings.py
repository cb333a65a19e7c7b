"""Production guards and transport security, checked in fresh interpreters so the test process's
settings are untouched: with DEBUG off the service refuses to start on a development secret or
without the live provider's key, and ``check --deploy`` is clean with the documented
environment (docs/operations.md, "Production environment")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.multiprocess, pytest.mark.probe]

ROOT = Path(__file__).resolve().parents[2]
DEVELOPMENT_FUNDING_SECRET = "dev-funding-webhook-secret-change-me"
# core.crypto.development_key(): public, so production refuses it.
DEVELOPMENT_ENCRYPTION_KEY = "NtW0A-5w0_W0f1ky4q1F3pzUsVPeMPdMg2qkNj9L0mc="
# The production environment as docs/operations.md documents it.
DOCUMENTED_ENVIRONMENT = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "SECRET_KEY": "0rWq3y8c_Vd2PbJm6XnT1sGfLk9HaZe4Ru7YiOpQw5Ex-Cv0Mn8BbKjLhGf",
    "ALLOWED_HOSTS": "pay.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://pay.example.com",
    "CHECKOUT_BASE_URL": "https://pay.example.com",
    "FUNDING_WEBHOOK_SECRET": "whsec_provider_funding_notifications_secret",
    "PAYSTACK_SECRET_KEY": "sk_live_paystack_secret_for_the_checks",
    "FIELD_ENCRYPTION_KEYS": "q1Vb0bL8sZ2mXJk3Yc4nR5tW6uE7iO8pA9sD0fG1hJ4=",
}
ANOTHER_ENCRYPTION_KEY = "Zm9yIHRoZSBjaGVja3Mgb25seTogMzIgYnl0ZXMhISE="
SCRUBBED = {
    "DEBUG",
    "SECRET_KEY",
    "FUNDING_WEBHOOK_SECRET",
    "PAYSTACK_SECRET_KEY",
    "FIELD_ENCRYPTION_KEYS",
    "PAYOUT_PROVIDER_LIVE",
    "FLUTTERWAVE_SECRET_KEY",
    "FLUTTERWAVE_WEBHOOK_HASH",
    "NAME_ENQUIRY_PROVIDER_LIVE",
    "COLLECTION_PROVIDER_LIVE",
    "REFUND_PROVIDER_LIVE",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "OTP_REQUIRED",
    "DJANGO_SETTINGS_MODULE",
}
SHOWN = [
    "DEBUG",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_SSL_REDIRECT",
    "SECURE_REDIRECT_EXEMPT",
    "OTP_REQUIRED",
]


def _run(
    args: list[str], overrides: dict[str, str | None], tmp_path: Path
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(
        {
            "VAR_DIR": str(tmp_path / "var"),
            "DATABASE_URL": "postgres://app@127.0.0.1:1/merchant_payments",  # never reached
            **DOCUMENTED_ENVIRONMENT,
        }
    )
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _start(overrides: dict[str, str | None], tmp_path: Path) -> subprocess.CompletedProcess:
    script = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{name: getattr(settings, name) for name in {SHOWN!r}}}))"
    )
    return _run(["-c", script], overrides, tmp_path)


def _shown(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"FUNDING_WEBHOOK_SECRET": None}, "FUNDING_WEBHOOK_SECRET"),
        ({"FUNDING_WEBHOOK_SECRET": DEVELOPMENT_FUNDING_SECRET}, "FUNDING_WEBHOOK_SECRET"),
        ({"FUNDING_WEBHOOK_SECRET": ""}, "FUNDING_WEBHOOK_SECRET"),
        ({"FUNDING_WEBHOOK_SECRET": "   "}, "FUNDING_WEBHOOK_SECRET"),
        ({"PAYSTACK_SECRET_KEY": None}, "PAYSTACK_SECRET_KEY"),
        ({"PAYSTACK_SECRET_KEY": ""}, "PAYSTACK_SECRET_KEY"),
        (
            {"PAYSTACK_SECRET_KEY": "", "COLLECTION_PROVIDER_LIVE": "sandbox"},
            "PAYOUT_PROVIDER_LIVE",
        ),
        (
            {"PAYSTACK_SECRET_KEY": "", "PAYOUT_PROVIDER_LIVE": "sandbox"},
            "COLLECTION_PROVIDER_LIVE",
        ),
        (
            {
                "PAYSTACK_SECRET_KEY": "",
                "PAYOUT_PROVIDER_LIVE": "sandbox",
                "COLLECTION_PROVIDER_LIVE": "sandbox",
            },
            "REFUND_PROVIDER_LIVE",
        ),
        (
            {"PAYOUT_PROVIDER_LIVE": "flutterwave", "FLUTTERWAVE_WEBHOOK_HASH": "flw-hash"},
            "FLUTTERWAVE_SECRET_KEY",
        ),
        (
            {"PAYOUT_PROVIDER_LIVE": "flutterwave", "FLUTTERWAVE_SECRET_KEY": "FLWSECK-live"},
            "FLUTTERWAVE_WEBHOOK_HASH",
        ),
        (
            {
                "NAME_ENQUIRY_PROVIDER_LIVE": (
                    "wallets.providers.flutterwave.FlutterwaveNameEnquiryProvider"
                )
            },
            "FLUTTERWAVE_SECRET_KEY",
        ),
        ({"SECRET_KEY": None}, "SECRET_KEY"),
        ({"FIELD_ENCRYPTION_KEYS": None}, "FIELD_ENCRYPTION_KEYS"),
        ({"FIELD_ENCRYPTION_KEYS": ""}, "FIELD_ENCRYPTION_KEYS"),
        ({"FIELD_ENCRYPTION_KEYS": " , "}, "FIELD_ENCRYPTION_KEYS"),
        ({"FIELD_ENCRYPTION_KEYS": DEVELOPMENT_ENCRYPTION_KEY}, "FIELD_ENCRYPTION_KEYS"),
        (
            {"FIELD_ENCRYPTION_KEYS": f"{ANOTHER_ENCRYPTION_KEY},{DEVELOPMENT_ENCRYPTION_KEY}"},
            "FIELD_ENCRYPTION_KEYS",
        ),
        (
            {"FIELD_ENCRYPTION_KEYS": f"{ANOTHER_ENCRYPTION_KEY},not-a-fernet-key"},
            "FIELD_ENCRYPTION_KEYS: key 2 of 2 is not a Fernet key",
        ),
    ],
    ids=[
        "funding-secret-unset",
        "funding-secret-development-default",
        "funding-secret-empty",
        "funding-secret-blank",
        "paystack-key-unset",
        "paystack-key-empty",
        "paystack-live-payouts-without-key",
        "paystack-live-collections-without-key",
        "paystack-live-refunds-without-key",
        "flutterwave-live-payouts-without-key",
        "flutterwave-live-payouts-without-webhook-hash",
        "flutterwave-live-name-enquiry-without-key",
        "secret-key-default",
        "encryption-keys-unset",
        "encryption-keys-empty",
        "encryption-keys-blank",
        "encryption-keys-development-default",
        "encryption-keys-holding-the-development-default",
        "encryption-keys-malformed",
    ],
)
@pytest.mark.parametrize("settings_module", ["config.settings.production", "config.settings.local"])
def test_debug_off_refuses_to_start(
    overrides: dict[str, str | None], named: str, settings_module: str, tmp_path: Path
) -> None:
    result = _start(
        {**overrides, "DJANGO_SETTINGS_MODULE": settings_module, "DEBUG": "0"}, tmp_path
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert named in result.stderr


def test_the_refusal_never_prints_the_configured_secrets(tmp_path: Path) -> None:
    result = _start({"FUNDING_WEBHOOK_SECRET": DEVELOPMENT_FUNDING_SECRET}, tmp_path)
    assert result.returncode != 0
    assert DOCUMENTED_ENVIRONMENT["PAYSTACK_SECRET_KEY"] not in result.stderr
    assert DOCUMENTED_ENVIRONMENT["SECRET_KEY"] not in result.stderr
    assert DOCUMENTED_ENVIRONMENT["FIELD_ENCRYPTION_KEYS"] not in result.stderr


def test_the_encryption_key_refusal_never_prints_a_key(tmp_path: Path) -> None:
    result = _start(
        {"FIELD_ENCRYPTION_KEYS": f"{ANOTHER_ENCRYPTION_KEY},not-a-fernet-key"}, tmp_path
    )
    assert result.returncode != 0
    assert "FIELD_ENCRYPTION_KEYS" in result.stderr
    assert ANOTHER_ENCRYPTION_KEY not in result.stderr
    assert "not-a-fernet-key" not in result.stderr


def test_production_starts_with_the_new_key_first_and_the_old_one_after(tmp_path: Path) -> None:
    keys = f"{ANOTHER_ENCRYPTION_KEY},{DOCUMENTED_ENVIRONMENT['FIELD_ENCRYPTION_KEYS']}"
    result = _start({"FIELD_ENCRYPTION_KEYS": keys}, tmp_path)
    assert result.returncode == 0, result.stderr


def test_manage_check_deploy_fails_on_the_development_funding_secret(tmp_path: Path) -> None:
    result = _run(
        ["manage.py", "check", "--deploy", "--settings=config.settings.production"],
        {"FUNDING_WEBHOOK_SECRET": DEVELOPMENT_FUNDING_SECRET},
        tmp_path,
    )
    assert result.returncode != 0
    assert "FUNDING_WEBHOOK_SECRET" in result.stderr


# --- starts ----------------------------------------------------------------------------------


def test_production_starts_with_the_documented_environment(tmp_path: Path) -> None:
    shown = _shown(_start({}, tmp_path))
    assert shown["DEBUG"] is False
    assert shown["OTP_REQUIRED"] is True


def test_without_paystack_in_live_mode_no_paystack_key_is_needed(tmp_path: Path) -> None:
    result = _start(
        {
            "PAYSTACK_SECRET_KEY": None,
            "PAYOUT_PROVIDER_LIVE": "sandbox",
            "COLLECTION_PROVIDER_LIVE": "sandbox",
            "REFUND_PROVIDER_LIVE": "sandbox",
        },
        tmp_path,
    )
    assert result.returncode == 0, result.stderr


def test_flutterwave_for_live_payouts_starts_with_its_key_and_hash(tmp_path: Path) -> None:
    result = _start(
        {
            "PAYOUT_PROVIDER_LIVE": "flutterwave",
            "FLUTTERWAVE_SECRET_KEY": "FLWSECK-live-key-for-the-checks",
            "FLUTTERWAVE_WEBHOOK_HASH": "flw-dashboard-hash-for-the-checks",
        },
        tmp_path,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("settings_module", ["config.settings.local", "config.settings.test"])
def test_development_and_test_settings_start_without_configuration(
    settings_module: str, tmp_path: Path
) -> None:
    result = _start(
        {
            "DJANGO_SETTINGS_MODULE": settings_module,
            "SECRET_KEY": None,
            "FUNDING_WEBHOOK_SECRET": None,
            "PAYSTACK_SECRET_KEY": None,
            "FIELD_ENCRYPTION_KEYS": None,
            "ALLOWED_HOSTS": None,
            "CSRF_TRUSTED_ORIGINS": None,
            "CHECKOUT_BASE_URL": None,
        },
        tmp_path,
    )
    shown = _shown(result)
    assert shown["OTP_REQUIRED"] is False


def test_manage_check_deploy_is_clean_with_the_documented_environment(tmp_path: Path) -> None:
    result = _run(
        [
            "manage.py",
            "check",
            "--deploy",
            "--fail-level",
            "WARNING",
            "--settings=config.settings.production",
        ],
        {},
        tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


# --- transport security ----------------------------------------------------------------------


def test_production_turns_on_hsts_and_the_https_redirect_by_default(tmp_path: Path) -> None:
    shown = _shown(_start({}, tmp_path))
    assert shown["SECURE_HSTS_SECONDS"] >= 31_536_000
    assert shown["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert shown["SECURE_HSTS_PRELOAD"] is True
    assert shown["SECURE_SSL_REDIRECT"] is True
    # Load-balancer probes over plain HTTP are answered, not redirected.
    assert shown["SECURE_REDIRECT_EXEMPT"] == [r"^healthz$", r"^readyz$"]


def test_hsts_and_the_redirect_follow_the_environment(tmp_path: Path) -> None:
    shown = _shown(
        _start(
            {
                "SECURE_HSTS_SECONDS": "3600",
                "SECURE_HSTS_INCLUDE_SUBDOMAINS": "0",
                "SECURE_HSTS_PRELOAD": "0",
                "SECURE_SSL_REDIRECT": "0",
                "OTP_REQUIRED": "0",
            },
            tmp_path,
        )
    )
    assert shown["SECURE_HSTS_SECONDS"] == 3600
    assert shown["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is False
    assert shown["SECURE_HSTS_PRELOAD"] is False
    assert shown["SECURE_SSL_REDIRECT"] is False
    assert shown["OTP_REQUIRED"] is False


def test_production_redirects_plain_http_and_sends_hsts_over_https(tmp_path: Path) -> None:
    script = (
        "import json, django; django.setup(); from django.test import Client;"
        "c = Client(HTTP_HOST='pay.example.com');"
        "plain = c.get('/api/v1/transactions/bank');"
        "probe = c.get('/healthz');"
        "secure = c.get('/healthz', HTTP_X_FORWARDED_PROTO='https');"
        "print(json.dumps([plain.status_code, plain.get('Location'), probe.status_code,"
        " secure.get('Strict-Transport-Security')]))"
    )
    result = _run(["-c", script], {}, tmp_path)
    assert result.returncode == 0, result.stderr
    plain_status, location, probe_status, hsts = json.loads(result.stdout.splitlines()[-1])
    assert plain_status == 301
    assert location == "https://pay.example.com/api/v1/transactions/bank"
    assert probe_status == 200
    assert hsts == "max-age=31536000; includeSubDomains; preload"
