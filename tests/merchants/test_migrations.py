"""The migration that encrypts webhook secrets at rest encrypts every plaintext secret already
stored under the first key of FIELD_ENCRYPTION_KEYS, leaves empty ones empty, and reversed
writes them back as plaintext."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from core.crypto import STORED_PREFIX
from merchants.models import Mode, WebhookSettings
from tests.merchants.factories import MerchantFactory

PLAINTEXT_SCHEMA = [("merchants", "0002_admin_permissions")]
ENCRYPTED_SCHEMA = [("merchants", "0003_webhook_secret_encrypted")]
KEY = Fernet.generate_key().decode()
SECRET = "whsec_Jm3tQ8vX1cZ6bN0sR4yK7pL2hW9fD5gA3eU8iO1uT"


def _migrate(targets: list[tuple[str, str]] | None = None) -> MigrationExecutor:
    """To ``targets``, or forward to the latest migration of every app."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets if targets is not None else executor.loader.graph.leaf_nodes())
    return executor


def _raw_secrets() -> dict[int, str]:
    table = connection.ops.quote_name(WebhookSettings._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, secret FROM {table}")  # noqa: S608
        return dict(cursor.fetchall())


@pytest.mark.slow  # migrates backwards and forwards: seconds
@pytest.mark.django_db(transaction=True)
def test_plaintext_secrets_are_encrypted_and_decrypted_back(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY]
    merchant = MerchantFactory()
    try:
        old_apps = _migrate(PLAINTEXT_SCHEMA).loader.project_state(PLAINTEXT_SCHEMA).apps
        OldSettings = old_apps.get_model("merchants", "WebhookSettings")
        with_secret = OldSettings.objects.create(
            merchant_id=merchant.pk, mode=Mode.TEST, url="https://m.example.com/h", secret=SECRET
        ).pk
        without = OldSettings.objects.create(merchant_id=merchant.pk, mode=Mode.LIVE, secret="").pk
        assert _raw_secrets() == {with_secret: SECRET, without: ""}

        _migrate(ENCRYPTED_SCHEMA)
        encrypted = _raw_secrets()
        assert encrypted[with_secret].startswith(STORED_PREFIX)
        assert SECRET not in encrypted[with_secret]
        assert encrypted[without] == ""
        # (only the secret: the columns of later migrations do not exist yet)
        assert WebhookSettings.objects.only("secret").get(pk=with_secret).secret == SECRET

        _migrate(PLAINTEXT_SCHEMA)
        assert _raw_secrets() == {with_secret: SECRET, without: ""}
    finally:
        _migrate()

    assert _raw_secrets()[with_secret].startswith(STORED_PREFIX)
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode(), KEY]
    assert WebhookSettings.objects.get(pk=with_secret).secret == SECRET
