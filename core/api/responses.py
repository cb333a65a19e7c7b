"""Success responses carry a message for the envelope renderer; one page of a list
(``page_response``); OpenAPI examples of answers and requests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drf_spectacular.utils import OpenApiExample
from rest_framework.response import Response

if TYPE_CHECKING:
    from rest_framework.serializers import BaseSerializer

    from core.api.pagination import Page


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


def page_response(
    page: Page, serializer_class: type[BaseSerializer], *, message: str
) -> EnvelopeResponse:
    """One page of a list: its items through ``serializer_class`` and its pagination object."""
    return EnvelopeResponse(
        {
            "items": serializer_class(page.items, many=True).data,
            "pagination": page.pagination(),
        },
        message=message,
    )


def envelope_example(data: Any, message: str, status_code: int = 200) -> dict[str, Any]:
    """A success answer as the envelope renderer writes it, for OpenAPI examples."""
    return {"status": True, "message": message, "data": data, "statusCode": status_code}


def response_example(
    name: str, data: Any, message: str, status_code: int = 200, description: str = ""
) -> OpenApiExample:
    """An OpenAPI example of a success answer in the envelope, under its status code."""
    return OpenApiExample(
        name,
        value=envelope_example(data, message, status_code),
        response_only=True,
        status_codes=[str(status_code)],
        description=description,
    )


def accepted_examples(
    resource: str, *, first: Any, again: Any, created_message: str, duplicate_message: str
) -> list[OpenApiExample]:
    """The two 202 answers of an idempotent create: the first request's (``{resource: first,
    "duplicate": false}``) and the same request again's (``duplicate`` true, the resource as it
    stands by then, ``again``)."""
    return [
        response_example("Accepted", {resource: first, "duplicate": False}, created_message, 202),
        response_example(
            "Same request again", {resource: again, "duplicate": True}, duplicate_message, 202
        ),
    ]


def request_example(name: str, value: Any, description: str = "") -> OpenApiExample:
    """An OpenAPI example of a request body."""
    return OpenApiExample(name, value=value, request_only=True, description=description)


def page_example(items: list[Any], *, limit: int = 50) -> dict[str, Any]:
    """A one-page list's ``data`` as paginated routes answer it, for OpenAPI examples."""
    return {
        "items": items,
        "pagination": {
            "page": 1,
            "limit": limit,
            "total": len(items),
            "total_pages": 1 if items else 0,
            "has_next_page": False,
            "has_previous_page": False,
        },
    }
