"""Merchants back office: who may rotate keys and webhook secrets (with a typed reason, shown
once, audited); merchants and webhook settings created in the admin go through the services."""

from __future__ import annotations

import json
import re
import socket
from datetime import timedelta

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import User
from django.db.models import TextField
from django.db.models.functions import Cast
from django.test import Client
from django.utils import timezone

from audit.models import AuditRecord
from core import ssrf
from core.crypto import STORED_PREFIX
from merchants.models import Merchant, Mode, SecretKey, WebhookSettings
from merchants.selectors import secret_key_get_active
from merchants.services import secret_key_roll, webhook_secret_rotate, webhook_settings_set
from tests.audit.factories import StaffUserFactory
from tests.audit.helpers import (
    act_records,
    actions_offered,
    assert_admin_forbidden,
    audit_count,
    client_for,
)
from tests.merchants.factories import RestrictedKeyFactory
from wallets.models import Wallet

pytestmark = pytest.mark.django_db

MERCHANTS = "/admin/merchants/merchant/"
WEBHOOK_SETTINGS = "/admin/merchants/webhooksettings/"
KEY_PATTERN = r"sk_(?:test|live)_[A-Za-z0-9_-]{43}"
SECRET_PATTERN = r"whsec_[A-Za-z0-9+/]{43}="
REASON = "Merchant reported the key leaked in a support ticket"
PUBLIC_HOSTS = {"hooks.example.com": ["93.184.216.34"], "intranet.example.com": ["10.0.0.5"]}


@pytest.fixture
def admin_client() -> Client:
    user = User.objects.create_superuser("finance", "finance@example.com", "pw-finance-123")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def security_admin() -> User:
    return StaffUserFactory(username="sec-admin", roles=["security_admin"])


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    def resolve(host: str, port: int) -> list[str]:
        if host not in PUBLIC_HOSTS:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return PUBLIC_HOSTS[host]

    monkeypatch.setattr(ssrf, "system_resolver", resolve)


def rotate(client: Client, merchant: Merchant, action: str = "rotate_live_key", meta=None, **extra):
    data = {"action": action, "_selected_action": [merchant.pk], **extra}
    return client.post(MERCHANTS, data, **(meta or {}))


# --- Key rotation ----------------------------------------------------------------------------


def test_rotate_action_revokes_the_old_key_and_shows_the_new_one_once(
    admin_client: Client, merchant_account
) -> None:
    confirmation = rotate(admin_client, merchant_account.merchant, "rotate_test_key")
    assert confirmation.status_code == 200
    response = rotate(
        admin_client, merchant_account.merchant, "rotate_test_key", confirm="yes", reason=REASON
    )
    assert response.status_code == 200
    shown = re.findall(r"sk_test_[A-Za-z0-9_-]{43}", response.content.decode())
    assert len(shown) == 1
    assert secret_key_get_active(plaintext=shown[0]) is not None
    assert secret_key_get_active(plaintext=merchant_account.test_key.plaintext) is None
    listing = admin_client.get("/admin/merchants/merchant/").content.decode()
    assert shown[0] not in listing


@pytest.mark.parametrize("role", [None, "ops", "finance_viewer"])
def test_a_user_without_the_rotation_permission_cannot_rotate(merchant_account, role) -> None:
    user = StaffUserFactory(
        roles=[role] if role else [], permissions=[] if role else ["merchants.view_merchant"]
    )
    client = client_for(user)
    listing = client.get(MERCHANTS)
    if role == "finance_viewer":  # no view permission on merchants at all
        assert_admin_forbidden(listing)
    else:
        assert listing.status_code == 200
        assert actions_offered(listing) == set()
        assert "Rotate" not in listing.content.decode()
    before = audit_count()
    for extra in ({}, {"confirm": "yes", "reason": REASON}):
        response = rotate(client, merchant_account.merchant, **extra)
        assert_admin_forbidden(response)
        assert not re.search(KEY_PATTERN, response.content.decode())
    assert secret_key_get_active(plaintext=merchant_account.live_key.plaintext) is not None
    assert SecretKey.objects.filter(merchant=merchant_account.merchant).count() == 2
    assert audit_count() == before


def test_rotation_asks_for_a_reason_on_an_admin_page_first(
    security_admin: User, merchant_account
) -> None:
    client = client_for(security_admin)
    assert actions_offered(client.get(MERCHANTS)) == {"rotate_test_key", "rotate_live_key"}
    page = rotate(client, merchant_account.merchant)
    assert page.status_code == 200
    assert "admin/backoffice/confirm_action.html" in [t.name for t in page.templates]
    assert 'id="site-name"' in page.content.decode()
    assert str(merchant_account.merchant) in page.content.decode()
    too_short = rotate(client, merchant_account.merchant, confirm="yes", reason="because")
    assert too_short.status_code == 200
    assert "Ensure this value has at least 10 characters" in too_short.content.decode()
    assert secret_key_get_active(plaintext=merchant_account.live_key.plaintext) is not None
    assert not act_records().exists()


