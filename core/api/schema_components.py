"""OpenAPI components for the two error shapes and the API's tags; imported by settings, so it
imports nothing of the project."""

from enum import StrEnum
from typing import Any


class ApiTag(StrEnum):
    """The parts of the API, one tag each; every view names its own (``openapi_tag``)."""

    PAYOUTS = "Payouts"
    BENEFICIARIES = "Beneficiaries"
    WALLET = "Wallet"
    BANKS = "Banks"
    PAYMENT_ITEMS = "Payment items"
    COLLECTIONS = "Collections"
    SETTLEMENTS = "Settlements"
    EVENTS = "Events"
    WEBHOOK_SETTINGS = "Webhook settings"
    TEST_HELPERS = "Test helpers"
    KEYS = "Keys"
    PROVIDER_WEBHOOKS = "Provider webhooks"


_TAG_DESCRIPTIONS: dict[ApiTag, str] = {
    ApiTag.PAYOUTS: (
        "Send money from the merchant wallet to any Nigerian bank account: quote the fee, "
        "create a payout (idempotent per wallet), list and look one up, requery its status "
        "with the provider, and create up to 500 in one bulk request. A payout moves "
        "reserved → processing → dispatched → successful or failed (ambiguous while the "
        "provider's answer is inconclusive; its funds stay reserved until it is settled)."
    ),
    ApiTag.BENEFICIARIES: (
        "Saved bank accounts to pay again without sending the account each time: a payout or "
        "a bulk item may carry beneficiary_id in place of account_number and bank_code."
    ),
    ApiTag.WALLET: (
        "The merchant wallet of the key's mode: available and reserved balances, the ledger "
        "of every balance change, a daily settlement statement (JSON or CSV) and the "
        "low-balance alert."
    ),
    ApiTag.BANKS: (
        "The banks a payout can go to (their codes and ids) and name enquiry: the account "
        "holder's name at a bank before you pay."
    ),
    ApiTag.PAYMENT_ITEMS: (
        "The products and services a business sells, with their prices and revenue splits; "
        "a collection transaction pays for one."
    ),
    ApiTag.COLLECTIONS: (
        "Collect from your customers: initialize a transaction (the customer pays on the "
        "hosted checkout by card or bank transfer), then check its status or search for it "
        "by reference. Your callback URL and signed webhooks tell your server the outcome."
    ),
    ApiTag.SETTLEMENTS: (
        "Paid collections settle into the merchant wallet of their mode (live: the next Lagos "
        "business day; test: at once): each settlement credits the net (gross - fees - "
        "subaccount shares - refunds deducted) and pays each subaccount its share by a payout. "
        "List them, look one up with its shares, and list the transactions it settled."
    ),
    ApiTag.EVENTS: (
        "Every webhook event sent to your server, with its delivery attempts; fetch one or "
        "send it again to your current webhook URL."
    ),
    ApiTag.WEBHOOK_SETTINGS: (
        "Your webhook URL and signing secret for the key's mode: read them (never the "
        "secret), set the URL, rotate the secret (the previous one keeps signing beside the "
        "new one for an overlap) and send a signed test ping."
    ),
    ApiTag.TEST_HELPERS: (
        "Test mode only (a test key holding test_helpers:write): fund the test wallet, "
        "complete a collection, make a bank return a successful payout. A live key gets 404 on "
        "these routes."
    ),
    ApiTag.KEYS: (
        "The merchant's own keys, of the calling key's mode: roll the secret key (the old one "
        "answers until the expiry the roll gives it), create restricted keys holding only the "
        "scopes they name, list and revoke them. Every route needs keys:write; every other "
        "route needs the scope shown as x-required-scope (a key without it gets 403 naming it)."
    ),
    ApiTag.PROVIDER_WEBHOOKS: (
        "Routes the payment providers call (signed by them, not by a merchant key): wallet "
        "funding notifications and Paystack events. Merchants never call these."
    ),
}

API_TAGS: list[dict[str, str]] = [
    {"name": tag.value, "description": _TAG_DESCRIPTIONS[tag]} for tag in ApiTag
]

SCHEMA_COMPONENTS: dict[str, Any] = {
    "ErrorEnvelope": {
        "type": "object",
        "description": "Every error: status false, data null.",
        "properties": {
            "status": {"type": "boolean"},
            "message": {"type": "string"},
            "data": {"type": "object", "nullable": True, "description": "always null"},
            "statusCode": {"type": "integer"},
        },
        "required": ["status", "message", "data", "statusCode"],
    },
    "ForbiddenError": {
        "type": "object",
        "description": "Authentication failure on the payment-item routes.",
        "properties": {
            "message": {"type": "string"},
            "error": {"type": "string"},
            "statusCode": {"type": "integer"},
        },
        "required": ["message", "error", "statusCode"],
        "additionalProperties": False,
    },
}
