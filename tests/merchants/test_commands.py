from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from merchants.models import Mode, SecretKey
from merchants.selectors import secret_key_get_active
from merchants.services import merchant_create

pytestmark = pytest.mark.django_db


def _seed_json(*args: str) -> dict:
    stdout = io.StringIO()
    call_command("seed_demo", "--json", *args, stdout=stdout)
    return json.loads(stdout.getvalue())


def test_rotate_secret_key_prints_the_new_key_once_and_revokes_the_old() -> None:
    created = merchant_create(name="Ops Test", email="ops@example.com")
    stdout = io.StringIO()
    call_command(
        "rotate_secret_key",
        "--merchant",
        str(created.merchant.pk),
        "--mode",
        "live",
        stdout=stdout,
        stderr=io.StringIO(),
    )
    new_key = stdout.getvalue().strip()
    assert new_key.startswith("sk_live_")
    assert secret_key_get_active(plaintext=new_key) is not None
    assert secret_key_get_active(plaintext=created.live_key.plaintext) is None
    assert SecretKey.objects.filter(merchant=created.merchant, mode=Mode.LIVE).count() == 2


def test_rotate_secret_key_writes_the_audit_trail_without_the_key() -> None:
    from audit.models import AuditRecord

    created = merchant_create(name="Ops Audit", email="ops-audit@example.com")
    stdout = io.StringIO()
    call_command(
        "rotate_secret_key",
        "--merchant",
        str(created.merchant.pk),
        "--mode",
        "live",
        "--reason",
        "key pasted in a support ticket",
        stdout=stdout,
        stderr=io.StringIO(),
    )
    record = AuditRecord.objects.get(action="merchants.merchant.rotate_secret_key")
    assert record.reason == "key pasted in a support ticket"
    assert record.actor_label.startswith("manage.py rotate_secret_key")
    assert record.before["key_prefix"] == created.live_key.secret_key.prefix
    new_key = stdout.getvalue().strip()
    assert new_key not in str(record.before) + str(record.after)
    assert created.live_key.plaintext not in str(record.before) + str(record.after)


def test_rotate_secret_key_unknown_merchant_fails() -> None:
    with pytest.raises(CommandError):
        call_command("rotate_secret_key", "--merchant", "999999", "--mode", "test")


def test_seed_demo_json_prints_working_credentials(api_client) -> None:
    seeded = _seed_json()
    assert secret_key_get_active(plaintext=seeded["secret_key"]).mode == Mode.TEST
    assert secret_key_get_active(plaintext=seeded["live_secret_key"]).mode == Mode.LIVE
    assert seeded["webhook_secret"].startswith("whsec_")
    assert isinstance(seeded["merchant_id"], int)


def test_seed_demo_always_creates_a_new_merchant() -> None:
    assert _seed_json()["merchant_id"] != _seed_json()["merchant_id"]


def test_seed_demo_sets_the_webhook_url() -> None:
    from merchants.models import WebhookSettings

    seeded = _seed_json("--webhook-url", "https://merchant.example.com/hooks")
    row = WebhookSettings.objects.get(merchant_id=seeded["merchant_id"], mode=Mode.TEST)
    assert row.url == "https://merchant.example.com/hooks"
    assert row.secret == seeded["webhook_secret"]
