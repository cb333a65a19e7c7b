"""OpenAPI examples of the payout routes: what a merchant sends and what it gets back."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample

from core.api.responses import accepted_examples, page_example, request_example, response_example

PAYOUT_EXAMPLE: dict[str, Any] = {
    "id": 1201,
    "internal_reference": "po_20260302_3f9a1c2b4d5e6f708192",
    "idempotency_key": "salary-2026-03-ada",
    "beneficiary": {
        "account_number": "0123456789",
        "account_name": "SALAMI NGOZI UCHE",
        "bank_code": "058",
        "bank_name": "Guaranty Trust Bank",
    },
    "currency": "NGN",
    "amount": "2500.00",
    "fee_amount": "10.00",
    "total_debit_amount": "2510.00",
    "status": "reserved",
    "narration": "March salary",
    "error_message": None,
    "nip_session_id": None,
    "returned_at": None,
    "return_reason": None,
    "created_at": "2026-03-02T09:15:04.118000+01:00",
    "completed_at": None,
    "updated_at": "2026-03-02T09:15:04.118000+01:00",
    "approval": {"required": False, "status": "not_required", "approved_at": None},
    "scheduled_for": None,
}
PAYOUT_SUCCESSFUL_EXAMPLE: dict[str, Any] = {
    **PAYOUT_EXAMPLE,
    "status": "successful",
    "nip_session_id": "100004260302091512345678901234",
    "completed_at": "2026-03-02T09:15:09.402000+01:00",
    "updated_at": "2026-03-02T09:15:09.402000+01:00",
}
PAYOUT_FAILED_EXAMPLE: dict[str, Any] = {
    **PAYOUT_EXAMPLE,
    "status": "failed",
    "error_message": "Beneficiary account is dormant",
    "completed_at": "2026-03-02T09:15:09.402000+01:00",
    "updated_at": "2026-03-02T09:15:09.402000+01:00",
}
PAYOUT_AMBIGUOUS_EXAMPLE: dict[str, Any] = {
    **PAYOUT_EXAMPLE,
    "status": "ambiguous",
    "updated_at": "2026-03-02T09:15:39.018000+01:00",
}
PAYOUT_RETURNED_EXAMPLE: dict[str, Any] = {
    **PAYOUT_SUCCESSFUL_EXAMPLE,
    "returned_at": "2026-03-04T11:02:40.550000+01:00",
    "return_reason": "Returned by the beneficiary bank (test helper)",
    "updated_at": "2026-03-04T11:02:40.550000+01:00",
}
BATCH_EXAMPLE: dict[str, Any] = {
    "id": 88,
    "batch_reference": "salaries-2026-03",
    "status": "partially_accepted",
    "atomic": False,
    "currency": "NGN",
    "total_items": 3,
    "accepted": 1,
    "duplicates": 1,
    "rejected": 1,
    "total_amount": "2500.00",
    "total_fee_amount": "10.00",
    "total_debit_amount": "2510.00",
    "created_at": "2026-03-02T09:15:04.101000+01:00",
}
QUOTE_EXAMPLES = [
    request_example("Quote NGN 2,500", {"amount": "2500", "currency": "NGN"}),
    response_example(
        "Fee and total debit",
        {
            "amount": "2500.00",
            "fee_amount": "10.00",
            "total_debit_amount": "2510.00",
            "currency": "NGN",
        },
        "Fee calculated successfully",
    ),
]


def create_examples(created_message: str, duplicate_message: str) -> list[OpenApiExample]:
    return [
        request_example(
            "To an account",
            {
                "account_number": "0123456789",
                "bank_code": "058",
                "amount": "2500",
                "currency": "NGN",
                "narration": "March salary",
                "idempotency_key": "salary-2026-03-ada",
            },
        ),
        request_example(
            "To a saved beneficiary",
            {
                "beneficiary_id": 42,
                "amount": "1800.00",
                "currency": "NGN",
                "idempotency_key": "salary-2026-03-obi",
            },
            "The account number and bank come from the saved beneficiary.",
        ),
        *accepted_examples(
            "payout",
            first=PAYOUT_EXAMPLE,
            again=PAYOUT_SUCCESSFUL_EXAMPLE,
            created_message=created_message,
            duplicate_message=duplicate_message,
        ),
    ]


LIST_EXAMPLES = [
    response_example(
        "One page",
        page_example([PAYOUT_SUCCESSFUL_EXAMPLE]),
        "Payouts retrieved successfully",
    )
]
ATTEMPTS_FAILED_OVER_EXAMPLE: list[dict[str, Any]] = [
    {
        "number": 1,
        "provider": "sandbox",
        "status": "not_sent",
        "created_at": "2026-03-02T09:15:05.020000+01:00",
        "completed_at": "2026-03-02T09:15:05.031000+01:00",
    },
    {
        "number": 2,
        "provider": "sandbox-b",
        "status": "successful",
        "created_at": "2026-03-02T09:15:05.060000+01:00",
        "completed_at": "2026-03-02T09:15:09.402000+01:00",
    },
]
PAYOUT_DETAIL_EXAMPLE: dict[str, Any] = {
    **PAYOUT_SUCCESSFUL_EXAMPLE,
    "attempts": ATTEMPTS_FAILED_OVER_EXAMPLE,
}
DETAIL_EXAMPLES = [
    response_example("A payout", PAYOUT_DETAIL_EXAMPLE, "Payout retrieved successfully"),
]


def requery_examples(
    success_message: str, failed_message: str, ambiguous_message: str, pending_message: str
) -> list[OpenApiExample]:
    return [
        response_example("Completed", PAYOUT_DETAIL_EXAMPLE, success_message),
        response_example(
            "Failed, funds released",
            {
                **PAYOUT_FAILED_EXAMPLE,
                "attempts": [ATTEMPTS_FAILED_OVER_EXAMPLE[1] | {"status": "failed"}],
            },
            failed_message,
        ),
        response_example(
            "Not yet conclusive",
            {
                **PAYOUT_AMBIGUOUS_EXAMPLE,
                "attempts": [
                    ATTEMPTS_FAILED_OVER_EXAMPLE[1] | {"status": "unknown", "completed_at": None}
                ],
            },
            ambiguous_message,
            202,
        ),
        response_example(
            "Still processing",
            {**PAYOUT_EXAMPLE, "attempts": []},
            pending_message,
            202,
            description="Not yet sent to the bank, or sent and still pending there.",
        ),
    ]


def return_examples(returned_message: str) -> list[OpenApiExample]:
    return [
        request_example("With a reason", {"reason": "Account closed by the beneficiary"}),
        request_example("Default reason", {}),
        response_example("Returned", PAYOUT_RETURNED_EXAMPLE, returned_message),
    ]


def bulk_create_examples(created_message: str) -> list[OpenApiExample]:
    return [
        request_example(
            "Three payouts",
            {
                "batch_reference": "salaries-2026-03",
                "atomic": False,
                "items": [
                    {
                        "account_number": "0123456789",
                        "bank_code": "058",
                        "amount": "2500",
                        "narration": "March salary",
                        "idempotency_key": "salary-2026-03-ada",
                    },
                    {
                        "beneficiary_id": 42,
                        "amount": "1800.00",
                        "idempotency_key": "salary-2026-02-obi",
                    },
                    {
                        "account_number": "0123456780",
                        "bank_code": "058",
                        "amount": "99999999",
                        "idempotency_key": "salary-2026-03-uche",
                    },
                ],
            },
        ),
        response_example(
            "Accepted, duplicate, rejected",
            {
                "batch": BATCH_EXAMPLE,
                "items": [
                    {
                        "index": 0,
                        "idempotency_key": "salary-2026-03-ada",
                        "result": "accepted",
                        "payout": PAYOUT_EXAMPLE,
                        "error": None,
                    },
                    {
                        "index": 1,
                        "idempotency_key": "salary-2026-02-obi",
                        "result": "duplicate",
                        "payout": {
                            **PAYOUT_SUCCESSFUL_EXAMPLE,
                            "id": 1133,
                            "internal_reference": "po_20260227_0a1b2c3d4e5f60718293",
                            "idempotency_key": "salary-2026-02-obi",
                            "amount": "1800.00",
                            "total_debit_amount": "1810.00",
                        },
                        "error": None,
                    },
                    {
                        "index": 2,
                        "idempotency_key": "salary-2026-03-uche",
                        "result": "rejected",
                        "payout": None,
                        "error": {
                            "message": "insufficient available wallet balance",
                            "statusCode": 400,
                        },
                    },
                ],
                "duplicate": False,
            },
            created_message,
            202,
        ),
    ]


BULK_DETAIL_EXAMPLES = [
    response_example(
        "A batch",
        {
            **BATCH_EXAMPLE,
            "payout_status_counts": {
                "reserved": 0,
                "processing": 0,
                "dispatched": 0,
                "ambiguous": 0,
                "successful": 1,
                "failed": 0,
            },
        },
        "Payout batch retrieved successfully",
    )
]


# --- The merchant's controls (extension) --------------------------------------------------------

PAYOUT_PENDING_APPROVAL_EXAMPLE: dict[str, Any] = {
    **PAYOUT_EXAMPLE,
    "id": 1207,
    "internal_reference": "po_20260302_7c1d2e3f4a5b6c7d8e9f",
    "idempotency_key": "supplier-2026-03-okafor",
    "amount": "750000.00",
    "fee_amount": "50.00",
    "total_debit_amount": "750050.00",
    "narration": "Invoice 2026-0311",
    "approval": {"required": True, "status": "pending", "approved_at": None},
    "scheduled_for": "2026-03-03T09:00:00+01:00",
}
PAYOUT_APPROVED_EXAMPLE: dict[str, Any] = {
    **PAYOUT_PENDING_APPROVAL_EXAMPLE,
    "approval": {
        "required": True,
        "status": "approved",
        "approved_at": "2026-03-02T10:02:11.502000+01:00",
    },
    "updated_at": "2026-03-02T10:02:11.502000+01:00",
}
PAYOUT_CANCELLED_EXAMPLE: dict[str, Any] = {
    **PAYOUT_PENDING_APPROVAL_EXAMPLE,
    "status": "failed",
    "error_message": "Cancelled by the merchant",
    "approval": {"required": True, "status": "cancelled", "approved_at": None},
    "completed_at": "2026-03-02T10:05:40.220000+01:00",
    "updated_at": "2026-03-02T10:05:40.220000+01:00",
}


def create_held_examples() -> list[OpenApiExample]:
    """The create's request examples of the merchant's controls (extension)."""
    return [
        request_example(
            "Scheduled for later",
            {
                "account_number": "0123456789",
                "bank_code": "058",
                "amount": "750000",
                "narration": "Invoice 2026-0311",
                "idempotency_key": "supplier-2026-03-okafor",
                "scheduled_for": "2026-03-03T09:00:00",
            },
            "Sent at 09:00 Lagos time the next day (no offset: Lagos time). At or above the "
            "wallet's approval threshold it also waits for another key's approval.",
        ),
    ]


def approval_settings_examples(retrieved_message: str, updated_message: str) -> dict[str, Any]:
    on = {"approval_threshold": "500000.00", "approval_expires_after_seconds": 86400}
    off = {"approval_threshold": None, "approval_expires_after_seconds": 86400}
    return {
        "get": [
            response_example("Approval from NGN 500,000", on, retrieved_message),
            response_example("No approval", off, retrieved_message),
        ],
        "put": [
            request_example("Approval from NGN 500,000", {"approval_threshold": "500000.00"}),
            request_example("Turn approval off", {"approval_threshold": None}),
            response_example("Approval from NGN 500,000", on, updated_message),
            response_example("No approval", off, updated_message),
        ],
    }


def approve_examples(approved_message: str) -> list[OpenApiExample]:
    return [
        response_example(
            "Approved, waits for its time",
            PAYOUT_APPROVED_EXAMPLE,
            approved_message,
            description="Approved with a second key; sent at scheduled_for (or at once when "
            "it has none).",
        )
    ]


def cancel_examples(cancelled_message: str) -> list[OpenApiExample]:
    return [
        response_example(
            "Cancelled, funds released",
            PAYOUT_CANCELLED_EXAMPLE,
            cancelled_message,
            description="The total debit is back in the available balance; payout.failed is sent.",
        )
    ]


FLUTTERWAVE_WEBHOOK_EXAMPLES = [
    request_example(
        "transfer.completed",
        {
            "event": "transfer.completed",
            "event.type": "Transfer",
            "data": {
                "id": 33286,
                "account_number": "0123456789",
                "bank_name": "GUARANTY TRUST BANK",
                "bank_code": "058",
                "fullname": "SALAMI NGOZI UCHE",
                "currency": "NGN",
                "debit_currency": "NGN",
                "amount": 50000,
                "fee": 26.875,
                "status": "SUCCESSFUL",
                "reference": PAYOUT_EXAMPLE["internal_reference"],
                "narration": "March salary",
                "complete_message": "Successful",
                "requires_approval": 0,
                "is_approved": 1,
            },
        },
        "Sent with the verif-hash header. The status applied is the one Flutterwave's read of "
        "the transfer by data.reference confirms.",
    ),
    response_example(
        "Applied",
        {"reference": PAYOUT_EXAMPLE["internal_reference"], "status": "successful"},
        "Transfer event applied",
    ),
]
