"""Success responses carry a message for the envelope renderer."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response


class EnvelopeResponse(Response):
    """A DRF response whose ``data`` becomes the envelope's ``data`` and ``message`` its text."""

    def __init__(
        self,
        data: Any = None,
        *,
        message: str = "",
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(data=data, status=status, headers=headers)
        self.envelope_message = message


def envelope_example(data: Any, message: str, status_code: int = 200) -> dict[str, Any]:
    """A success answer as the envelope renderer writes it, for OpenAPI examples."""
    return {"status": True, "message": message, "data": data, "statusCode": status_code}
