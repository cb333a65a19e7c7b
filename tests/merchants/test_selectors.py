"""``secret_key_get_active``: the key, its merchant and the wallet of its mode, in one
hand-written query, held equal to the ORM's answer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Model
from django.utils import timezone

from merchants.models import Merchant, Mode, SecretKey
from merchants.selectors import ActiveKey, secret_key_get_active, webhook_settings_view_get
from merchants.services import (
    merchant_create,
    secret_key_rotate,
    webhook_secret_rotate,
    webhook_settings_set,
)
from tests.merchants.factories import RestrictedKeyFactory
from wallets.models import Wallet

pytestmark = pytest.mark.django_db


def test_the_key_brings_its_merchant_and_the_wallet_of_its_mode_in_one_query(
    django_assert_num_queries,
) -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    wallets = {wallet.mode: wallet for wallet in Wallet.objects.filter(merchant=created.merchant)}
    for plaintext, mode in (
        (created.test_key.plaintext, Mode.TEST),
        (created.live_key.plaintext, Mode.LIVE),
    ):
        with django_assert_num_queries(1):
            key = secret_key_get_active(plaintext=plaintext)
            assert key is not None
            assert key.merchant == created.merchant
            assert key.wallet.pk == wallets[mode].pk
            assert key.wallet.mode == mode
            assert key.wallet.merchant_id == created.merchant.pk
            assert key.wallet.available_balance == wallets[mode].available_balance


def test_without_a_wallet_of_its_mode_the_key_brings_none(db: None) -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    Wallet.objects.filter(merchant=created.merchant, mode=Mode.LIVE).delete()
    live = secret_key_get_active(plaintext=created.live_key.plaintext)
    assert live is not None and live.wallet is None
    test = secret_key_get_active(plaintext=created.test_key.plaintext)
    assert test is not None and test.wallet.mode == Mode.TEST


def test_revoked_keys_and_inactive_merchants_bring_nothing(db: None) -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    secret_key_rotate(merchant=created.merchant, mode=Mode.TEST)
    assert secret_key_get_active(plaintext=created.test_key.plaintext) is None
    Merchant.objects.filter(pk=created.merchant.pk).update(is_active=False)
    assert secret_key_get_active(plaintext=created.live_key.plaintext) is None


def _values(instance: Model | None) -> dict[str, object] | None:
    if instance is None:
        return None
    return {field.attname: getattr(instance, field.attname) for field in instance._meta.fields}


def test_the_lookup_reads_what_the_orm_reads(db: None) -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    Wallet.objects.filter(merchant=created.merchant, mode=Mode.LIVE).delete()
    for plaintext in (created.test_key.plaintext, created.live_key.plaintext):
        found = secret_key_get_active(plaintext=plaintext)
        assert isinstance(found, ActiveKey)
        key = SecretKey.objects.select_related("merchant").get(
            pk=found.pk, revoked_at__isnull=True, merchant__is_active=True
        )
        wallet = Wallet.objects.filter(merchant=key.merchant, mode=key.mode).first()
        assert _values(found.key) == _values(key)
        assert _values(found.merchant) == _values(key.merchant)
        assert _values(found.wallet) == _values(wallet)
        assert (found.pk, found.mode) == (key.pk, key.mode)
        assert found.key.merchant is found.merchant


def test_the_key_carries_no_attribute_its_model_does_not_declare(db: None) -> None:
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    found = secret_key_get_active(plaintext=created.test_key.plaintext)
    assert found is not None
    assert not hasattr(found.key, "wallet")


def test_a_restricted_key_brings_its_scopes_in_the_same_one_query(django_assert_num_queries):
    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    key = RestrictedKeyFactory(merchant=created.merchant, scopes=["read", "refunds:write"])
    with django_assert_num_queries(1):
        found = secret_key_get_active(plaintext=key.plaintext)
        assert found is not None
        assert found.scopes == frozenset({"read", "refunds:write"})
        assert found.has_scope("read") and not found.has_scope("payouts:write")
        assert found.wallet.mode == Mode.TEST
    secret = secret_key_get_active(plaintext=created.test_key.plaintext)
    assert secret is not None and secret.has_scope("payouts:approve")


def test_a_key_past_its_expiry_brings_nothing(monkeypatch) -> None:

    created = merchant_create(name="Kemi Foods", email="kemi@example.com")
    expiry = timezone.now() + timedelta(hours=1)
    SecretKey.objects.filter(pk=created.test_key.secret_key.pk).update(expires_at=expiry)
    monkeypatch.setattr(timezone, "now", lambda: expiry - timedelta(microseconds=1))
    assert secret_key_get_active(plaintext=created.test_key.plaintext) is not None
    monkeypatch.setattr(timezone, "now", lambda: expiry)
    assert secret_key_get_active(plaintext=created.test_key.plaintext) is None


# --- webhook settings as the merchant reads them ---------------------------------------------


def test_webhook_settings_view_shows_the_overlap_only_while_it_lasts() -> None:
    merchant = merchant_create(name="Kemi Foods", email="kemi@example.com").merchant
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url="https://m.example.com/hook")
    rotated = webhook_secret_rotate(merchant=merchant, mode=Mode.TEST, overlap=timedelta(hours=2))
    ends = rotated.previous_secret_expires_at
    assert ends is not None

    during = webhook_settings_view_get(
        merchant=merchant, mode=Mode.TEST, now=ends - timedelta(seconds=1)
    )
    after = webhook_settings_view_get(merchant=merchant, mode=Mode.TEST, now=ends)

    assert during.previous_secret_expires_at == ends
    assert after.previous_secret_expires_at is None
    assert (during.secret_set, during.url) == (True, "https://m.example.com/hook")
    assert rotated.secret not in repr(during)


def test_webhook_settings_view_before_any_settings_is_empty() -> None:
    merchant = merchant_create(name="Kemi Foods", email="kemi@example.com").merchant
    view = webhook_settings_view_get(merchant=merchant, mode=Mode.LIVE, now=timezone.now())
    assert (view.mode, view.url, view.secret_set, view.updated_at) == (Mode.LIVE, "", False, None)
