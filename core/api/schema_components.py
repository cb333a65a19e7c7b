"""OpenAPI components for the two error shapes; imported by settings, so it imports nothing."""

from typing import Any

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
