"""OpenAPI components for the two error shapes; imported by settings, so it imports nothing."""

from typing import Any

SCHEMA_COMPONENTS: dict[str, Any] = {
    "ErrorEnvelope": {
        "type": "object",
        "description": "Every error: status false, data null.",
        "properties": {
            "status": {"type": "boolean", "enum": [False]},
            "message": {"type": "string"},
            "data": {"nullable": True, "enum": [None]},
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
            "statusCode": {"type": "integer", "enum": [403]},
        },
        "required": ["message", "error", "statusCode"],
        "additionalProperties": False,
    },
}
