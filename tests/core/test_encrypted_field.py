"""``core.fields.EncryptedTextField`` and ``core.crypto``: values are encrypted at rest under
``FIELD_ENCRYPTION_KEYS`` and read back as plaintext; keys rotate (new key first, re-encrypt,
drop the old one); a value no key decrypts is a clear error naming the setting and the field,
never the value or a key. The webhook signing secret is the field's user."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from cryptography.fernet import Fernet
from django.core import serializers
from django.core.exceptions import FieldError, ImproperlyConfigured
from django.core.management import call_command
from django.db import connection, transaction

from core.crypto import (
    STORED_PREFIX,
    EncryptionKeyError,
    ValueState,
    development_key,
    encryption_keys_parse,
    encryption_keys_problem,
    value_decrypt,
    value_encrypt,
    value_reencrypt,
)
from core.fields import encrypted_field_decrypt, encrypted_field_rotate, encrypted_fields
from merchants.models import WebhookSettings
from tests.merchants.factories import MerchantFactory, WebhookSettingsFactory

KEY_A = Fernet.generate_key().decode()
KEY_B = Fernet.generate_key().decode()
KEY_UNRELATED = Fernet.generate_key().decode()
SECRET = "whsec_4pV1cF9bYh2Qm7XzK0sLt6RwN3eJ8aDuG5oTiZyB1c"


def _raw_secret(pk: int) -> str:
    """The column as PostgreSQL holds it, read past the ORM."""
    table = connection.ops.quote_name(WebhookSettings._meta.db_table)
    column = connection.ops.quote_name("secret")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [pk])  # noqa: S608
        return cursor.fetchone()[0]


def _raw_secret_write(pk: int, value: str) -> None:
    table = connection.ops.quote_name(WebhookSettings._meta.db_table)
    column = connection.ops.quote_name("secret")
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {column} = %s WHERE id = %s", [value, pk])  # noqa: S608


# --- the field --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_secret_reads_back_as_written() -> None:
    row = WebhookSettingsFactory(secret=SECRET)
    assert WebhookSettings.objects.get(pk=row.pk).secret == SECRET
    assert WebhookSettings.objects.filter(pk=row.pk).values_list("secret", flat=True).get() == (
        SECRET
    )


@pytest.mark.django_db
def test_the_column_holds_no_plaintext() -> None:
    row = WebhookSettingsFactory(secret=SECRET)
    stored = _raw_secret(row.pk)
    assert stored.startswith(STORED_PREFIX)
    assert SECRET not in stored
    assert SECRET[len("whsec_") :][:12] not in stored


@pytest.mark.django_db
def test_every_write_encrypts_afresh() -> None:
    first = WebhookSettingsFactory(secret=SECRET)
    second = WebhookSettingsFactory(secret=SECRET)
    assert _raw_secret(first.pk) != _raw_secret(second.pk)


@pytest.mark.django_db
def test_update_and_bulk_update_encrypt_too() -> None:
    row = WebhookSettingsFactory(secret="whsec_before")
    WebhookSettings.objects.filter(pk=row.pk).update(secret=SECRET)
    assert _raw_secret(row.pk).startswith(STORED_PREFIX)
    row.secret = "whsec_bulk_written"
    WebhookSettings.objects.bulk_update([row], ["secret"])
    assert "whsec_bulk_written" not in _raw_secret(row.pk)
    assert WebhookSettings.objects.get(pk=row.pk).secret == "whsec_bulk_written"


@pytest.mark.django_db
def test_no_secret_is_stored_as_empty() -> None:
    row = WebhookSettingsFactory(secret="")
    assert _raw_secret(row.pk) == ""
    assert WebhookSettings.objects.get(pk=row.pk).secret == ""


@pytest.mark.django_db
def test_a_legacy_plaintext_value_reads_as_it_is() -> None:
    row = WebhookSettingsFactory()
    _raw_secret_write(row.pk, SECRET)
    assert WebhookSettings.objects.get(pk=row.pk).secret == SECRET


@pytest.mark.django_db
def test_only_empty_and_null_can_be_looked_up() -> None:
    row = WebhookSettingsFactory(secret=SECRET)
    empty = WebhookSettingsFactory(secret="")
    assert list(WebhookSettings.objects.filter(secret="")) == [empty]
    assert list(WebhookSettings.objects.exclude(secret="")) == [row]
    assert not WebhookSettings.objects.filter(secret__isnull=True).exists()
    with pytest.raises(FieldError, match="merchants.WebhookSettings.secret is encrypted"):
        WebhookSettings.objects.filter(secret=SECRET).exists()
    with pytest.raises(FieldError):
        WebhookSettings.objects.filter(secret__startswith="whsec_").exists()


@pytest.mark.django_db
def test_serialised_rows_hold_the_encrypted_form_and_load_back() -> None:
    row = WebhookSettingsFactory(secret=SECRET)
    dumped = serializers.serialize("json", WebhookSettings.objects.filter(pk=row.pk))
    assert SECRET not in dumped
    assert STORED_PREFIX in dumped
    WebhookSettings.objects.filter(pk=row.pk).update(secret="whsec_overwritten")
    for loaded in serializers.deserialize("json", dumped):
        assert loaded.object.secret == SECRET
        loaded.save()
    assert WebhookSettings.objects.get(pk=row.pk).secret == SECRET


def test_the_webhook_secrets_are_the_encrypted_fields() -> None:
    assert [f"{f.model._meta.label}.{f.name}" for f in encrypted_fields()] == [
        "merchants.WebhookSettings.secret",
        "merchants.WebhookSettings.previous_secret",
    ]


# --- keys and rotation -----------------------------------------------------------------------


@pytest.mark.django_db
def test_values_under_the_old_key_read_after_the_new_key_is_prepended(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    row = WebhookSettingsFactory(secret=SECRET)
    under_a = _raw_secret(row.pk)

    settings.FIELD_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    assert WebhookSettings.objects.get(pk=row.pk).secret == SECRET
    assert _raw_secret(row.pk) == under_a  # reading rewrites nothing


@pytest.mark.django_db
def test_rotation_re_encrypts_so_the_new_key_alone_reads(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    rows = [WebhookSettingsFactory(secret=f"{SECRET}{index}") for index in range(5)]
    empty = WebhookSettingsFactory(secret="")

    settings.FIELD_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    rotation = encrypted_field_rotate(WebhookSettings, "secret", batch_size=2)
    assert rotation.values == 5
    assert rotation.states == {
        ValueState.REENCRYPTED: 5,
        ValueState.ENCRYPTED: 0,
        ValueState.CURRENT: 0,
    }
    assert rotation.unreadable == []

    settings.FIELD_ENCRYPTION_KEYS = [KEY_B]
    for index, row in enumerate(rows):
        assert WebhookSettings.objects.get(pk=row.pk).secret == f"{SECRET}{index}"
    assert _raw_secret(empty.pk) == ""


@pytest.mark.django_db
def test_rotation_leaves_values_under_the_first_key_and_encrypts_plaintext(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    current = WebhookSettingsFactory(secret=SECRET)
    legacy = WebhookSettingsFactory()
    _raw_secret_write(legacy.pk, "whsec_legacy_plaintext")
    before = _raw_secret(current.pk)

    rotation = encrypted_field_rotate(WebhookSettings, "secret")

    assert rotation.states[ValueState.CURRENT] == 1
    assert rotation.states[ValueState.ENCRYPTED] == 1
    assert _raw_secret(current.pk) == before
    assert _raw_secret(legacy.pk).startswith(STORED_PREFIX)
    assert WebhookSettings.objects.get(pk=legacy.pk).secret == "whsec_legacy_plaintext"


@pytest.mark.django_db
def test_a_value_under_an_unrelated_key_is_a_clear_error(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    row = WebhookSettingsFactory(secret=SECRET)

    settings.FIELD_ENCRYPTION_KEYS = [KEY_UNRELATED]
    with pytest.raises(EncryptionKeyError) as raised:
        WebhookSettings.objects.get(pk=row.pk)
    message = str(raised.value)
    assert "merchants.WebhookSettings.secret" in message
    assert "FIELD_ENCRYPTION_KEYS" in message
    for hidden in (SECRET, KEY_A, KEY_UNRELATED, _raw_secret(row.pk)):
        assert hidden not in message
    assert raised.value.__cause__ is None
    assert isinstance(raised.value, ImproperlyConfigured)


@pytest.mark.django_db
def test_rotation_names_the_rows_no_key_decrypts_and_leaves_them(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_UNRELATED]
    lost = WebhookSettingsFactory(secret=SECRET)
    lost_stored = _raw_secret(lost.pk)
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    readable = WebhookSettingsFactory(secret="whsec_readable")

    rotation = encrypted_field_rotate(WebhookSettings, "secret")

    assert rotation.unreadable == [str(lost.pk)]
    assert rotation.states[ValueState.CURRENT] == 1
    assert _raw_secret(lost.pk) == lost_stored
    assert WebhookSettings.objects.get(pk=readable.pk).secret == "whsec_readable"


@pytest.mark.django_db
def test_decrypting_writes_plaintext_back(settings) -> None:  # type: ignore[no-untyped-def]
    row = WebhookSettingsFactory(secret=SECRET)
    assert encrypted_field_decrypt(WebhookSettings, "secret") == 1
    assert _raw_secret(row.pk) == SECRET


@pytest.mark.django_db
def test_without_any_key_nothing_is_written(settings) -> None:  # type: ignore[no-untyped-def]
    merchant = MerchantFactory()
    settings.FIELD_ENCRYPTION_KEYS = []
    with (
        pytest.raises(EncryptionKeyError, match="FIELD_ENCRYPTION_KEYS is empty"),
        transaction.atomic(),
    ):
        WebhookSettingsFactory(merchant=merchant, secret=SECRET)
    assert not WebhookSettings.objects.exists()


# --- core.crypto -----------------------------------------------------------------------------


def test_a_malformed_key_is_named_by_its_position_only(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A, "not-a-fernet-key-at-all"]
    with pytest.raises(EncryptionKeyError) as raised:
        value_encrypt(SECRET)
    message = str(raised.value)
    assert "FIELD_ENCRYPTION_KEYS: key 2 of 2 is not a Fernet key" in message
    assert "not-a-fernet-key-at-all" not in message
    assert KEY_A not in message


def test_keys_are_parsed_from_a_comma_separated_list() -> None:
    assert encryption_keys_parse(f" {KEY_B} ,{KEY_A},, ") == [KEY_B, KEY_A]
    assert encryption_keys_parse([f"{KEY_B} ", ""]) == [KEY_B]
    assert encryption_keys_problem([KEY_B, KEY_A]) is None
    assert encryption_keys_problem([]) is not None


def test_the_development_key_is_a_fixed_fernet_key(settings) -> None:  # type: ignore[no-untyped-def]
    assert development_key() == development_key()
    assert encryption_keys_problem([development_key()]) is None
    assert development_key() == settings.DEFAULT_FIELD_ENCRYPTION_KEY


def test_the_first_key_encrypts_and_every_key_decrypts(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A, KEY_B]
    stored = value_encrypt(SECRET)
    assert Fernet(KEY_A).decrypt(stored[len(STORED_PREFIX) :].encode()).decode() == SECRET
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B]
    with pytest.raises(EncryptionKeyError):
        value_decrypt(stored)
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    assert value_decrypt(stored) == SECRET


def test_reencrypting_reports_what_it_found(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    under_a = value_encrypt(SECRET)
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    under_b, state = value_reencrypt(under_a)
    assert state == ValueState.REENCRYPTED
    assert value_reencrypt(under_b) == (under_b, ValueState.CURRENT)
    encrypted, state = value_reencrypt("whsec_plain")
    assert state == ValueState.ENCRYPTED
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B]
    assert value_decrypt(under_b) == SECRET
    assert value_decrypt(encrypted) == "whsec_plain"


def test_an_altered_value_is_unreadable(settings) -> None:  # type: ignore[no-untyped-def]
    stored = value_encrypt(SECRET)
    for altered in (stored[:-4] + "AAAA", STORED_PREFIX + "é" + stored[len(STORED_PREFIX) :]):
        with pytest.raises(EncryptionKeyError, match="cannot be decrypted"):
            value_decrypt(altered, label="merchants.WebhookSettings.secret")


# --- the ops command ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_command_prints_no_value_or_key(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [KEY_A]
    WebhookSettingsFactory(secret=SECRET)
    settings.FIELD_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    out, err = StringIO(), StringIO()
    call_command("encryption_keys_rotate", "--json", stdout=out, stderr=err)
    printed = out.getvalue() + err.getvalue()
    for hidden in (SECRET, KEY_A, KEY_B, STORED_PREFIX):
        assert hidden not in printed
    assert json.loads(out.getvalue())["ok"] is True
