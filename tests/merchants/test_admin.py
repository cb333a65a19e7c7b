from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from merchants.models import Mode, SecretKey
from merchants.selectors import secret_key_get_active

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client() -> Client:
    user = User.objects.create_superuser("finance", "finance@example.com", "pw-finance-123")
    client = Client()
    client.force_login(user)
    return client


def test_rotate_action_revokes_the_old_key_and_shows_the_new_one_once(
    admin_client: Client, merchant_account
) -> None:
    response = admin_client.post(
        "/admin/merchants/merchant/",
        {"action": "rotate_test_key", "_selected_action": [merchant_account.merchant.pk]},
        follow=True,
    )
    assert response.status_code == 200
    shown = re.findall(r"sk_test_[A-Za-z0-9_-]{43}", response.content.decode())
    assert len(shown) == 1
    assert secret_key_get_active(plaintext=shown[0]) is not None
    assert secret_key_get_active(plaintext=merchant_account.test_key.plaintext) is None
    listing = admin_client.get("/admin/merchants/merchant/").content.decode()
    assert shown[0] not in listing


def test_key_list_shows_prefixes_never_hashes_or_keys(
    admin_client: Client, merchant_account
) -> None:
    listing = admin_client.get("/admin/merchants/secretkey/").content.decode()
    stored = SecretKey.objects.get(merchant=merchant_account.merchant, mode=Mode.LIVE)
    assert stored.prefix in listing
    assert stored.key_hash not in listing
    assert merchant_account.live_key.plaintext not in listing


def test_webhook_settings_list_never_shows_the_secret(
    admin_client: Client, merchant_account
) -> None:
    from merchants.services import webhook_settings_set

    row = webhook_settings_set(
        merchant=merchant_account.merchant, mode=Mode.TEST, url="https://m.example.com/hook"
    )
    listing = admin_client.get("/admin/merchants/webhooksettings/").content.decode()
    assert "https://m.example.com/hook" in listing
    assert row.secret not in listing
    change_page = admin_client.get(f"/admin/merchants/webhooksettings/{row.pk}/change/")
    assert row.secret not in change_page.content.decode()
