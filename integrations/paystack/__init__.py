"""Paystack: the one client (``PaystackClient``), the base of every adapter (``PaystackAdapter``),
its answers and their classification, kobo conversion and the webhook signature check."""

from core.provider_http import RetryLater
from integrations.paystack.adapter import PaystackAdapter
from integrations.paystack.client import (
    SIGNATURE_HEADER,
    PaystackAnswer,
    PaystackClient,
    kobo_from_naira,
    naira_from_kobo,
    paystack_signature_compute,
    paystack_signature_valid,
)

__all__ = [
    "SIGNATURE_HEADER",
    "PaystackAdapter",
    "PaystackAnswer",
    "PaystackClient",
    "RetryLater",
    "kobo_from_naira",
    "naira_from_kobo",
    "paystack_signature_compute",
    "paystack_signature_valid",
]
