"""``secret_key_get_active``: the key, its merchant and the wallet of its mode, in one query."""

from __future__ import annotations

import pytest

from merchants.models import Merchant, Mode
from merchants.selectors import secret_key_get_active
from merchants.services import merchant_create, secret_key_rotate
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
