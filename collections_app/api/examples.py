"""OpenAPI examples of the collection routes, the test-mode completion and Paystack's webhook."""

from __future__ import annotations

from typing import Any

from core.api.responses import request_example, response_example
from payment_items.api.examples import PAYMENT_ITEM_DETAIL_EXAMPLE

REFERENCE = "TXN_M1K4I4UPGWBCI0S3W0P9"
_CUSTOMER = {
    "id": 1,
    "customer_tag": "CUS_qw1v3t0oj6x4g7ck",
    "first_name": "Ada",
    "last_name": "Obi",
}
_BUSINESS = {"business_name": "Bright Future Academy"}
_INITIALIZED: dict[str, Any] = {
    "payment_status": "pending",
    "authorization_url": f"https://pay.example.com/checkout/{REFERENCE}",
    "amount": "7000.00",
    "amount_to_be_paid": "7205.00",
    "transaction_fee": "205.00",
    "reference": REFERENCE,
    "client_reference": "order-1001",
}
_CUSTOMER_INFO = {
    "email": "ada@example.com",
    "phone_number": "08031234567",
    "first_name": "Ada",
    "last_name": "Obi",
}

INITIALIZE_EXAMPLES = [
    request_example(
        "Card",
        {
            "callback_url": "https://shop.example.com/payments/callback",
            "payment_item_id": "1",
            "transaction_reference": "order-1001",
            "channel": "card",
            "amount": "7000",
            "customer_info": _CUSTOMER_INFO,
        },
        "Redirect the customer to data.authorization_url.",
    ),
    request_example(
        "Bank transfer",
        {
            "callback_url": "https://shop.example.com/payments/callback",
            "payment_item_id": "1",
            "transaction_reference": "order-1002",
            "channel": "bank",
            "amount": "7000",
            "customer_info": _CUSTOMER_INFO,
        },
    ),
    response_example("Initialized", _INITIALIZED, "Transaction initialized"),
    response_example(
        "Same reference again",
        _INITIALIZED,
        "Transaction already initialized",
        description="The same transaction_reference with the same details answers the first "
        "transaction again; with other details it is a 409.",
    ),
]

STATUS_EXAMPLES = [
    response_example(
        "Paid",
        {
            "reference": REFERENCE,
            "payment_status": "paid",
            "amount": "7000.00",
            "payment_item": PAYMENT_ITEM_DETAIL_EXAMPLE,
            "customer": _CUSTOMER,
            "business": _BUSINESS,
        },
        "Transaction status retrieved",
    )
]

SEARCH_DATA_EXAMPLE: dict[str, Any] = {
    "id": 1,
    "reference": REFERENCE,
    "client_reference": "order-1001",
    "authorization_url": f"https://pay.example.com/checkout/{REFERENCE}",
    "amount": "7000.00",
    "amount_paid": "7205.00",
    "amount_refunded": "0.00",
    "amount_to_be_paid": "7205.00",
    "transaction_fee": "205.00",
    "payment_status": "paid",
    "payment_channel": "card",
    "payment_type": "payment_item",
    "paid_at": "2026-03-02T10:04:51.220000+01:00",
    "created_at": "2026-03-02T10:02:13.540000+01:00",
    "initiation_time": "2026-03-02T10:02:13.540000+01:00",
    "gateway_reference": "SBX_4F1C9A7E2B6D0358",
    "gateway_used": "sandbox",
    "no_of_attempts": 2,
    "transaction_split_code": "SPL_ps4slrkw514a",
    "transaction_split_breakdown": [
        {
            "share": 700,
            "bank_id": 1,
            "bank_name": "Access Bank",
            "account_code": "ACCT_515j3qzdl6ey",
            "account_name": "Bright Future Bursary",
            "account_number": "0123456789",
        }
    ],
    "payment_item": PAYMENT_ITEM_DETAIL_EXAMPLE,
    "customer": _CUSTOMER,
    "business": _BUSINESS,
    "meta_data": None,
    "core_service_business_id": 1,
    "business_merchant_id": 1,
    "customer_id": 1,
    "customer_tag": "CUS_qw1v3t0oj6x4g7ck",
    "customer_email": "ada@example.com",
    "customer_phone_number": "08031234567",
}
SEARCH_EXAMPLES = [response_example("Paid by card", SEARCH_DATA_EXAMPLE, "Transaction found")]

COMPLETE_EXAMPLES = [
    request_example("Paid", {"outcome": "paid"}),
    request_example("Failed", {"outcome": "failed"}),
    response_example("Marked paid", SEARCH_DATA_EXAMPLE, "Transaction marked paid"),
]

PAYSTACK_WEBHOOK_EXAMPLES = [
    request_example(
        "charge.success",
        {
            "event": "charge.success",
            "data": {
                "id": 4099260516,
                "reference": REFERENCE,
                "amount": 720500,
                "currency": "NGN",
                "status": "success",
                "channel": "card",
                "paid_at": "2026-03-02T09:04:51.000Z",
            },
        },
        "Only event and data.reference are read; the outcome comes from Paystack's verify call.",
    ),
    request_example(
        "transfer.success",
        {
            "event": "transfer.success",
            "data": {
                "id": 37272792,
                "reference": "po_20261127_68d7b8360bd058ef405e",
                "transfer_code": "TRF_wpl1dem4967avzm",
                "amount": 200000,
                "currency": "NGN",
                "domain": "live",
                "status": "success",
                "session": {"provider": "nip", "id": "000013231127090000123456789012"},
            },
        },
        "A live payout's transfer event: applied once per event (its name and data.id), in "
        "any order; amount and currency must agree with the payout's.",
    ),
    response_example(
        "Processed",
        {"reference": REFERENCE, "payment_status": "paid"},
        "Event processed",
    ),
    response_example("Transfer event applied", None, "Transfer event applied"),
]
