"""Deliveries sign with the plaintext of the webhook secret, which is stored encrypted at rest:
the signature a merchant verifies with the secret it was shown is the one sent, before and after
a rotation of the encryption key; the ciphertext never signs and never reaches the receiver."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection

from collections_app.models import PaymentStatus
from collections_app.services import transaction_confirm
from core.crypto import STORED_PREFIX, EncryptionKeyError
from merchants.models import Merchant, Mode, WebhookSettings
from merchants.services import webhook_settings_set
from tests.collections_app.factories import CollectionTransactionFactory
from tests.collections_app.helpers import ReceivedRequest, RecordingReceiver, hmac_sha512_hex
from webhooks.deliveries import webhook_deliveries_create_each, webhook_delivery_attempt
from webhooks.models import DeliveryTarget, Event

pytestmark = pytest.mark.django_db

KEY_OLD = Fernet.generate_key().decode()
KEY_NEW = Fernet.generate_key().decode()


@pytest.fixture
def receiver(settings: Any) -> Iterator[RecordingReceiver]:
    settings.CALLBACK_URL_ALLOW_PRIVATE = True
    server = RecordingReceiver().start()
    yield server
    server.stop()


def _stored_secret(row: WebhookSettings) -> str:
    table = connection.ops.quote_name(WebhookSettings._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT secret FROM {table} WHERE id = %s", [row.pk])  # noqa: S608
        return cursor.fetchone()[0]


def _deliver_paid_event(merchant: Merchant, receiver: RecordingReceiver) -> ReceivedRequest:
    txn = CollectionTransactionFactory(merchant=merchant, callback_url="")
    transaction_confirm(collection=txn, outcome=PaymentStatus.PAID, gateway_reference="SBX_7")
    event = Event.objects.get(transaction=txn)
    webhook_delivery_attempt(delivery_id=event.deliveries.get(target=DeliveryTarget.WEBHOOK_URL).pk)
    [received] = [r for r in receiver.received("POST") if r.body == event.body_bytes]
    return received


def test_a_delivery_is_signed_with_the_plaintext_secret(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    row = webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/hooks"))
    issued_secret = row.secret  # what the merchant was shown
    stored = _stored_secret(row)
    assert stored.startswith(STORED_PREFIX)
    assert issued_secret not in stored

    received = _deliver_paid_event(merchant, receiver)

    signature = received.header("X-Webhook-Signature")
    assert signature == hmac_sha512_hex(received.body, issued_secret)
    assert signature != hmac_sha512_hex(received.body, stored)
    assert stored not in str(received.headers)
    assert issued_secret not in str(received.headers)


def test_deliveries_sign_the_same_after_the_key_is_rotated(
    merchant: Merchant, receiver: RecordingReceiver, settings: Any
) -> None:
    settings.FIELD_ENCRYPTION_KEYS = [KEY_OLD]
    row = webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/hooks"))
    issued_secret = row.secret
    under_old_key = _stored_secret(row)

    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW, KEY_OLD]
    call_command("encryption_keys_rotate", "--no-progress", stdout=io.StringIO())
    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW]

    assert _stored_secret(row) != under_old_key
    received = _deliver_paid_event(merchant, receiver)
    assert received.header("X-Webhook-Signature") == hmac_sha512_hex(received.body, issued_secret)


def test_recording_an_event_never_decrypts_the_secret(
    merchant: Merchant, receiver: RecordingReceiver, settings: Any
) -> None:
    """The money path records events and their chains with the webhook URL alone: a host
    missing the key still settles; only the send fails, naming the setting."""
    settings.FIELD_ENCRYPTION_KEYS = [KEY_OLD]
    row = webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/hooks"))
    settings.FIELD_ENCRYPTION_KEYS = [KEY_NEW]  # KEY_OLD is missing here

    txn = CollectionTransactionFactory(merchant=merchant, callback_url="")
    transaction_confirm(collection=txn, outcome=PaymentStatus.PAID, gateway_reference="SBX_8")

    txn.refresh_from_db()
    assert txn.payment_status == PaymentStatus.PAID
    event = Event.objects.get(transaction=txn)
    delivery = event.deliveries.get(target=DeliveryTarget.WEBHOOK_URL)
    assert delivery.url == receiver.url("/hooks")
    # The batch path (payouts settled in a dispatch batch) reads the URLs alone too.
    event.deliveries.all().delete()
    [delivery] = webhook_deliveries_create_each(events=[event])
    assert delivery.url == receiver.url("/hooks")
    with pytest.raises(EncryptionKeyError) as raised:
        webhook_delivery_attempt(delivery_id=delivery.pk)
    assert "merchants.WebhookSettings.secret" in str(raised.value)
    assert "FIELD_ENCRYPTION_KEYS" in str(raised.value)
    assert row.secret not in str(raised.value)
    assert receiver.received("POST") == []
