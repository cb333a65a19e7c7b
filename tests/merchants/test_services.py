from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from cryptography.fernet import Fernet
from django.utils import timezone

from core.exceptions import ApplicationError, ConflictError
from merchants.models import KeyKind, Merchant, Mode, SecretKey, WebhookSettings
from merchants.selectors import secret_key_get_active
from merchants.services import (
    MAX_ACTIVE_KEYS_PER_MODE,
    merchant_create,
    restricted_key_create,
    secret_key_roll,
    secret_key_rotate,
    webhook_secret_rotate,
    webhook_settings_set,
    webhook_settings_set_recorded,
)
from tests.merchants.factories import RestrictedKeyFactory

pytestmark = pytest.mark.django_db


def test_merchant_create_issues_a_test_and_a_live_key() -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    assert created.test_key.plaintext.startswith("sk_test_")
    assert created.live_key.plaintext.startswith("sk_live_")
    assert created.test_key.secret_key.mode == Mode.TEST
    assert created.live_key.secret_key.mode == Mode.LIVE


def test_keys_carry_at_least_32_random_bytes() -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    random_part = created.test_key.plaintext.removeprefix("sk_test_")
    assert len(random_part) >= 43  # 32 bytes in URL-safe base64


def test_only_the_hash_and_a_short_prefix_are_stored() -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    plaintext = created.test_key.plaintext
    stored = SecretKey.objects.get(pk=created.test_key.secret_key.pk)
    assert stored.key_hash == hashlib.sha256(plaintext.encode()).hexdigest()
    assert stored.prefix == plaintext[:12]
    stored_values = [str(value) for value in SecretKey.objects.values_list().get(pk=stored.pk)]
    assert plaintext not in stored_values


def test_lookup_is_by_hash() -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    found = secret_key_get_active(plaintext=created.live_key.plaintext)
    assert found is not None
    assert found.pk == created.live_key.secret_key.pk
    assert secret_key_get_active(plaintext=created.live_key.plaintext + "x") is None


def test_rotation_revokes_the_old_key_and_issues_a_new_one() -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    issued = secret_key_rotate(merchant=created.merchant, mode=Mode.TEST)
    assert issued.plaintext != created.test_key.plaintext
    assert secret_key_get_active(plaintext=created.test_key.plaintext) is None
    assert secret_key_get_active(plaintext=issued.plaintext) is not None
    assert secret_key_get_active(plaintext=created.live_key.plaintext) is not None


def test_webhook_secret_rotation_changes_the_secret() -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    first = webhook_secret_rotate(merchant=created.merchant, mode=Mode.TEST).secret
    second = webhook_secret_rotate(merchant=created.merchant, mode=Mode.TEST).secret
    assert first.startswith("whsec_")
    assert first != second


# --- the merchant's own key controls --------------------------------------------------------------


def test_staff_rotation_revokes_every_secret_key_of_the_mode_and_leaves_restricted_keys() -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    rolled = secret_key_roll(calling_key=created.test_key.secret_key, expires_in_hours=24)
    restricted = RestrictedKeyFactory(merchant=created.merchant)
    issued = secret_key_rotate(merchant=created.merchant, mode=Mode.TEST)
    assert secret_key_get_active(plaintext=created.test_key.plaintext) is None
    assert secret_key_get_active(plaintext=rolled.issued.plaintext) is None
    assert secret_key_get_active(plaintext=restricted.plaintext) is not None
    assert secret_key_get_active(plaintext=issued.plaintext) is not None
    assert secret_key_get_active(plaintext=created.live_key.plaintext) is not None
    assert SecretKey.objects.get(pk=restricted.pk).kind == KeyKind.RESTRICTED


def test_a_mode_holds_at_most_the_limit_of_answering_keys() -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    RestrictedKeyFactory.create_batch(MAX_ACTIVE_KEYS_PER_MODE - 1, merchant=created.merchant)
    with pytest.raises(ConflictError):
        restricted_key_create(
            calling_key=created.test_key.secret_key, name="one more", scopes=["read"]
        )
    live = restricted_key_create(
        calling_key=created.live_key.secret_key, name="live", scopes=["read"]
    )
    assert live.secret_key.mode == Mode.LIVE


