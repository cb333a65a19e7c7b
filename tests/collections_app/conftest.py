from __future__ import annotations

import socket
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import responses

from collections_app.models import CollectionFeeSchedule
from config.celery_app import app as celery_app
from core import ssrf
from merchants.models import Merchant, Mode, WebhookSettings
from merchants.services import MerchantCreated
from payment_items.models import PaymentItem
from tests.collections_app.factories import CollectionFeeScheduleFactory
from tests.collections_app.helpers import PAYSTACK_BASE_URL, PAYSTACK_SECRET, celery_client_reset
from tests.merchants.factories import WebhookSettingsFactory
from tests.payment_items.factories import PaymentItemFactory

FAKE_DNS = {
    "merchant.example.com": ["93.184.216.34"],
    "shop.example.org": ["2606:2800:220:1::1"],
    "intranet.example.com": ["10.20.30.40"],
    "metadata.example.com": ["169.254.169.254"],
    "split-horizon.example.com": ["93.184.216.34", "127.0.0.1"],
}
CALLBACK_URL = "https://merchant.example.com/payments/callback"
WEBHOOK_URL = "https://merchant.example.com/webhooks"


@pytest.fixture(scope="session", autouse=True)
def _in_memory_broker() -> Iterator[None]:
    """Tasks enqueued on commit by these tests go to an in-process broker, never to the
    developer's ``var/broker`` queue."""
    previous = (celery_app.conf.broker_url, celery_app.conf.broker_transport_options)
    celery_app.conf.broker_url = "memory://localhost/"
    celery_app.conf.broker_transport_options = {}
    celery_client_reset()
    yield
    celery_app.conf.broker_url, celery_app.conf.broker_transport_options = previous
    celery_client_reset()


@pytest.fixture(autouse=True)
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Names resolve from FAKE_DNS only: no test reaches a real resolver."""

    def resolve(host: str, port: int) -> list[str]:
        if host not in FAKE_DNS:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return FAKE_DNS[host]

    monkeypatch.setattr(ssrf, "system_resolver", resolve)
    return FAKE_DNS


@pytest.fixture
def fee_schedule(db: None) -> CollectionFeeSchedule:
    """The active schedule (seeded by the data migration; recreated after a flush)."""
    active = CollectionFeeSchedule.objects.filter(is_active=True).first()
    return active or CollectionFeeScheduleFactory()


@pytest.fixture
def merchant(merchant_account: MerchantCreated) -> Merchant:
    return merchant_account.merchant


@pytest.fixture
def fixed_item(merchant: Merchant, fee_schedule) -> PaymentItem:  # type: ignore[no-untyped-def]
    return PaymentItemFactory(merchant=merchant, amount=Decimal("7000.00"), name="Tuition")


@pytest.fixture
def variable_item(merchant: Merchant, fee_schedule) -> PaymentItem:  # type: ignore[no-untyped-def]
    return PaymentItemFactory(merchant=merchant, amount=Decimal("0"), name="Donation")


def initialize_payload(item: PaymentItem, **overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "callback_url": CALLBACK_URL,
        "payment_item_id": str(item.pk),
        "transaction_reference": "order-1001",
        "channel": "card",
        "amount": "7000.00" if item.amount else "1500.00",
        "customer_info": {
            "email": "ada.obi@example.com",
            "phone_number": "08031234567",
            "first_name": "Ada",
            "last_name": "Obi",
        },
    }
    payload.update(overrides)
    return payload


@pytest.fixture
def webhook_settings(merchant: Merchant) -> WebhookSettings:
    """The merchant's test-mode webhook URL and secret."""
    return WebhookSettingsFactory(
        merchant=merchant, mode=Mode.TEST, url=WEBHOOK_URL, secret="whsec_test_signing_secret"
    )


@pytest.fixture
def paystack(settings: Any) -> Iterator[responses.RequestsMock]:
    """Live mode through Paystack at a fake base URL; every call must be mocked."""
    settings.PAYSTACK_BASE_URL = PAYSTACK_BASE_URL
    settings.PAYSTACK_SECRET_KEY = PAYSTACK_SECRET
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock
