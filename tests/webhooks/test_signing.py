"""Every delivery carries Standard Webhooks headers that the ``standardwebhooks`` library
verifies over the exact bytes the deliverer POSTed (captured with ``responses``): payout and
collection events alike, through a rotation overlap and after it, across retries and resends;
a tampered body, another secret and an old timestamp are refused. The older
``X-Webhook-Signature`` stays as it was, under the current secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import datetime, timedelta

import pytest
import responses
from django.utils import timezone
from standardwebhooks import Webhook, WebhookVerificationError

from collections_app.models import PaymentStatus
from collections_app.services import transaction_confirm
from merchants.keys import webhook_secret_generate
from merchants.models import Merchant, Mode, WebhookSettings
from merchants.services import webhook_secret_rotate
from payouts.events import payout_event_emit
from payouts.models import PayoutStatus
from tests.collections_app.factories import CollectionTransactionFactory
from tests.payouts.factories import PayoutFactory
from wallets.selectors import wallet_get
from webhooks.deliveries import event_resend, webhook_delivery_attempt
from webhooks.models import DeliveryTarget, Event
from webhooks.signing import webhook_signature_compute

pytestmark = pytest.mark.django_db

WEBHOOK_URL = "https://merchant.example.com/webhooks"
CALLBACK_URL = "https://merchant.example.com/payments/callback"
# A secret issued before the Standard Webhooks format: URL-safe base64 without padding.
LEGACY_SECRET = "whsec_Jm3tQ8vX1cZ6bN0sR4yK7pL2hW9fD5gA3eU8iO1uT"


@pytest.fixture
def secret(merchant: Merchant) -> str:
    issued = webhook_secret_generate()
    WebhookSettings.objects.create(
        merchant=merchant, mode=Mode.TEST, url=WEBHOOK_URL, secret=issued
    )
    return issued


def payout_event(merchant: Merchant) -> Event:
    payout = PayoutFactory(
        wallet=wallet_get(merchant=merchant, mode=Mode.TEST),
        status=PayoutStatus.SUCCESSFUL,
        completed_at=timezone.now(),
    )
    payout_event_emit(payout=payout)
    return Event.objects.get(payout=payout)


def delivered(
    event: Event,
    *,
    target: str = DeliveryTarget.WEBHOOK_URL,
    status: int = 200,
    now: datetime | None = None,
) -> tuple[bytes, dict[str, str]]:
    """The body and headers of the request the deliverer POSTs for the event's chain."""
    delivery = event.deliveries.filter(target=target).order_by("-id").first()
    assert delivery is not None
    with responses.RequestsMock() as mock:
        mock.add(responses.POST, delivery.url, status=status)
        webhook_delivery_attempt(delivery_id=delivery.pk, now=now)
        [call] = mock.calls
    body = call.request.body
    assert isinstance(body, bytes)
    return body, dict(call.request.headers)


def test_a_payout_delivery_verifies_with_the_standardwebhooks_library(
    merchant: Merchant, secret: str, fake_dns
) -> None:
    event = payout_event(merchant)

    body, headers = delivered(event)

    assert body == event.body.encode("utf-8")  # the unchanged bytes
    payload = Webhook(secret).verify(body, headers)
    assert payload["id"] == event.event_id
    assert payload["event"] == "payout.successful"
    assert headers["webhook-id"] == event.event_id
    assert abs(int(headers["webhook-timestamp"]) - timezone.now().timestamp()) < 60
    assert headers["webhook-signature"].startswith("v1,")
    assert " " not in headers["webhook-signature"]  # one secret, one signature


def test_the_signature_is_hmac_sha256_over_id_timestamp_and_body_with_the_decoded_key(
    merchant: Merchant, secret: str, fake_dns
) -> None:
    body, headers = delivered(payout_event(merchant))
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    assert headers["webhook-signature"] == f"v1,{expected}"


def test_a_collection_callback_delivery_verifies_too(
    merchant: Merchant, secret: str, fake_dns
) -> None:
    txn = CollectionTransactionFactory(merchant=merchant, callback_url=CALLBACK_URL)
    transaction_confirm(collection=txn, outcome=PaymentStatus.PAID, gateway_reference="SBX_7")
    event = Event.objects.get(transaction=txn)

    body, headers = delivered(event, target=DeliveryTarget.CALLBACK_URL)

    assert Webhook(secret).verify(body, headers)["event"] == "transaction.paid"


def test_a_tampered_body_is_refused(merchant: Merchant, secret: str, fake_dns) -> None:
    body, headers = delivered(payout_event(merchant))
    tampered = body.replace(b'"successful"', b'"failed"', 1)
    assert tampered != body
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(tampered, headers)


