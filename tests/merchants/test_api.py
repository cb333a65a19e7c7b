"""The keys routes: roll (the old key answers until its expiry, then 401), restricted keys
(create, list, revoke), no escalation, mode isolation, and the audit trail."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from audit.models import AuditRecord
from merchants.models import KeyKind, Mode, SecretKey
from merchants.scopes import Scope
from merchants.services import MerchantCreated
from tests.merchants.factories import RestrictedKeyFactory

pytestmark = pytest.mark.django_db

KEYS = "/api/v1/keys"
ROLL = "/api/v1/keys/roll"
WALLET = "/api/v1/transactions/in/merchant-wallet"
UNAUTHORIZED = {
    "status": False,
    "message": "Unauthorized: invalid or missing secret key",
    "data": None,
    "statusCode": 401,
}


def _later(monkeypatch: pytest.MonkeyPatch, delta: timedelta) -> None:
    """Moves ``timezone.now`` forward by ``delta`` (the key lookup reads it too)."""
    moved = timezone.now() + delta
    monkeypatch.setattr(timezone, "now", lambda: moved)


# --- roll -----------------------------------------------------------------------------------------


def test_a_roll_issues_a_new_secret_key_shown_once_and_the_old_one_answers_until_its_expiry(
    merchant_account: MerchantCreated,
    test_client: APIClient,
    client_for: Callable[[str], APIClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    response = test_client.post(ROLL, {"expires_in_hours": 2}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    new_plaintext = data["secret"]
    assert new_plaintext.startswith("sk_test_")
    assert data["key"]["kind"] == "secret" and data["key"]["expires_at"] is None
    assert data["rolled_key"]["id"] == merchant_account.test_key.secret_key.pk
    assert data["rolled_key"]["expires_at"] is not None
    new_client = client_for(new_plaintext)
    assert test_client.get(WALLET).status_code == 200
    assert new_client.get(WALLET).status_code == 200

    _later(monkeypatch, timedelta(hours=1, minutes=59))
    assert test_client.get(WALLET).status_code == 200

    _later(monkeypatch, timedelta(hours=2, minutes=1))
    expired = test_client.get(WALLET)
    assert expired.status_code == 401
    assert expired.json() == UNAUTHORIZED
    assert expired["WWW-Authenticate"] == 'Bearer realm="api"'
    assert new_client.get(WALLET).status_code == 200


def test_a_roll_with_no_expiry_ends_the_old_key_at_once(
    test_client: APIClient, client_for: Callable[[str], APIClient]
) -> None:
    response = test_client.post(ROLL, {"expires_in_hours": 0}, format="json")
    assert response.status_code == 201
    assert test_client.get(WALLET).json() == UNAUTHORIZED
    assert client_for(response.json()["data"]["secret"]).get(WALLET).status_code == 200


def test_a_roll_defaults_to_a_day(
    merchant_account: MerchantCreated, test_client: APIClient
) -> None:
    before = timezone.now()
    response = test_client.post(ROLL, {}, format="json")
    assert response.status_code == 201
    rolled = SecretKey.objects.get(pk=merchant_account.test_key.secret_key.pk)
    assert before + timedelta(hours=24) <= rolled.expires_at <= timezone.now() + timedelta(hours=24)


@pytest.mark.parametrize("hours", [-1, 169, "24", 1.5, True, None])
def test_a_roll_refuses_an_expiry_outside_0_to_168_whole_hours(
    merchant_account: MerchantCreated, test_client: APIClient, hours: object
) -> None:
    response = test_client.post(ROLL, {"expires_in_hours": hours}, format="json")
    assert response.status_code == 400
    assert response.json()["message"].startswith("expires_in_hours: ")
    assert SecretKey.objects.filter(merchant=merchant_account.merchant).count() == 2


def test_a_rolled_key_cannot_roll_again(
    merchant_account: MerchantCreated, test_client: APIClient
) -> None:
    assert test_client.post(ROLL, {}, format="json").status_code == 201
    again = test_client.post(ROLL, {}, format="json")
    assert again.status_code == 409
    assert again.json()["message"] == (
        "This key has already been rolled; roll with the current secret key"
    )
    assert SecretKey.objects.filter(merchant=merchant_account.merchant, mode=Mode.TEST).count() == 2


def test_a_restricted_key_cannot_roll_even_with_keys_write(
    merchant_account: MerchantCreated, client_for: Callable[[str], APIClient]
) -> None:
    key = RestrictedKeyFactory(merchant=merchant_account.merchant, scopes=[Scope.KEYS_WRITE])
    response = client_for(key.plaintext).post(ROLL, {}, format="json")
    assert response.status_code == 403
    assert response.json()["message"] == "Only a secret key can roll; this key is restricted"
    assert not SecretKey.objects.filter(expires_at__isnull=False).exists()


def test_a_roll_is_audited_by_prefix_never_the_key(
    merchant_account: MerchantCreated, test_client: APIClient
) -> None:
    response = test_client.post(ROLL, {"expires_in_hours": 1}, format="json")
    new_plaintext = response.json()["data"]["secret"]
    record = AuditRecord.objects.get(action="merchants.secretkey.roll")
    old = merchant_account.test_key.secret_key
    assert record.actor_label == f"API key {old.prefix}… of merchant #{old.merchant_id}"
    assert record.object_id == str(old.pk)
    assert record.after["key_prefix"] == old.prefix
    assert record.after["new_key_prefix"] == new_plaintext[:12]
    assert record.after["expires_at"]
    stored = str(record.before) + str(record.after) + record.actor_label + record.object_repr
    assert new_plaintext not in stored
    assert merchant_account.test_key.plaintext not in stored


# --- restricted keys ------------------------------------------------------------------------------


def test_a_restricted_key_is_created_shown_once_and_answers_within_its_scopes(
    merchant_account: MerchantCreated,
    test_client: APIClient,
    client_for: Callable[[str], APIClient],
) -> None:
    response = test_client.post(
        KEYS, {"name": "dashboard", "scopes": ["read", "read"]}, format="json"
    )
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["secret"].startswith("rk_test_")
    assert data["key"] == {
        "id": data["key"]["id"],
        "name": "dashboard",
        "kind": "restricted",
        "prefix": data["secret"][:12],
        "scopes": ["read"],
        "created_at": data["key"]["created_at"],
        "expires_at": None,
    }
    stored = SecretKey.objects.get(pk=data["key"]["id"])
    assert data["secret"] not in (stored.key_hash, stored.prefix)
    reader = client_for(data["secret"])
    assert reader.get(WALLET).status_code == 200
    refused = reader.post(f"{WALLET}/payouts", {}, format="json")
    assert refused.status_code == 403
    assert refused.json() == {
        "status": False,
        "message": "This key lacks the scope payouts:write",
        "data": None,
        "statusCode": 403,
    }


def test_creating_a_key_is_audited(merchant_account: MerchantCreated, test_client: APIClient):
    response = test_client.post(KEYS, {"name": "ci", "scopes": ["read"]}, format="json")
    record = AuditRecord.objects.get(action="merchants.secretkey.create_restricted")
    assert record.after == {
        "mode": "test",
        "name": "ci",
        "key_prefix": response.json()["data"]["key"]["prefix"],
        "scopes": ["read"],
    }
    assert response.json()["data"]["secret"] not in str(record.after)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "x", "scopes": ["read", "payouts:everything"]}, "scopes[1]: "),
        ({"name": "x", "scopes": []}, "scopes: "),
        ({"name": "x", "scopes": "read"}, "scopes: "),
        ({"name": "x"}, "scopes: "),
        ({"scopes": ["read"]}, "name: "),
        ({"name": "x", "scopes": ["read"], "kind": "secret"}, "kind: is not an accepted field"),
    ],
)
def test_a_bad_key_request_is_a_400_naming_the_field_and_creates_nothing(
    merchant_account: MerchantCreated, test_client: APIClient, body: dict, message: str
) -> None:
    response = test_client.post(KEYS, body, format="json")
    assert response.status_code == 400
    assert response.json()["message"].startswith(message), response.json()
    assert not SecretKey.objects.filter(kind=KeyKind.RESTRICTED).exists()


def test_a_restricted_key_cannot_grant_a_scope_it_does_not_hold(
    merchant_account: MerchantCreated, client_for: Callable[[str], APIClient]
) -> None:
    manager = RestrictedKeyFactory(
        merchant=merchant_account.merchant, scopes=[Scope.KEYS_WRITE, Scope.READ]
    )
    client = client_for(manager.plaintext)
    refused = client.post(
        KEYS, {"name": "wider", "scopes": ["read", "payouts:write"]}, format="json"
    )
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        "scopes: this key cannot grant scopes it does not hold: payouts:write"
    )
    assert SecretKey.objects.filter(kind=KeyKind.RESTRICTED).count() == 1
    narrower = client.post(KEYS, {"name": "reader", "scopes": ["read"]}, format="json")
    assert narrower.status_code == 201


def test_the_list_shows_this_modes_answering_keys_never_a_secret_or_hash(
    merchant_account: MerchantCreated,
    test_client: APIClient,
    django_assert_num_queries,
) -> None:
    merchant = merchant_account.merchant
    reader = RestrictedKeyFactory(merchant=merchant, name="reader")
    RestrictedKeyFactory(merchant=merchant, mode=Mode.LIVE)
    RestrictedKeyFactory(merchant=merchant, revoked_at=timezone.now())
    RestrictedKeyFactory(merchant=merchant, expires_at=timezone.now() - timedelta(seconds=1))
    RestrictedKeyFactory()  # another merchant's
    with django_assert_num_queries(2):  # the key, the list
        response = test_client.get(KEYS)
    assert response.status_code == 200
    keys = response.json()["data"]
    assert [key["id"] for key in keys] == [reader.pk, merchant_account.test_key.secret_key.pk]
    assert keys[1]["kind"] == "secret"
    assert keys[1]["scopes"] == list(Scope.values)
    text = response.content.decode()
    for key in SecretKey.objects.all():
        assert key.key_hash not in text
    assert merchant_account.test_key.plaintext not in text
    assert reader.plaintext not in text


def test_a_revoked_key_gets_401_like_an_unknown_key_and_the_revocation_is_audited(
    merchant_account: MerchantCreated,
    test_client: APIClient,
    client_for: Callable[[str], APIClient],
) -> None:
    key = RestrictedKeyFactory(merchant=merchant_account.merchant)
    assert client_for(key.plaintext).get(WALLET).status_code == 200
    response = test_client.delete(f"{KEYS}/{key.pk}")
    assert response.status_code == 200
    assert response.json()["data"]["id"] == key.pk
    assert client_for(key.plaintext).get(WALLET).json() == UNAUTHORIZED
    assert test_client.delete(f"{KEYS}/{key.pk}").status_code == 404
    record = AuditRecord.objects.get(action="merchants.secretkey.revoke")
    assert record.object_id == str(key.pk)
    assert record.after["revoked_at"]


def test_a_rolled_secret_key_can_be_revoked_before_its_expiry(
    merchant_account: MerchantCreated,
    test_client: APIClient,
    client_for: Callable[[str], APIClient],
) -> None:
    rolled = test_client.post(ROLL, {"expires_in_hours": 48}, format="json").json()["data"]
    new_client = client_for(rolled["secret"])
    assert new_client.delete(f"{KEYS}/{rolled['rolled_key']['id']}").status_code == 200
    assert test_client.get(WALLET).status_code == 401


def test_neither_the_calling_key_nor_the_current_secret_key_can_be_revoked(
    merchant_account: MerchantCreated,
    test_client: APIClient,
    client_for: Callable[[str], APIClient],
) -> None:
    secret_id = merchant_account.test_key.secret_key.pk
    itself = test_client.delete(f"{KEYS}/{secret_id}")
    assert itself.status_code == 409
    assert itself.json()["message"] == "A key cannot revoke itself; revoke it with another key"
    manager = RestrictedKeyFactory(merchant=merchant_account.merchant, scopes=list(Scope.values))
    current = client_for(manager.plaintext).delete(f"{KEYS}/{secret_id}")
    assert current.status_code == 409
    assert "rolled" in current.json()["message"]
    assert SecretKey.objects.get(pk=secret_id).revoked_at is None


def test_a_restricted_key_cannot_revoke_a_wider_key(
    merchant_account: MerchantCreated, client_for: Callable[[str], APIClient]
) -> None:
    manager = RestrictedKeyFactory(merchant=merchant_account.merchant, scopes=[Scope.KEYS_WRITE])
    wider = RestrictedKeyFactory(
        merchant=merchant_account.merchant, scopes=[Scope.KEYS_WRITE, Scope.PAYOUTS_WRITE]
    )
    response = client_for(manager.plaintext).delete(f"{KEYS}/{wider.pk}")
    assert response.status_code == 403
    assert response.json()["message"].endswith("payouts:write")
    assert SecretKey.objects.get(pk=wider.pk).revoked_at is None


def test_a_test_key_cannot_see_or_revoke_live_keys_nor_another_merchants(
    merchant_account: MerchantCreated, test_client: APIClient, live_client: APIClient
) -> None:
    live_key = RestrictedKeyFactory(merchant=merchant_account.merchant, mode=Mode.LIVE)
    stranger = RestrictedKeyFactory()
    listed = {key["id"] for key in test_client.get(KEYS).json()["data"]}
    assert live_key.pk not in listed and stranger.pk not in listed
    assert merchant_account.live_key.secret_key.pk not in listed
    for key_id in (live_key.pk, stranger.pk, merchant_account.live_key.secret_key.pk):
        response = test_client.delete(f"{KEYS}/{key_id}")
        assert response.status_code == 404
        assert response.json()["message"] == "Key not found"
    assert not SecretKey.objects.filter(revoked_at__isnull=False).exists()
    created = test_client.post(KEYS, {"name": "t", "scopes": ["read"]}, format="json")
    assert created.json()["data"]["secret"].startswith("rk_test_")
    assert live_client.get(KEYS).json()["data"][0]["id"] == live_key.pk
