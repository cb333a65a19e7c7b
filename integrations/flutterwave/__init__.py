"""Flutterwave (API v3): the one client (``FlutterwaveClient``), the base of every adapter
(``FlutterwaveAdapter``), its answers, exact naira amounts in JSON, the webhook's ``verif-hash``
check and the parsing of transfer webhooks (``integrations.flutterwave.webhooks``)."""

from integrations.flutterwave.adapter import FlutterwaveAdapter
from integrations.flutterwave.client import (
    WEBHOOK_HASH_HEADER,
    FlutterwaveAnswer,
    FlutterwaveClient,
    flutterwave_webhook_hash_valid,
    json_body_encode,
    naira_json_number,
)

__all__ = [
    "WEBHOOK_HASH_HEADER",
    "FlutterwaveAdapter",
    "FlutterwaveAnswer",
    "FlutterwaveClient",
    "flutterwave_webhook_hash_valid",
    "json_body_encode",
    "naira_json_number",
]
