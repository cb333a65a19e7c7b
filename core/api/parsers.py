"""The one JSON reader of the API: request bodies parsed by DRF and the raw bodies of signed
provider notifications both go through ``json_body_load``.

It refuses, before any view sees the data:

* text that is not UTF-8 or not JSON, ``NaN``/``Infinity`` and numbers too large for a float
  (400 ``Malformed JSON body``);
* containers nested more than ``MAX_JSON_DEPTH`` levels deep (400 ``Malformed JSON body: nested
  more than 32 levels deep``), whatever the depth: the standard library's recursive decoder
  is never asked to go deeper than the interpreter's stack allows;
* strings and object keys holding NUL characters or lone surrogates, which no database column
  can store (400 naming the field, e.g. ``meta.note: Null characters are not allowed.``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import IO, Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 32
MALFORMED_JSON_MESSAGE = "Malformed JSON body"
TOO_DEEP_MESSAGE = f"{MALFORMED_JSON_MESSAGE}: nested more than {MAX_JSON_DEPTH} levels deep"
NUL_MESSAGE = "Null characters are not allowed."
NOT_TEXT_MESSAGE = "must be valid Unicode text"
BAD_KEY_MESSAGE = "field names must be valid Unicode text without NUL characters"


class MalformedJSONError(exceptions.ParseError):
    """A body that is not acceptable JSON; the message is safe to show as is."""

    default_detail = MALFORMED_JSON_MESSAGE


def _parse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("number out of range")
    return value


def _nesting_depth(document: Any) -> int:
    """How many containers deep the parsed document goes (a scalar is 0)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, Mapping):
            children: Any = current.values()
        elif isinstance(current, list):
            children = current
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return NUL_MESSAGE
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return NOT_TEXT_MESSAGE
    return None


def _key_name(key: str) -> str:
    """A field name as it may appear in a message: unprintable characters escaped."""
    if key.isprintable() and _text_problem(key) is None:
        return key
    return key.encode("unicode_escape").decode("ascii")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _strings(value: Any, path: str) -> Iterator[tuple[str, str, bool]]:
    """Every string of the document with where it sits: (path, text, is_a_key)."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        current, where = stack.pop()
        if isinstance(current, str):
            yield where, current, False
        elif isinstance(current, Mapping):
            for key, item in current.items():
                yield where, key, True
                stack.append((item, _join(where, _key_name(key))))
        elif isinstance(current, list):
            stack.extend((item, f"{where}[{index}]") for index, item in enumerate(current))


def _text_check(document: Any) -> None:
    for path, text, is_key in _strings(document, ""):
        problem = _text_problem(text)
        if problem is None:
            continue
        if is_key:
            raise exceptions.ValidationError({path or "request body": [BAD_KEY_MESSAGE]})
        raise exceptions.ValidationError({path or "request body": [problem]})


def json_body_load(raw: bytes | str, *, encoding: str = "utf-8") -> Any:
    """The parsed JSON document of a request body.

    Raises ``MalformedJSONError`` (400 ``Malformed JSON body``, with the reason when the body
    is too deep) or ``ValidationError`` naming the field that holds unstorable text.
    """
    try:
        text = raw if isinstance(raw, str) else bytes(raw).decode(encoding)
        document = json.loads(text, parse_constant=_parse_constant, parse_float=_parse_float)
    except RecursionError:
        raise MalformedJSONError(TOO_DEEP_MESSAGE) from None
    except (ValueError, LookupError):
        raise MalformedJSONError() from None
    if (text.count("[") + text.count("{") > MAX_JSON_DEPTH) and (
        _nesting_depth(document) > MAX_JSON_DEPTH
    ):
        raise MalformedJSONError(TOO_DEEP_MESSAGE)
    if "\\u" in text or not _is_utf8(encoding) or isinstance(raw, str):
        _text_check(document)
    return document


def _is_utf8(encoding: str) -> bool:
    return encoding.lower().replace("_", "-") in ("utf-8", "utf8")


class StrictJSONParser(JSONParser):
    """DRF's JSON parser reading through ``json_body_load``."""

    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        context = parser_context or {}
        encoding = context.get("encoding") or "utf-8"
        raw = stream.read() if stream is not None else b""
        return json_body_load(raw, encoding=encoding)
