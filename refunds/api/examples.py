"""OpenAPI examples of the refund routes: what a merchant sends and what it gets back."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample

from core.api.responses import (
    accepted_examples,
    page_example,
    request_example,
    response_example,
)

LIST_MESSAGE = "Refunds retrieved successfully"
DETAIL_MESSAGE = "Refund retrieved successfully"

REFUND_EXAMPLE: dict[str, Any] = {
    "refund_id": "rf_20260302_9c1d2e3f4a5b6c7d8e9f",
    "transaction_reference": "TXN_20260302_8K2M4P6R8T0V2X4Z",
    "amount": "2000.00",
    "fee_returned": "0.00",
    "currency": "NGN",
    "status": "pending",
    "reason": "Customer returned one item",
    "deducted_from_settlement": "2000.00",
    "debited_from_wallet": "0.00",
    "failure_reason": None,
    "created_at": "2026-03-02T09:15:04.118000+01:00",
    "processed_at": None,
}
REFUND_PROCESSED_EXAMPLE: dict[str, Any] = {
    **REFUND_EXAMPLE,
    "status": "processed",
    "processed_at": "2026-03-02T09:15:05.402000+01:00",
}
REFUND_FAILED_EXAMPLE: dict[str, Any] = {
    **REFUND_EXAMPLE,
    "status": "failed",
    "failure_reason": "Refund refused by the customer's bank",
}


def create_examples(created_message: str, duplicate_message: str) -> list[OpenApiExample]:
    return [
        request_example(
            "A partial refund",
            {
                "transaction_reference": "TXN_20260302_8K2M4P6R8T0V2X4Z",
                "amount": "2000.00",
                "reason": "Customer returned one item",
                "idempotency_key": "refund-order-1042-1",
            },
        ),
        request_example(
            "All that is left",
            {
                "transaction_reference": "TXN_20260302_8K2M4P6R8T0V2X4Z",
                "idempotency_key": "refund-order-1042-2",
            },
            "Without amount the refund is the whole amount not refunded yet.",
        ),
        *accepted_examples(
            "refund",
            first=REFUND_EXAMPLE,
            again=REFUND_PROCESSED_EXAMPLE,
            created_message=created_message,
            duplicate_message=duplicate_message,
        ),
    ]


LIST_EXAMPLES = [
    response_example(
        "One page",
        page_example([REFUND_PROCESSED_EXAMPLE, REFUND_FAILED_EXAMPLE]),
        LIST_MESSAGE,
    )
]
DETAIL_EXAMPLES = [response_example("A refund", REFUND_PROCESSED_EXAMPLE, DETAIL_MESSAGE)]
