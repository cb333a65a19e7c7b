"""The base of every Paystack adapter (payouts, collections, refunds, name enquiry): one
``PaystackClient`` built from the adapter's arguments or the settings, and ``_call``, one request
whose "nothing came back" is logged under the adapter's own module (``integrations.base``). An
adapter maps the answers onto its own results; one that must stop when nothing came back
overrides ``_unanswered``.
"""

from __future__ import annotations

from integrations.base import ProviderAdapter
from integrations.paystack.client import PaystackAnswer, PaystackClient


class PaystackAdapter(ProviderAdapter[PaystackAnswer]):
    name = "paystack"
    client_class = PaystackClient
    client: PaystackClient
