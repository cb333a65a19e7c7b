"""The webhook signing secret is stored encrypted under FIELD_ENCRYPTION_KEYS: the column becomes
text (a Fernet token is longer than the 100 characters it held) and every plaintext secret is
encrypted under the first key. Reversed, every secret is decrypted back to plaintext first."""

from django.db import migrations

import core.fields


def secrets_encrypt(apps, schema_editor):
    WebhookSettings = apps.get_model("merchants", "WebhookSettings")
    core.fields.encrypted_field_rotate(
        WebhookSettings, "secret", using=schema_editor.connection.alias
    )


def secrets_decrypt(apps, schema_editor):
    WebhookSettings = apps.get_model("merchants", "WebhookSettings")
    core.fields.encrypted_field_decrypt(
        WebhookSettings, "secret", using=schema_editor.connection.alias
    )


class Migration(migrations.Migration):

    dependencies = [
        ("merchants", "0002_admin_permissions"),
    ]

    operations = [
        migrations.AlterField(
            model_name="webhooksettings",
            name="secret",
            field=core.fields.EncryptedTextField(blank=True, default=""),
        ),
        migrations.RunPython(secrets_encrypt, secrets_decrypt, elidable=False),
    ]
