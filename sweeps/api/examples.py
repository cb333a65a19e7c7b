"""OpenAPI examples of the sweep routes: the sweep settings and a sweep as a merchant gets them
back."""

from __future__ import annotations

from typing import Any

from payouts.api.examples import PAYOUT_EXAMPLE

SETTINGS_RETRIEVED = "Sweep settings retrieved successfully"
SETTINGS_UPDATED = "Sweep settings updated"
SWEEP_CREATED = "Sweep payout accepted"
SWEEP_DUPLICATE = "Today's sweep was already made"

_ACCOUNT_ACTIVE: dict[str, Any] = {
    "bank_code": "058",
    "bank_name": "Guaranty Trust Bank",
    "account_number": "0123456789",
    "account_name": "SALAMI NGOZI UCHE",
    "effective_at": "2026-11-25T10:00:00+01:00",
    "status": "active",
}
_ACCOUNT_PENDING: dict[str, Any] = {
    "bank_code": "044",
    "bank_name": "Access Bank",
    "account_number": "0987654321",
    "account_name": "ADEYEMI TUNDE",
    "effective_at": "2026-11-28T10:00:00+01:00",
    "status": "pending",
}
SETTINGS_EXAMPLE: dict[str, Any] = {
    "schedule": "daily",
    "time": "17:00",
    "weekday": None,
    "amount_to_keep": "50000.00",
    "settlement_account": _ACCOUNT_ACTIVE,
    "pending_account": _ACCOUNT_PENDING,
    "next_sweep_at": "2026-11-27T17:00:00+01:00",
}
SWEEP_EXAMPLE: dict[str, Any] = {
    "id": 7,
    "sweep_date": "2026-11-27",
    "trigger": "manual",
    "amount": "149950.00",
    "amount_to_keep": "50000.00",
    # An ordinary payout: the payout resource of the payout routes.
    "payout": {
        **PAYOUT_EXAMPLE,
        "id": 1288,
        "internal_reference": "po_20261127_8c1f0e2d3b4a59687766",
        "idempotency_key": "sweep-12-2026-11-27",
        "amount": "149950.00",
        "fee_amount": "50.00",
        "total_debit_amount": "150000.00",
        "narration": "Sweep to settlement account",
        "created_at": "2026-11-27T11:02:13.512000+01:00",
        "updated_at": "2026-11-27T11:02:13.512000+01:00",
    },
    "created_at": "2026-11-27T11:02:13.530000+01:00",
}
