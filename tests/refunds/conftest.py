from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import responses

from collections_app.models import CollectionFeeSchedule
from config.celery_app import app as celery_app
from merchants.models import Merchant
from merchants.services import MerchantCreated
from tests.celery_worker import celery_client_reset
from tests.collections_app.factories import CollectionFeeScheduleFactory
from tests.collections_app.helpers import PAYSTACK_BASE_URL, PAYSTACK_SECRET


@pytest.fixture(scope="session", autouse=True)
def _in_memory_broker() -> Iterator[None]:
    """Tasks enqueued on commit by these tests go to an in-process broker."""
    previous = (celery_app.conf.broker_url, celery_app.conf.broker_transport_options)
    celery_app.conf.broker_url = "memory://localhost/"
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
def merchant(merchant_account: MerchantCreated) -> Merchant:
    return merchant_account.merchant


@pytest.fixture
def paystack(settings: Any) -> Iterator[responses.RequestsMock]:
    """Paystack at a fake base URL; every call must be mocked."""
    settings.PAYSTACK_BASE_URL = PAYSTACK_BASE_URL
    settings.PAYSTACK_SECRET_KEY = PAYSTACK_SECRET
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock
