"""Fixtures for the hosted checkout tests."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from collections_app.models import Channel, CollectionFeeSchedule, CollectionTransaction
from config.celery_app import app as celery_app
from tests.collections_app.factories import (
    CollectionFeeScheduleFactory,
    CollectionTransactionFactory,
)
from tests.collections_app.helpers import celery_client_reset
from tests.payment_items.factories import PaymentItemFactory

CALLBACK_URL = "https://merchant.example.com/payments/callback?order=42"


@pytest.fixture(scope="session", autouse=True)
def _in_memory_broker() -> Iterator[None]:
    """Tasks enqueued on commit go to an in-process broker, never to ``var/broker``; the
    browser test switches to Redis for itself."""
    previous = (celery_app.conf.broker_url, celery_app.conf.broker_transport_options)
    celery_app.conf.broker_url = "memory://"
    celery_app.conf.broker_transport_options = {}
    celery_client_reset()
    yield
    celery_app.conf.broker_url, celery_app.conf.broker_transport_options = previous
    celery_client_reset()


@pytest.fixture
def fee_schedule(db: None) -> CollectionFeeSchedule:
    active = CollectionFeeSchedule.objects.filter(is_active=True).first()
    return active or CollectionFeeScheduleFactory()


@pytest.fixture
def card_transaction(db: None) -> CollectionTransaction:
    """A pending test-mode card payment of ₦7,000.00 + ₦205.00 for "Tuition" at "Ade Academy"."""
    item = PaymentItemFactory(
        name="Tuition", amount=Decimal("7000.00"), business__business_name="Ade Academy"
    )
    return CollectionTransactionFactory(
        merchant=item.merchant, payment_item=item, channel=Channel.CARD, callback_url=CALLBACK_URL
    )


@pytest.fixture
def transfer_transaction(db: None) -> CollectionTransaction:
    item = PaymentItemFactory(
        name="Tuition", amount=Decimal("7000.00"), business__business_name="Ade Academy"
    )
    return CollectionTransactionFactory(
        merchant=item.merchant,
        payment_item=item,
        channel=Channel.BANK_TRANSFER,
        callback_url=CALLBACK_URL,
        virtual_account_number="9012345678",
        virtual_account_name="Ade Academy",
        virtual_bank_name="Sandbox Collections Bank",
    )
