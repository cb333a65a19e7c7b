"""OpenAPI examples of the settlement routes: what a merchant gets back."""

from __future__ import annotations

from typing import Any

from core.api.responses import page_example, response_example

LIST_MESSAGE = "Settlements retrieved successfully"
DETAIL_MESSAGE = "Settlement retrieved successfully"
TRANSACTIONS_MESSAGE = "Settlement transactions retrieved successfully"

SETTLEMENT_EXAMPLE: dict[str, Any] = {
    "settlement_id": "stl_20260303_8c1d2e3f4a5b6c7d8e9f",
    "mode": "live",
    "currency": "NGN",
    "period_start": "2026-03-02T00:00:00+01:00",
    "period_end": "2026-03-03T00:00:00+01:00",
    "transaction_count": 2,
    "gross": "14410.00",
    "fees": "410.00",
    "subaccount_shares": "1500.00",
    "refunds_deducted": "2000.00",
    "net": "10500.00",
    "status": "completed",
    "settled_at": "2026-03-03T09:00:04.512000+01:00",
}
SETTLEMENT_DETAIL_EXAMPLE: dict[str, Any] = {
    **SETTLEMENT_EXAMPLE,
    "shares": [
        {
            "account_code": "ACCT_8f2k1m9q",
            "account_name": "CHIKA PARTNERS LTD",
            "amount": "1500.00",
            "payout": {
                "internal_reference": "po_20260303_1a2b3c4d5e6f70819203",
                "status": "successful",
            },
        }
    ],
}
SETTLEMENT_TRANSACTION_EXAMPLE: dict[str, Any] = {
    "reference": "TXN_1741003205118ABCD",
    "client_reference": "order-1042",
    "amount": "7000.00",
    "transaction_fee": "205.00",
    "amount_paid": "7205.00",
    "amount_refunded": "2000.00",
    "subaccount_shares": "1500.00",
    "net_to_merchant": "5500.00",
    "paid_at": "2026-03-02T14:20:31.007000+01:00",
    "payment_channel": "card",
}

LIST_EXAMPLES = [response_example("One page", page_example([SETTLEMENT_EXAMPLE]), LIST_MESSAGE)]
DETAIL_EXAMPLES = [
    response_example(
        "A settlement with a subaccount share", SETTLEMENT_DETAIL_EXAMPLE, DETAIL_MESSAGE
    )
]
TRANSACTIONS_EXAMPLES = [
    response_example(
        "One page", page_example([SETTLEMENT_TRANSACTION_EXAMPLE]), TRANSACTIONS_MESSAGE
    )
]