def test_the_platform_merchant_gets_no_restricted_key() -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    Merchant.objects.filter(pk=created.merchant.pk).update(is_platform=True)
    key = SecretKey.objects.get(pk=created.test_key.secret_key.pk)
    with pytest.raises(ApplicationError):
        restricted_key_create(calling_key=key, name="x", scopes=["read"])
    assert SecretKey.objects.filter(merchant=created.merchant).count() == 2


# --- webhook secret rotation overlap ---------------------------------------------------------


def _settings(merchant: Merchant, mode: str = Mode.TEST) -> WebhookSettings:
    return webhook_settings_set(merchant=merchant, mode=mode, url="https://m.example.com/hook")


def test_rotation_keeps_the_previous_secret_for_the_default_overlap(settings) -> None:  # type: ignore[no-untyped-def]
    settings.WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS = 24
    merchant = merchant_create(name="Kemi Foods", email="kemi@example.com").merchant
    first = _settings(merchant)
    now = timezone.now()

    rotated = webhook_secret_rotate(merchant=merchant, mode=Mode.TEST, now=now)

    stored = WebhookSettings.objects.get(pk=first.pk)
    assert stored.secret == rotated.secret != first.secret
    assert stored.previous_secret == first.secret
    assert stored.previous_secret_expires_at == now + timedelta(hours=24)


def test_a_second_rotation_ends_the_older_secret() -> None:
    merchant = merchant_create(name="Kemi Foods", email="kemi@example.com").merchant
    first = _settings(merchant)
    second = webhook_secret_rotate(merchant=merchant, mode=Mode.TEST)
    third = webhook_secret_rotate(merchant=merchant, mode=Mode.TEST)
    stored = WebhookSettings.objects.get(pk=first.pk)
    assert (stored.secret, stored.previous_secret) == (third.secret, second.secret)


def test_a_rotation_without_overlap_keeps_no_previous_secret() -> None:
    merchant = merchant_create(name="Kemi Foods", email="kemi@example.com").merchant
    _settings(merchant)
    rotated = webhook_secret_rotate(merchant=merchant, mode=Mode.TEST, overlap=timedelta(0))
    assert (rotated.previous_secret, rotated.previous_secret_expires_at) == ("", None)


@pytest.mark.parametrize("hours", [-1, 73])
def test_an_overlap_outside_0_to_72_hours_is_refused(hours: int) -> None:
    merchant = merchant_create(name="Kemi Foods", email="kemi@example.com").merchant
    first = _settings(merchant)
    with pytest.raises(ApplicationError, match="overlap_hours"):
        webhook_secret_rotate(merchant=merchant, mode=Mode.TEST, overlap=timedelta(hours=hours))
    assert WebhookSettings.objects.get(pk=first.pk).secret == first.secret


def test_a_secret_no_key_decrypts_is_replaced_and_not_carried_over(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    merchant = merchant_create(name="Kemi Foods", email="kemi@example.com").merchant
    first = _settings(merchant)
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]  # that key is gone

    rotated = webhook_secret_rotate(merchant=merchant, mode=Mode.TEST)

    stored = WebhookSettings.objects.get(pk=first.pk)
    assert stored.secret == rotated.secret
    assert (stored.previous_secret, stored.previous_secret_expires_at) == ("", None)


def test_a_url_that_is_not_public_is_refused_naming_url() -> None:
    merchant = merchant_create(name="Kemi Foods", email="kemi@example.com").merchant
    with pytest.raises(ApplicationError, match="^url: "):
        webhook_settings_set_recorded(
            merchant=merchant, mode=Mode.TEST, url="https://10.0.0.7/hook", actor="test"
        )
    assert not WebhookSettings.objects.exists()
