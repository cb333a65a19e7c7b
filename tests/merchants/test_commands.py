from __future__ import annotations

import io
import json

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from merchants.models import Mode, SecretKey, WebhookSettings
from merchants.selectors import secret_key_get_active
from merchants.services import merchant_create, webhook_secret_rotate
from tests.merchants.factories import WebhookSettingsFactory

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


# --- encryption_keys_rotate ------------------------------------------------------------------

KEY_OLD = Fernet.generate_key().decode()
KEY_NEW = Fernet.generate_key().decode()
KEY_LOST = Fernet.generate_key().decode()


def _rotate(*args: str) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command("encryption_keys_rotate", *args, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


def test_encryption_keys_rotate_moves_every_secret_to_the_new_key(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_OLD]
    rows = WebhookSettingsFactory.create_batch(3)
    secrets = {row.pk: row.secret for row in rows}

    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW, KEY_OLD]
    out, err = _rotate()

    assert out.splitlines() == [
        "merchants.WebhookSettings.secret: 3 value(s): 3 re-encrypted from another key, "
        "0 plaintext encrypted, 0 already under the first key; 0 unreadable.",
        "merchants.WebhookSettings.previous_secret: 0 value(s): 0 re-encrypted from another "
        "key, 0 plaintext encrypted, 0 already under the first key; 0 unreadable.",
        "Re-encrypted under the first of 2 key(s) in FIELD_ENCRYPTION_KEYS: 3 stored value(s) "
        "in 2 field(s); 0 unreadable.",
    ]
    assert "3/3 values" in err
    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW]
    assert {row.pk: row.secret for row in WebhookSettings.objects.all()} == secrets


def test_encryption_keys_rotate_moves_previous_secrets_too(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_OLD]
    row = WebhookSettingsFactory()
    rotated = webhook_secret_rotate(merchant=row.merchant, mode=row.mode)
    assert rotated.previous_secret == row.secret

    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW, KEY_OLD]
    _rotate("--no-progress")

    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW]
    reread = WebhookSettings.objects.get(pk=row.pk)
    assert (reread.secret, reread.previous_secret) == (rotated.secret, row.secret)


def test_encryption_keys_rotate_again_changes_nothing(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW]
    WebhookSettingsFactory()
    out, _err = _rotate("--json", "--no-progress")
    assert json.loads(out) == {
        "keys": 1,
        "values": 1,
        "unreadable": 0,
        "cleared": 0,
        "fields": [
            {
                "field": "merchants.WebhookSettings.secret",
                "values": 1,
                "current": 1,
                "reencrypted": 0,
                "encrypted": 0,
                "unreadable": [],
                "cleared": [],
            },
            {
                "field": "merchants.WebhookSettings.previous_secret",
                "values": 0,
                "current": 0,
                "reencrypted": 0,
                "encrypted": 0,
                "unreadable": [],
                "cleared": [],
            },
        ],
        "ok": True,
    }


def test_encryption_keys_rotate_is_audited_without_values(settings) -> None:  # type: ignore[no-untyped-def]
    from audit.models import AuditRecord

    settings.FIELD_ENCRYPTION_KEYS = [KEY_OLD]
    row = WebhookSettingsFactory()
    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW, KEY_OLD]
    _rotate("--no-progress")

    record = AuditRecord.objects.get(
        action="merchants.webhooksettings.encryption_keys_rotate",
        after__field="merchants.WebhookSettings.secret",
    )
    assert record.actor_label.startswith("manage.py encryption_keys_rotate (")
    assert record.object_type == "merchants.webhooksettings"
    assert record.after["values"] == 1
    assert record.after["reencrypted"] == 1
    assert record.after["unreadable"] == 0
    recorded = json.dumps([record.before, record.after, record.reason])
    for hidden in (row.secret, KEY_OLD, KEY_NEW):
        assert hidden not in recorded


def test_encryption_keys_rotate_exits_1_naming_rows_no_key_decrypts(settings, capsys) -> None:  # type: ignore[no-untyped-def]
    from django.core.management import ManagementUtility

    settings.FIELD_ENCRYPTION_KEYS = [KEY_LOST]
    lost = WebhookSettingsFactory()
    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW, KEY_OLD]
    WebhookSettingsFactory()

    with pytest.raises(SystemExit) as exited:
        ManagementUtility(["manage.py", "encryption_keys_rotate", "--no-progress"]).execute()

    assert exited.value.code == 1
    captured = capsys.readouterr()
    assert (
        f"Unreadable: merchants.WebhookSettings.secret, row(s) {lost.pk}: no key in "
        "FIELD_ENCRYPTION_KEYS decrypts them." in captured.out
    )
    assert captured.out.splitlines()[-1].endswith(
        "1 unreadable. Keep the old keys, add the missing one and run again."
    )
    assert (
        "CommandError: 1 stored value(s) cannot be decrypted with any key in "
        "FIELD_ENCRYPTION_KEYS" in captured.err
    )
    assert lost.secret not in captured.out + captured.err


def test_encryption_keys_rotate_refuses_malformed_keys_before_anything(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW, "short"]
    stdout = io.StringIO()
    with pytest.raises(CommandError, match="key 2 of 2 is not a Fernet key") as raised:
        call_command("encryption_keys_rotate", stdout=stdout, stderr=io.StringIO())
    assert stdout.getvalue() == ""
    assert KEY_NEW not in str(raised.value)


def test_encryption_keys_rotate_can_clear_values_whose_key_is_lost(settings) -> None:  # type: ignore[no-untyped-def]
    from audit.models import AuditRecord

    settings.FIELD_ENCRYPTION_KEYS = [KEY_LOST]
    lost = WebhookSettingsFactory()
    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW]
    kept = WebhookSettingsFactory()

    out, _err = _rotate("--clear-unreadable", "--no-progress")

    lines = out.splitlines()
    assert (
        f"Cleared: merchants.WebhookSettings.secret, row(s) {lost.pk}: no key decrypted them; "
        "they are empty now (issue new webhook secrets for them)."
    ) in lines
    assert lines[-1] == (
        "Re-encrypted under the first of 1 key(s) in FIELD_ENCRYPTION_KEYS: 2 stored value(s) "
        "in 2 field(s); 0 unreadable, 1 cleared."
    )
    assert WebhookSettings.objects.get(pk=lost.pk).secret == ""
    assert WebhookSettings.objects.get(pk=kept.pk).secret == kept.secret
    record = AuditRecord.objects.get(
        action="merchants.webhooksettings.encryption_keys_rotate",
        after__field="merchants.WebhookSettings.secret",
    )
    assert record.after["cleared"] == [str(lost.pk)]
    rotated = webhook_secret_rotate(merchant=lost.merchant, mode=lost.mode)
    assert rotated.secret.startswith("whsec_")
