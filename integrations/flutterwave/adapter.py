"""The base of every Flutterwave adapter (payouts, name enquiry, the bank list): one
``FlutterwaveClient`` built from the adapter's arguments or the settings, and ``_call``, one
request whose "nothing came back" is logged under the adapter's own module
(``integrations.base``). An adapter maps the answers onto its own results.
"""

from __future__ import annotations

from integrations.base import ProviderAdapter
from integrations.flutterwave.client import FlutterwaveAnswer, FlutterwaveClient


class FlutterwaveAdapter(ProviderAdapter[FlutterwaveAnswer]):
    name = "flutterwave"
    client_class = FlutterwaveClient
    client: FlutterwaveClient
