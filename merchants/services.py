"""Merchant writes: creation, key issuance and rotation, webhook settings."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from merchants.keys import (
    secret_key_generate,
    secret_key_hash,
    secret_key_prefix,
    webhook_secret_generate,
)
from merchants.models import Merchant, Mode, SecretKey, WebhookSettings
from merchants.signals import merchant_created


@dataclass(frozen=True)
class IssuedKey:
    """A freshly issued key; ``plaintext`` exists only here and is never stored."""

    secret_key: SecretKey
    plaintext: str


@dataclass(frozen=True)
class MerchantCreated:
    merchant: Merchant
    test_key: IssuedKey
    live_key: IssuedKey


def secret_key_issue(*, merchant: Merchant, mode: str) -> IssuedKey:
    plaintext = secret_key_generate(mode=mode)
    secret_key = SecretKey.objects.create(
        merchant=merchant,
        mode=mode,
        key_hash=secret_key_hash(plaintext),
        prefix=secret_key_prefix(plaintext),
    )
    return IssuedKey(secret_key=secret_key, plaintext=plaintext)


@transaction.atomic
def merchant_create(*, name: str, email: str) -> MerchantCreated:
    """Creates the merchant with a test and a live key; ``merchant_created`` has the wallets app
    open a wallet per mode in the same transaction."""
    merchant = Merchant.objects.create(name=name, email=email)
    test_key = secret_key_issue(merchant=merchant, mode=Mode.TEST)
    live_key = secret_key_issue(merchant=merchant, mode=Mode.LIVE)
    merchant_created.send(sender=Merchant, merchant=merchant)
    return MerchantCreated(merchant=merchant, test_key=test_key, live_key=live_key)


@transaction.atomic
def secret_key_rotate(*, merchant: Merchant, mode: str) -> IssuedKey:
    """Revokes the merchant's active key of this mode and issues a new one."""
    Merchant.objects.select_for_update().get(pk=merchant.pk)
    SecretKey.objects.filter(merchant=merchant, mode=mode, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    return secret_key_issue(merchant=merchant, mode=mode)


@transaction.atomic
def webhook_settings_set(
    *, merchant: Merchant, mode: str, url: str, rotate_secret: bool = False
) -> WebhookSettings:
    settings_row, created = WebhookSettings.objects.select_for_update().get_or_create(
        merchant=merchant, mode=mode
    )
    settings_row.url = url
    if created or rotate_secret or not settings_row.secret:
        settings_row.secret = webhook_secret_generate()
    settings_row.save()
    return settings_row


@transaction.atomic
def webhook_secret_rotate(*, merchant: Merchant, mode: str) -> WebhookSettings:
    settings_row, _ = WebhookSettings.objects.select_for_update().get_or_create(
        merchant=merchant, mode=mode
    )
    settings_row.secret = webhook_secret_generate()
    settings_row.save(update_fields=["secret", "updated_at"])
    return settings_row
