"""Text in a request's path, query string and headers that no route can use.

Checked once per API request, after the caller is authenticated (a merchant key, or a provider
signature), so a refused credential answers first:

* a path parameter holding a control character (NUL included) names nothing: 404;
* a query parameter (name or value) holding NUL: 400 naming it;
* a header holding NUL, CR or LF (RFC 9110 §5.5 says such a field value is invalid): 400
  naming it.

JSON bodies are checked by ``core.api.parsers``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest
from rest_framework.request import Request

from core.exceptions import ApplicationError, NotFoundError

NOT_FOUND_MESSAGE = "Not found"
# Control characters (C0 and DEL): no route, reference or id contains one.
CONTROL_CHARACTERS = frozenset(chr(code) for code in (*range(0x20), 0x7F))
_HEADER_FORBIDDEN = frozenset("\x00\r\n")
# Request metadata carried as headers without the HTTP_ prefix.
_UNPREFIXED_HEADERS = frozenset({"CONTENT_LENGTH", "CONTENT_TYPE"})


def printable_name(name: str) -> str:
    """A name taken from the request as it may appear in a message."""
    return name if name.isprintable() else name.encode("unicode_escape").decode("ascii")


def _header_name(meta_key: str) -> str:
    return "-".join(part.capitalize() for part in meta_key.removeprefix("HTTP_").split("_"))


def path_names_nothing(path: str) -> bool:
    return not CONTROL_CHARACTERS.isdisjoint(path)


def request_text_check(request: Request | HttpRequest, path_parameters: Mapping[str, Any]) -> None:
    """Raises ``NotFoundError`` or ``ApplicationError`` (400) for text no route can use."""
    for value in path_parameters.values():
        if isinstance(value, str) and path_names_nothing(value):
            raise NotFoundError(NOT_FOUND_MESSAGE)
    for name, values in request.GET.lists():
        if "\x00" in name:
            shown = printable_name(name)
            raise ApplicationError(f"{shown}: Null characters are not allowed in a parameter name.")
        if any("\x00" in value for value in values):
            raise ApplicationError(f"{printable_name(name)}: Null characters are not allowed.")
    for key, value in request.META.items():
        if not (key.startswith("HTTP_") or key in _UNPREFIXED_HEADERS):
            continue
        if isinstance(value, str) and not _HEADER_FORBIDDEN.isdisjoint(value):
            raise ApplicationError(
                f"{_header_name(key)} header: Null and line-break characters are not allowed."
            )
