"""OpenAPI examples of the payment-item routes; the collection routes show the same item."""

from __future__ import annotations

from typing import Any

from core.api.responses import response_example
from payment_items.demo import DEMO_FORM_DATA

_CREATED_AT = "2026-02-10T10:00:00.000000+01:00"
_ITEM_LIST_FIELDS: dict[str, Any] = {
    "id": 1,
    "core_service_business_id": 1,
    "name": "First term tuition",
    "description": "Tuition for the first term",
    "amount": "7000.00",
    "form_data": DEMO_FORM_DATA,
    "is_enumerated_data": False,
    "transaction_split_code": "SPL_ps4slrkw514a",
    "category": 1,
    "sub_category": 1,
    "status": 1,
    "is_deleted": False,
    "allow_quick_print": True,
    "created_at": _CREATED_AT,
    "delete_at": None,
}
# What every catalogue record's details carry besides its own fields.
_CATALOGUE_RECORD_FIELDS: dict[str, Any] = {
    "delete_at": None,
    "created_at": _CREATED_AT,
    "created_by": None,
    "is_deleted": False,
    "updated_at": _CREATED_AT,
}
PAYMENT_ITEM_LIST_EXAMPLE: dict[str, Any] = {
    **_ITEM_LIST_FIELDS,
    "category_details": {"id": 1, "name": "School fees", "status": 1},
    "sub_category_details": {"id": 1, "name": "Tuition", "status": 1},
}
PAYMENT_ITEM_DETAIL_EXAMPLE: dict[str, Any] = {
    **_ITEM_LIST_FIELDS,
    "category_details": {
        "id": 1,
        "name": "School fees",
        "status": 1,
        **_CATALOGUE_RECORD_FIELDS,
    },
    "sub_category_details": {
        "id": 1,
        "name": "Tuition",
        "status": 1,
        **_CATALOGUE_RECORD_FIELDS,
        "business_registration_type_id": 1,
    },
    "can_edit_item": True,
    "show_on_agent_app": False,
    "updated_at": _CREATED_AT,
}

LIST_EXAMPLES = [
    response_example(
        "Active items",
        [
            PAYMENT_ITEM_LIST_EXAMPLE,
            {
                **PAYMENT_ITEM_LIST_EXAMPLE,
                "id": 2,
                "name": "Development levy (any amount)",
                "description": None,
                "amount": "0.00",
                "form_data": [],
                "transaction_split_code": "",
                "allow_quick_print": False,
            },
        ],
        "Payment items retrieved",
    )
]
DETAIL_EXAMPLES = [
    response_example("A payment item", PAYMENT_ITEM_DETAIL_EXAMPLE, "Payment item retrieved")
]
