"""OpenAPI examples of the wallet, bank and funding routes."""

from __future__ import annotations

from typing import Any

from core.api.responses import page_example, request_example, response_example

WALLET_EXAMPLE: dict[str, Any] = {
    "currency": "NGN",
    "status": "active",
    "available_balance": "997490.00",
    "reserved_balance": "2510.00",
    "static_account": {
        "account_number": "3983654230",
        "bank_name": "Wema Bank",
        "account_name": "Ada Stores Ltd",
    },
}
WALLET_EXAMPLES = [response_example("A wallet", WALLET_EXAMPLE, "Wallet retrieved successfully")]

LEDGER_EXAMPLES = [
    response_example(
        "Newest first",
        page_example(
            [
                {
                    "id": 2,
                    "entry_type": "payout_reserve",
                    "amount": "2510.00",
                    "fee_amount": "0.00",
                    "available_delta": "-2510.00",
                    "reserved_delta": "2510.00",
                    "available_balance_after": "997490.00",
                    "reserved_balance_after": "2510.00",
                    "reference": "po_20260302_3f9a1c2b4d5e6f708192",
                    "payout_id": 1201,
                    "description": "",
                    "created_at": "2026-03-02T09:15:04.119000+01:00",
                },
                {
                    "id": 1,
                    "entry_type": "funding",
                    "amount": "1000000.00",
                    "fee_amount": "0.00",
                    "available_delta": "1000000.00",
                    "reserved_delta": "0.00",
                    "available_balance_after": "1000000.00",
                    "reserved_balance_after": "0.00",
                    "reference": "FT26061ABCD1234",
                    "payout_id": None,
                    "description": "Inbound transfer",
                    "created_at": "2026-03-01T16:40:12.000000+01:00",
                },
            ]
        ),
        "Ledger entries retrieved successfully",
    )
]


def _movements(
    fundings: tuple[int, str],
    reserved: tuple[int, str],
    captured: tuple[int, str, str] = (0, "0.00", "0.00"),
    settled: tuple[int, str] = (0, "0.00"),
) -> dict[str, Any]:
    return {
        "fundings": {"count": fundings[0], "amount": fundings[1]},
        "payouts_reserved": {"count": reserved[0], "amount": reserved[1]},
        "payouts_captured": {
            "count": captured[0],
            "amount": captured[1],
            "fee_amount": captured[2],
        },
        "releases": {"count": 0, "amount": "0.00"},
        "returns": {"count": 0, "amount": "0.00", "fee_amount": "0.00"},
        "settlements": {"count": settled[0], "amount": settled[1]},
        "refunds": {"count": 0, "amount": "0.00"},
        "refund_reversals": {"count": 0, "amount": "0.00"},
        "subaccount_shares": {"count": 0, "amount": "0.00"},
    }


_ZERO = {"available": "0.00", "reserved": "0.00", "total": "0.00"}
_FUNDED = {"available": "1000000.00", "reserved": "0.00", "total": "1000000.00"}
# The second day: a payout of 2,500.00 (fee 10.00) and a settlement of collections (net
# 10,500.00).
_AFTER_PAYOUT = {"available": "1007990.00", "reserved": "0.00", "total": "1007990.00"}
STATEMENT_EXAMPLES = [
    response_example(
        "Two Lagos days",
        {
            "wallet_id": 1,
            "mode": "live",
            "currency": "NGN",
            "timezone": "Africa/Lagos",
            "utc_offset": "+01:00",
            "from_date": "2026-03-01",
            "to_date": "2026-03-02",
            "opening": _ZERO,
            "closing": _AFTER_PAYOUT,
            "totals": _movements(
                (1, "1000000.00"), (1, "2510.00"), (1, "2500.00", "10.00"), (1, "10500.00")
            ),
            "days": [
                {
                    "date": "2026-03-01",
                    "opening": _ZERO,
                    "closing": _FUNDED,
                    "totals": _movements((1, "1000000.00"), (0, "0.00")),
                },
                {
                    "date": "2026-03-02",
                    "opening": _FUNDED,
                    "closing": _AFTER_PAYOUT,
                    "totals": _movements(
                        (0, "0.00"), (1, "2510.00"), (1, "2500.00", "10.00"), (1, "10500.00")
                    ),
                },
            ],
        },
        "Statement retrieved successfully",
    )
]

BANK_LIST_EXAMPLES = [
    response_example(
        "Active banks",
        [
            {"id": 1, "name": "Access Bank", "bank_code": "044", "institution_code": "000014"},
            {
                "id": 9,
                "name": "Guaranty Trust Bank",
                "bank_code": "058",
                "institution_code": "000013",
            },
        ],
        "Banks retrieved successfully",
    )
]

NAME_ENQUIRY_EXAMPLES = [
    request_example("An account at GTBank", {"account_number": "0123456789", "bank_code": "058"}),
    response_example(
        "Resolved",
        {
            "account_name": "SALAMI NGOZI UCHE",
            "account_number": "0123456789",
            "bank_code": "058",
            "reference": "NE-20260302091501-8386C8E2ACAE",
        },
        "Account name resolved successfully",
    ),
]

TEST_FUND_EXAMPLES = [
    request_example("Fund NGN 50,000", {"amount": "50000"}),
    request_example(
        "With your own reference",
        {"amount": "50000.00", "reference": "my-test-funding-1"},
        "The same reference again records nothing more (duplicate=true).",
    ),
    response_example(
        "Funded",
        {
            "reference": "TEST-FUND-7D03F35E6024327D",
            "amount": "50000.00",
            "currency": "NGN",
            "duplicate": False,
            "account_number": "3983654230",
            "credited_at": "2026-03-02T09:20:11.402000+01:00",
            "available_balance": "1047490.00",
            "reserved_balance": "2510.00",
        },
        "Test wallet funded",
    ),
]

FUNDING_NOTIFICATION_EXAMPLES = [
    request_example(
        "An inbound transfer",
        {
            "reference": "FT26061ABCD1234",
            "account_number": "3983654230",
            "amount": "1000000.00",
            "currency": "NGN",
            "sender_account_name": "ADA STORES LTD",
            "sender_account_number": "0023456789",
            "sender_bank_name": "Access Bank",
            "narration": "Wallet top-up",
        },
    ),
    response_example(
        "Credited",
        {
            "reference": "FT26061ABCD1234",
            "amount": "1000000.00",
            "currency": "NGN",
            "duplicate": False,
            "account_number": "3983654230",
            "credited_at": "2026-03-01T16:40:12.000000+01:00",
        },
        "Funding credited",
    ),
]
