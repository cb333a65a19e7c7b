"""The webhook settings routes: GET/PUT /api/v1/webhook-settings, POST …/rotate-secret and
POST …/test. The key's mode decides which settings are read and changed; a secret is answered
only when issued, once; a URL the SSRF rule refuses answers 400 naming ``url`` and changes
nothing; every change is audited without the secret; the test ping is signed like a delivery,
answered with the receiver's outcome, and never recorded as an event."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
import responses
from django.utils import timezone
from rest_framework.test import APIClient
from standardwebhooks import Webhook

from audit.models import AuditRecord
from merchants.models import Merchant, Mode, WebhookSettings
from merchants.services import MerchantCreated
from webhooks.models import Event

pytestmark = pytest.mark.django_db

SETTINGS_URL = "/api/v1/webhook-settings"
ROTATE_URL = f"{SETTINGS_URL}/rotate-secret"
TEST_URL = f"{SETTINGS_URL}/test"
WEBHOOK_URL = "https://merchant.example.com/webhooks"
NEW_WEBHOOK_URL = "https://shop.example.org/hooks/payments"
SETTINGS_KEYS = {"mode", "url", "secret_set", "previous_secret_expires_at", "updated_at"}


def data(response: Any) -> Any:
    body = response.json()
    assert body["statusCode"] == response.status_code, body
    return body["data"]


def put(client: APIClient, payload: Any) -> Any:
    return client.put(SETTINGS_URL, payload, format="json")


def stored(merchant: Merchant, mode: str = Mode.TEST) -> WebhookSettings:
    return WebhookSettings.objects.get(merchant=merchant, mode=mode)


# --- authentication and reading ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url"),
    [("get", SETTINGS_URL), ("put", SETTINGS_URL), ("post", ROTATE_URL), ("post", TEST_URL)],
)
def test_every_route_needs_a_key(api_client: APIClient, method: str, url: str) -> None:
    response = getattr(api_client, method)(url, {}, format="json")
    assert response.status_code == 401
    assert response.json()["status"] is False


def test_get_before_any_settings_answers_empty_ones(test_client: APIClient) -> None:
    response = test_client.get(SETTINGS_URL)
    assert response.status_code == 200
    assert data(response) == {
        "mode": "test",
        "url": "",
        "secret_set": False,
        "previous_secret_expires_at": None,
        "updated_at": None,
    }


# --- PUT ----------------------------------------------------------------------------------------


def test_the_first_put_issues_the_secret_once_and_get_never_shows_it(
    test_client: APIClient, merchant: Merchant, fake_dns
) -> None:
    first = put(test_client, {"url": WEBHOOK_URL})

    assert first.status_code == 200
    issued = data(first)["secret"]
    row = stored(merchant)
    assert issued == row.secret and issued.startswith("whsec_")
    assert (data(first)["url"], data(first)["secret_set"]) == (WEBHOOK_URL, True)

    again = put(test_client, {"url": NEW_WEBHOOK_URL})
    read = test_client.get(SETTINGS_URL)
    assert data(again)["secret"] is None
    assert stored(merchant).secret == issued  # kept
    assert set(data(read)) == SETTINGS_KEYS
    assert data(read)["url"] == NEW_WEBHOOK_URL
    for response in (again, read):
        assert issued not in response.content.decode()


def test_put_is_audited_with_the_url_and_never_the_secret(
    test_client: APIClient, merchant_account: MerchantCreated, fake_dns
) -> None:
    issued = data(put(test_client, {"url": WEBHOOK_URL}))["secret"]
    put(test_client, {"url": NEW_WEBHOOK_URL})

    first, second = AuditRecord.objects.filter(action="merchants.webhooksettings.set").order_by(
        "id"
    )
    prefix = merchant_account.test_key.secret_key.prefix
    assert first.actor_label == f"merchant {merchant_account.merchant.pk} key {prefix}…"
    assert (first.before, first.after) == (None, {"url": WEBHOOK_URL, "secret": "generated"})
    assert second.before == {"url": WEBHOOK_URL, "secret": "set"}
    assert second.after == {"url": NEW_WEBHOOK_URL, "secret": "unchanged"}
    for record in (first, second):
        assert issued not in json.dumps([record.before, record.after, record.reason])


@pytest.mark.parametrize(
    "url",
    [
        "https://intranet.example.com/hook",  # resolves to a private address
        "https://metadata.example.com/latest",  # link-local (cloud metadata)
        "https://127.0.0.1/hook",
        "http://merchant.example.com/webhooks",  # public hosts need https
        "https://unknown.example.net/hook",  # does not resolve
    ],
)
def test_a_url_the_ssrf_rule_refuses_answers_400_naming_url_and_changes_nothing(
    test_client: APIClient, merchant: Merchant, fake_dns, url: str
) -> None:
    put(test_client, {"url": WEBHOOK_URL})
    before = stored(merchant)

    response = put(test_client, {"url": url})

    assert response.status_code == 400
    assert response.json()["message"].startswith("url: ")
    after = stored(merchant)
    assert (after.url, after.secret, after.updated_at) == (
        before.url,
        before.secret,
        before.updated_at,
    )
    assert AuditRecord.objects.filter(action="merchants.webhooksettings.set").count() == 1


@pytest.mark.parametrize(
    ("payload", "field"),
    [({}, "url"), ({"url": 7}, "url"), ({"url": WEBHOOK_URL, "secret": "whsec_x"}, "secret")],
)
def test_bad_input_is_refused_naming_the_field(
    test_client: APIClient, fake_dns, payload: dict[str, Any], field: str
) -> None:
    response = put(test_client, payload)
    assert response.status_code == 400
    assert field in response.json()["message"]
    assert not WebhookSettings.objects.exists()


def test_an_empty_url_stops_webhooks(test_client: APIClient, merchant: Merchant, fake_dns) -> None:
    put(test_client, {"url": WEBHOOK_URL})
    response = put(test_client, {"url": ""})
    assert response.status_code == 200
    assert stored(merchant).url == ""


# --- rotation -----------------------------------------------------------------------------------


def test_rotate_shows_the_new_secret_once_and_keeps_the_old_one_for_the_overlap(
    test_client: APIClient, merchant: Merchant, fake_dns
) -> None:
    old = data(put(test_client, {"url": WEBHOOK_URL}))["secret"]
    before = timezone.now()

    response = test_client.post(ROTATE_URL, {}, format="json")

    assert response.status_code == 200
    new = data(response)["secret"]
    row = stored(merchant)
    assert new == row.secret != old
    assert row.previous_secret == old
    expires = row.previous_secret_expires_at
    assert before + timedelta(hours=24) <= expires <= timezone.now() + timedelta(hours=24)
    read = test_client.get(SETTINGS_URL)
    assert data(read)["previous_secret_expires_at"] is not None
    assert new not in read.content.decode() and old not in read.content.decode()


def test_rotate_with_overlap_0_stops_the_old_secret_at_once(
    test_client: APIClient, merchant: Merchant, fake_dns
) -> None:
    put(test_client, {"url": WEBHOOK_URL})
    response = test_client.post(ROTATE_URL, {"overlap_hours": 0}, format="json")
    assert data(response)["previous_secret_expires_at"] is None
    assert stored(merchant).previous_secret == ""


@pytest.mark.parametrize("overlap", [73, -1, "24", 1.5, True])
def test_rotate_refuses_an_overlap_outside_0_to_72_whole_hours(
    test_client: APIClient, merchant: Merchant, fake_dns, overlap: Any
) -> None:
    issued = data(put(test_client, {"url": WEBHOOK_URL}))["secret"]
    response = test_client.post(ROTATE_URL, {"overlap_hours": overlap}, format="json")
    assert response.status_code == 400
    assert "overlap_hours" in response.json()["message"]
    assert stored(merchant).secret == issued


def test_rotate_is_audited_with_the_overlap_end_never_a_secret(
    test_client: APIClient, merchant: Merchant, fake_dns
) -> None:
    old = data(put(test_client, {"url": WEBHOOK_URL}))["secret"]
    new = data(test_client.post(ROTATE_URL, {"overlap_hours": 48}, format="json"))["secret"]

    record = AuditRecord.objects.get(action="merchants.webhooksettings.rotate_webhook_secret")
    assert record.actor_label.startswith(f"merchant {merchant.pk} key sk_test_")
    assert record.before == {"secret": "set"}
    assert record.after == {
        "secret": "rotated",
        "overlap_ends_at": stored(merchant).previous_secret_expires_at.isoformat(),
    }
    recorded = json.dumps([record.before, record.after, record.reason])
    assert old not in recorded and new not in recorded


# --- modes --------------------------------------------------------------------------------------


def test_a_test_key_never_sees_or_changes_the_live_settings(
    test_client: APIClient, live_client: APIClient, merchant: Merchant, fake_dns
) -> None:
    live_secret = data(put(live_client, {"url": WEBHOOK_URL}))["secret"]
    live_before = stored(merchant, Mode.LIVE)

    assert data(test_client.get(SETTINGS_URL))["url"] == ""
    put(test_client, {"url": NEW_WEBHOOK_URL})
    test_client.post(ROTATE_URL, {}, format="json")

    live_after = stored(merchant, Mode.LIVE)
    assert (live_after.url, live_after.secret, live_after.previous_secret) == (
        WEBHOOK_URL,
        live_secret,
        "",
    )
    assert live_after.updated_at == live_before.updated_at
    assert data(live_client.get(SETTINGS_URL))["mode"] == "live"
    assert data(test_client.get(SETTINGS_URL))["url"] == NEW_WEBHOOK_URL


# --- the test ping ------------------------------------------------------------------------------


def test_the_ping_is_signed_like_a_delivery_and_answers_the_receivers_outcome(
    test_client: APIClient, merchant: Merchant, fake_dns
) -> None:
    old = data(put(test_client, {"url": WEBHOOK_URL}))["secret"]
    new = data(test_client.post(ROTATE_URL, {}, format="json"))["secret"]

    with responses.RequestsMock() as mock:
        mock.add(responses.POST, WEBHOOK_URL, status=202, body='{"received":true}')
        response = test_client.post(TEST_URL)
        [call] = mock.calls

    assert response.status_code == 200
    answer = data(response)
    assert answer["url"] == WEBHOOK_URL
    assert (answer["sent"], answer["succeeded"], answer["status_code"]) == (True, True, 202)
    assert answer["error"] == ""
    assert answer["response_excerpt"] == '{"received":true}'
    assert isinstance(answer["latency_ms"], int)
    body, headers = call.request.body, dict(call.request.headers)
    for secret in (new, old):  # both sign during the overlap
        payload = Webhook(secret).verify(body, headers)
    assert payload["event"] == "ping"
    assert payload["id"] == headers["webhook-id"] == answer["event_id"]
    assert payload["data"]["mode"] == "test"
    assert not Event.objects.exists()  # not an event of the merchant's list


def test_a_ping_the_receiver_refuses_is_reported_not_retried(
    test_client: APIClient, fake_dns
) -> None:
    put(test_client, {"url": WEBHOOK_URL})
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, WEBHOOK_URL, status=500, body="boom")
        response = test_client.post(TEST_URL)
        assert len(mock.calls) == 1

    assert response.status_code == 200
    answer = data(response)
    assert (answer["succeeded"], answer["status_code"], answer["response_excerpt"]) == (
        False,
        500,
        "boom",
    )


def test_a_ping_to_a_url_that_now_resolves_privately_is_never_sent(
    test_client: APIClient, fake_dns: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    put(test_client, {"url": WEBHOOK_URL})
    # the name moved to a private address
    monkeypatch.setitem(fake_dns, "merchant.example.com", ["10.1.2.3"])
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        response = test_client.post(TEST_URL)
        assert len(mock.calls) == 0

    answer = data(response)
    assert (answer["sent"], answer["status_code"]) == (False, None)
    assert answer["error"].startswith("refused by the SSRF check")


def test_a_ping_without_a_webhook_url_answers_409(test_client: APIClient) -> None:
    response = test_client.post(TEST_URL)
    assert response.status_code == 409
    assert "No webhook URL is configured for test mode" in response.json()["message"]


def test_a_ping_uses_the_settings_of_the_keys_mode(
    test_client: APIClient, live_client: APIClient, fake_dns
) -> None:
    put(live_client, {"url": WEBHOOK_URL})
    assert test_client.post(TEST_URL).status_code == 409
