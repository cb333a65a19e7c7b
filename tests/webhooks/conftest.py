"""Deliveries are exercised with collection transactions and payouts as their events' sources:
the collection fixtures (in-memory broker, fake DNS, items, webhook settings) apply here too."""

from tests.collections_app.conftest import (  # noqa: F401
    _in_memory_broker,
    fake_dns,
    fee_schedule,
    fixed_item,
    merchant,
    paystack,
    variable_item,
    webhook_settings,
)