def test_security_admin_rotates_with_a_reason_and_the_audit_keeps_prefixes_only(
    security_admin: User, merchant_account
) -> None:
    client = client_for(security_admin)
    old = SecretKey.objects.get(merchant=merchant_account.merchant, mode=Mode.LIVE)
    response = rotate(
        client,
        merchant_account.merchant,
        confirm="yes",
        reason=REASON,
        meta={"REMOTE_ADDR": "198.51.100.7"},
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    (new_key,) = re.findall(r"sk_live_[A-Za-z0-9_-]{43}", response.content.decode())
    assert secret_key_get_active(plaintext=new_key) is not None
    assert secret_key_get_active(plaintext=merchant_account.live_key.plaintext) is None
    assert new_key not in str(client.cookies)  # not carried by the message framework either
    record = act_records().get()
    assert record.actor == security_admin
    assert record.action == "merchants.merchant.rotate_secret_key"
    assert record.object_id == str(merchant_account.merchant.pk)
    assert record.before == {"mode": "live", "key_prefix": old.prefix}
    assert record.after == {"mode": "live", "key_prefix": new_key[:12]}
    assert record.reason == REASON
    assert record.ip_address == "198.51.100.7"
    assert new_key not in str(record.before) + str(record.after) + record.reason


# --- Keys and webhook settings on record ----------------------------------------------------


def test_key_list_shows_prefixes_never_hashes_or_keys(
    admin_client: Client, merchant_account
) -> None:
    listing = admin_client.get("/admin/merchants/secretkey/").content.decode()
    stored = SecretKey.objects.get(merchant=merchant_account.merchant, mode=Mode.LIVE)
    assert stored.prefix in listing
    assert stored.key_hash not in listing
    assert merchant_account.live_key.plaintext not in listing


def test_key_list_shows_kind_scopes_and_expiry_never_a_restricted_keys_hash(
    admin_client: Client, merchant_account
) -> None:

    rolled = secret_key_roll(calling_key=merchant_account.test_key.secret_key, expires_in_hours=5)
    restricted = RestrictedKeyFactory(
        merchant=merchant_account.merchant, name="dashboard reader", scopes=["read"]
    )
    response = admin_client.get("/admin/merchants/secretkey/")
    listing = response.content.decode()
    assert "Expires at" in listing and "Kind" in listing
    assert "dashboard reader" in listing and restricted.prefix in listing
    expiry = timezone.localtime(rolled.rolled.expires_at)
    assert f"{expiry.hour:02d}:{expiry.minute:02d}" in listing
    assert rolled.rolled.expires_at - timezone.now() > timedelta(hours=4)
    for key in SecretKey.objects.all():
        assert key.key_hash not in listing
    assert restricted.plaintext not in listing
    assert rolled.issued.plaintext not in listing
    page = admin_client.get(f"/admin/merchants/secretkey/{restricted.pk}/change/").content.decode()
    assert restricted.key_hash not in page and "read" in page
    merchant_page = admin_client.get(
        f"{MERCHANTS}{merchant_account.merchant.pk}/change/"
    ).content.decode()
    assert "dashboard reader" in merchant_page and "Expires at" in merchant_page
    assert restricted.key_hash not in merchant_page


def test_webhook_settings_list_never_shows_the_secret(
    admin_client: Client, merchant_account
) -> None:
    row = webhook_settings_set(
        merchant=merchant_account.merchant, mode=Mode.TEST, url="https://m.example.com/hook"
    )
    stored = (
        WebhookSettings.objects.filter(pk=row.pk)
        .values_list(Cast("secret", output_field=TextField()), flat=True)
        .get()
    )
    assert stored.startswith(STORED_PREFIX)
    listing = admin_client.get("/admin/merchants/webhooksettings/").content.decode()
    assert "https://m.example.com/hook" in listing
    change_page = admin_client.get(f"/admin/merchants/webhooksettings/{row.pk}/change/")
    for page in (listing, change_page.content.decode()):
        assert row.secret not in page
        assert STORED_PREFIX not in page  # nor its encrypted form
        assert stored[len(STORED_PREFIX) :][:24] not in page


# --- Merchant creation ------------------------------------------------------------------------


def test_a_merchant_added_in_the_admin_gets_keys_and_wallets(security_admin: User) -> None:
    client = client_for(security_admin)
    response = client.post(f"{MERCHANTS}add/", {"name": "Bola Foods", "email": "bola@example.com"})
    assert response.status_code == 200
    merchant = Merchant.objects.get(name="Bola Foods")
    keys = re.findall(KEY_PATTERN, response.content.decode())
    assert sorted(key[:7] for key in keys) == ["sk_live", "sk_test"]
    assert all(secret_key_get_active(plaintext=key).merchant == merchant for key in keys)
    assert set(Wallet.objects.filter(merchant=merchant).values_list("mode", flat=True)) == {
        "test",
        "live",
    }
    record = AuditRecord.objects.get(action="merchants.merchant.add")
    assert record.actor == security_admin
    assert record.object_id == str(merchant.pk)
    assert sorted(record.after["wallets"]) == ["live", "test"]
    assert {record.after["test_key_prefix"], record.after["live_key_prefix"]} == {
        key[:12] for key in keys
    }
    assert not any(key in str(record.after) for key in keys)
    detail = client.get(f"{MERCHANTS}{merchant.pk}/change/").content.decode()
    assert not re.search(KEY_PATTERN, detail)


def test_adding_a_merchant_needs_the_add_permission() -> None:
    client = client_for(StaffUserFactory(roles=["ops"]))
    assert_admin_forbidden(client.get(f"{MERCHANTS}add/"))
    response = client.post(f"{MERCHANTS}add/", {"name": "Bola Foods", "email": "bola@example.com"})
    assert_admin_forbidden(response)
    assert not Merchant.objects.filter(name="Bola Foods").exists()


def test_editing_a_merchant_is_audited(security_admin: User, merchant_account) -> None:
    merchant = merchant_account.merchant
    response = client_for(security_admin).post(
        f"{MERCHANTS}{merchant.pk}/change/",
        {
            "name": "Ade Stores Ltd",
            "email": merchant.email,
            "is_active": "on",
            "secret_keys-TOTAL_FORMS": "0",
            "secret_keys-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302
    record = AuditRecord.objects.get(action="merchants.merchant.change")
    assert (record.before, record.after) == ({"name": "Ade Stores"}, {"name": "Ade Stores Ltd"})


# --- Webhook settings ---------------------------------------------------------------------------


def test_webhook_settings_added_in_the_admin_get_a_secret_shown_once(
    security_admin: User, merchant_account, fake_dns
) -> None:
    client = client_for(security_admin)
    response = client.post(
        f"{WEBHOOK_SETTINGS}add/",
        {
            "merchant": merchant_account.merchant.pk,
            "mode": "live",
            "url": "https://hooks.example.com/payments",
        },
    )
    assert response.status_code == 200
    row = WebhookSettings.objects.get(merchant=merchant_account.merchant, mode=Mode.LIVE)
    assert row.url == "https://hooks.example.com/payments"
    assert re.fullmatch(SECRET_PATTERN, row.secret)
    assert re.findall(SECRET_PATTERN, response.content.decode()) == [row.secret]
    record = AuditRecord.objects.get(action="merchants.webhooksettings.set")
    assert record.before is None
    assert record.after == {"url": "https://hooks.example.com/payments", "secret": "generated"}
    assert row.secret not in str(record.after)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://intranet.example.com/hook", "private"),
        ("https://127.0.0.1/hook", "loopback"),
        ("http://hooks.example.com/hook", "https"),
        ("https://unknown.example.com/hook", "resolve"),
    ],
)
def test_webhook_settings_refuse_a_url_that_is_not_public(
    security_admin: User, merchant_account, fake_dns, url: str, message: str
) -> None:
    response = client_for(security_admin).post(
        f"{WEBHOOK_SETTINGS}add/",
        {"merchant": merchant_account.merchant.pk, "mode": "live", "url": url},
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["url"]
    assert errors[0].startswith("This URL cannot receive webhooks")
    assert message in errors[0]
    assert not WebhookSettings.objects.filter(merchant=merchant_account.merchant).exists()
    assert not act_records().exists()


def test_changing_the_webhook_url_keeps_the_secret_and_is_audited(
    security_admin: User, merchant_account, fake_dns
) -> None:
    row = webhook_settings_set(
        merchant=merchant_account.merchant, mode=Mode.TEST, url="https://hooks.example.com/a"
    )
    response = client_for(security_admin).post(
        f"{WEBHOOK_SETTINGS}{row.pk}/change/", {"url": "https://hooks.example.com/b"}
    )
    assert response.status_code == 302
    updated = WebhookSettings.objects.get(pk=row.pk)
    assert (updated.url, updated.secret) == ("https://hooks.example.com/b", row.secret)
    record = AuditRecord.objects.get(action="merchants.webhooksettings.set")
    assert record.before == {"url": "https://hooks.example.com/a", "secret": "set"}
    assert record.after == {"url": "https://hooks.example.com/b", "secret": "unchanged"}


def test_webhook_secret_rotation_needs_the_permission_and_a_reason(
    security_admin: User, merchant_account
) -> None:
    row = webhook_settings_set(
        merchant=merchant_account.merchant, mode=Mode.TEST, url="https://m.example.com/hook"
    )
    ops = client_for(StaffUserFactory(roles=["ops"]))
    assert actions_offered(ops.get(WEBHOOK_SETTINGS)) == set()
    data = {"action": "rotate_secret", "_selected_action": [row.pk]}
    assert_admin_forbidden(ops.post(WEBHOOK_SETTINGS, {**data, "confirm": "yes", "reason": REASON}))
    assert WebhookSettings.objects.get(pk=row.pk).secret == row.secret
    assert not act_records().exists()

    client = client_for(security_admin)
    assert client.post(WEBHOOK_SETTINGS, data).status_code == 200  # the confirmation page
    assert WebhookSettings.objects.get(pk=row.pk).secret == row.secret
    response = client.post(WEBHOOK_SETTINGS, {**data, "confirm": "yes", "reason": REASON})
    rotated = WebhookSettings.objects.get(pk=row.pk).secret
    assert rotated != row.secret
    assert re.findall(SECRET_PATTERN, response.content.decode()) == [rotated]
    record = act_records().get()
    assert record.action == "merchants.webhooksettings.rotate_webhook_secret"
    assert record.before == {"secret": "set"}
    assert record.after["secret"] == "rotated"
    stored = WebhookSettings.objects.get(pk=row.pk)
    assert record.after["overlap_ends_at"] == stored.previous_secret_expires_at.isoformat()
    assert stored.previous_secret == row.secret  # signs beside the new one for the overlap
    assert record.reason == REASON
    assert row.secret not in json.dumps(record.after)


def test_rotate_now_stops_the_previous_webhook_secret_at_once(
    security_admin: User, merchant_account
) -> None:
    row = webhook_settings_set(
        merchant=merchant_account.merchant, mode=Mode.TEST, url="https://m.example.com/hook"
    )
    client = client_for(security_admin)
    data = {"action": "rotate_secret_now", "_selected_action": [row.pk]}
    response = client.post(WEBHOOK_SETTINGS, {**data, "confirm": "yes", "reason": REASON})
    stored = WebhookSettings.objects.get(pk=row.pk)
    assert re.findall(SECRET_PATTERN, response.content.decode()) == [stored.secret]
    assert (stored.previous_secret, stored.previous_secret_expires_at) == ("", None)
    record = AuditRecord.objects.get(action="merchants.webhooksettings.rotate_webhook_secret")
    assert record.after == {"secret": "rotated", "overlap_ends_at": None}


def test_webhook_settings_list_shows_the_overlap_never_the_previous_secret(
    admin_client: Client, merchant_account
) -> None:
    row = webhook_settings_set(
        merchant=merchant_account.merchant, mode=Mode.TEST, url="https://m.example.com/hook"
    )
    rotated = webhook_secret_rotate(merchant=merchant_account.merchant, mode=Mode.TEST)
    listing = admin_client.get(WEBHOOK_SETTINGS).content.decode()
    change_page = admin_client.get(f"{WEBHOOK_SETTINGS}{row.pk}/change/").content.decode()
    for page in (listing, change_page):
        assert "previous secret signs until" in page.lower()
        assert row.secret not in page
        assert rotated.secret not in page


def test_a_secret_whose_encryption_key_is_lost_still_lists_and_can_be_rotated(
    security_admin: User, merchant_account, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    row = webhook_settings_set(
        merchant=merchant_account.merchant, mode=Mode.TEST, url="https://m.example.com/hook"
    )
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]  # that key is gone
    client = client_for(security_admin)

    listing = client.get(WEBHOOK_SETTINGS)
    assert listing.status_code == 200
    assert "https://m.example.com/hook" in listing.content.decode()
    assert client.get(f"{WEBHOOK_SETTINGS}{row.pk}/change/").status_code == 200

    data = {"action": "rotate_secret", "_selected_action": [row.pk]}
    response = client.post(WEBHOOK_SETTINGS, {**data, "confirm": "yes", "reason": REASON})
    [issued] = re.findall(SECRET_PATTERN, response.content.decode())
    assert WebhookSettings.objects.get(pk=row.pk).secret == issued
    record = AuditRecord.objects.get(action="merchants.webhooksettings.rotate_webhook_secret")
    assert record.before == {"secret": "set"}