def test_another_secret_is_refused(merchant: Merchant, secret: str, fake_dns) -> None:
    body, headers = delivered(payout_event(merchant))
    with pytest.raises(WebhookVerificationError):
        Webhook(webhook_secret_generate()).verify(body, headers)


def test_a_delivery_signed_ten_minutes_ago_is_refused_as_too_old(
    merchant: Merchant, secret: str, fake_dns, monkeypatch: pytest.MonkeyPatch
) -> None:
    past = timezone.now() - timedelta(minutes=10)
    with monkeypatch.context() as patch:  # the event is recorded, and due, ten minutes ago
        patch.setattr(timezone, "now", lambda: past)
        event = payout_event(merchant)

    body, headers = delivered(event, now=past)

    assert headers["webhook-timestamp"] == str(int(past.timestamp()))
    with pytest.raises(WebhookVerificationError, match="too old"):
        Webhook(secret).verify(body, headers)


def test_during_the_overlap_both_secrets_verify(merchant: Merchant, secret: str, fake_dns) -> None:
    rotated = webhook_secret_rotate(merchant=merchant, mode=Mode.TEST, overlap=timedelta(hours=24))

    body, headers = delivered(payout_event(merchant))

    assert len(headers["webhook-signature"].split(" ")) == 2
    Webhook(rotated.secret).verify(body, headers)
    Webhook(secret).verify(body, headers)
    # the older scheme signs with the current secret only
    assert headers["X-Webhook-Signature"] == webhook_signature_compute(body, secret=rotated.secret)


def test_after_the_overlap_only_the_new_secret_verifies(
    merchant: Merchant, secret: str, fake_dns
) -> None:
    rotated = webhook_secret_rotate(
        merchant=merchant,
        mode=Mode.TEST,
        overlap=timedelta(hours=24),
        now=timezone.now() - timedelta(hours=25),  # its overlap ended an hour ago
    )

    body, headers = delivered(payout_event(merchant))

    assert " " not in headers["webhook-signature"]
    Webhook(rotated.secret).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(body, headers)


def test_a_rotation_without_overlap_stops_the_old_secret_at_once(
    merchant: Merchant, secret: str, fake_dns
) -> None:
    rotated = webhook_secret_rotate(merchant=merchant, mode=Mode.TEST, overlap=timedelta(0))
    body, headers = delivered(payout_event(merchant))
    Webhook(rotated.secret).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(body, headers)


def test_a_retry_keeps_the_webhook_id_with_a_new_timestamp(
    merchant: Merchant, secret: str, fake_dns, settings
) -> None:
    settings.WEBHOOK_RETRY_JITTER = 0.0
    event = payout_event(merchant)
    first_body, first = delivered(event, status=503)
    retry_at = event.deliveries.get().next_attempt_at
    assert retry_at is not None

    second_body, second = delivered(event, now=retry_at)

    assert second_body == first_body
    assert second["webhook-id"] == first["webhook-id"] == event.event_id
    assert int(second["webhook-timestamp"]) - int(first["webhook-timestamp"]) >= 29
    assert second["webhook-signature"] != first["webhook-signature"]
    Webhook(secret).verify(first_body, first)
    Webhook(secret).verify(second_body, second)


def test_a_resend_keeps_the_webhook_id(merchant: Merchant, secret: str, fake_dns) -> None:
    event = payout_event(merchant)
    _, first = delivered(event)
    event_resend(event=event)

    body, resent = delivered(event)

    assert resent["webhook-id"] == first["webhook-id"] == event.event_id
    Webhook(secret).verify(body, resent)


def test_a_secret_from_before_the_format_signs_with_its_utf8_bytes(
    merchant: Merchant, fake_dns
) -> None:
    WebhookSettings.objects.create(
        merchant=merchant, mode=Mode.TEST, url=WEBHOOK_URL, secret=LEGACY_SECRET
    )
    body, headers = delivered(payout_event(merchant))
    Webhook(LEGACY_SECRET.encode("utf-8")).verify(body, headers)
    assert headers["X-Webhook-Signature"] == webhook_signature_compute(body, secret=LEGACY_SECRET)


def test_without_a_secret_there_is_no_signature_but_the_id_and_timestamp(
    merchant: Merchant, fake_dns
) -> None:
    WebhookSettings.objects.create(merchant=merchant, mode=Mode.TEST, url=WEBHOOK_URL, secret="")
    event = payout_event(merchant)
    _, headers = delivered(event)
    assert headers["webhook-id"] == event.event_id
    assert "webhook-timestamp" in headers
    assert "webhook-signature" not in headers
    assert "X-Webhook-Signature" not in headers
