"""The API documentation a merchant reads: one tag per part of the API, descriptions that stand
alone, and a request and response example on every operation that agree with the schema."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from rest_framework.test import APIClient

from core.api.schema_components import ApiTag

METHODS = ("get", "post", "put", "patch", "delete")
# Words that lean on a document the reader of the docs does not have.
CITATIONS = ("§", "the spec", "spec's", "specification")


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    return response.json()


def _operations(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                yield f"{method.upper()} {path}", item[method]


def _json_schema(node: Any, components: dict[str, Any], depth: int = 0) -> Any:
    """OpenAPI 3.0 → JSON Schema: ``$ref`` inlined, ``nullable`` as a null alternative."""
    assert depth < 40, "schema nests too deep to inline"
    if isinstance(node, list):
        return [_json_schema(item, components, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return _json_schema(components[name], components, depth + 1)
    converted = {
        key: _json_schema(value, components, depth + 1)
        for key, value in node.items()
        if key not in ("nullable", "readOnly", "writeOnly", "example", "examples", "format")
    }
    if "properties" in converted:
        # An example field the schema does not know is a stale example.
        converted.setdefault("additionalProperties", False)
    if node.get("nullable"):
        enum = converted.pop("enum", None)
        inner = dict(converted, enum=[*enum, None]) if enum is not None else converted
        return {"anyOf": [inner, {"type": "null"}]}
    return converted


def test_every_operation_has_one_tag_of_the_api(schema: dict[str, Any]) -> None:
    known = {tag.value for tag in ApiTag}
    wrong = {
        name: operation.get("tags")
        for name, operation in _operations(schema)
        if len(operation.get("tags", [])) != 1 or operation["tags"][0] not in known
    }
    assert wrong == {}
    assert [tag["name"] for tag in schema["tags"]] == [tag.value for tag in ApiTag]
    used = {operation["tags"][0] for _, operation in _operations(schema)}
    assert used == known


def test_every_operation_has_a_summary_and_a_description_that_stands_alone(
    schema: dict[str, Any],
) -> None:
    lacking = [
        name
        for name, operation in _operations(schema)
        if not operation.get("summary") or len(operation.get("description", "")) < 40
    ]
    assert lacking == []
    citing = [
        name
        for name, operation in _operations(schema)
        if any(
            word in (operation.get("description", "") + operation.get("summary", "")).lower()
            for word in CITATIONS
        )
    ]
    assert citing == []


def test_every_operation_with_a_body_has_a_request_example(schema: dict[str, Any]) -> None:
    missing = [
        name
        for name, operation in _operations(schema)
        if "requestBody" in operation
        and not operation["requestBody"]["content"].get("application/json", {}).get("examples")
    ]
    assert missing == []


def test_every_success_response_has_an_example(schema: dict[str, Any]) -> None:
    missing = [
        f"{name} {code} {media}"
        for name, operation in _operations(schema)
        for code, response in operation["responses"].items()
        if code.startswith("2")
        for media, body in response.get("content", {}).items()
        if media == "application/json" and not body.get("examples")
    ]
    assert missing == []


def test_every_example_agrees_with_its_schema(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    disagreements = []
    for name, operation in _operations(schema):
        bodies = [("request", operation.get("requestBody", {}).get("content", {}))]
        bodies += [(code, r.get("content", {})) for code, r in operation["responses"].items()]
        for where, content in bodies:
            body = content.get("application/json")
            if not body or not body.get("examples"):
                continue
            body_schema = _json_schema(copy.deepcopy(body["schema"]), components)
            for title, example in body["examples"].items():
                errors = list(
                    jsonschema.Draft202012Validator(body_schema).iter_errors(example["value"])
                )
                disagreements += [
                    f"{name} {where} {title!r}: {error.json_path}: {error.message}"
                    for error in errors
                ]
    assert disagreements == [], "\n".join(disagreements)


def test_a_payout_example_shows_every_field_the_api_returns(schema: dict[str, Any]) -> None:
    create = schema["paths"]["/api/v1/transactions/in/merchant-wallet/payouts"]["post"]
    example = next(iter(create["responses"]["202"]["content"]["application/json"]["examples"]))
    payout = create["responses"]["202"]["content"]["application/json"]["examples"][example]
    fields = set(schema["components"]["schemas"]["PayoutOutput"]["properties"])
    assert set(payout["value"]["data"]["payout"]) == fields
