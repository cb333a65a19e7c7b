"""OpenAPI: every success body is described inside the envelope, every route lists its errors."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from drf_spectacular.openapi import AutoSchema

from core.api.auth_styles import AuthErrorStyle
from core.api.permissions import required_scope
from core.api.schema_components import ApiTag

ERROR_ENVELOPE_REF = {"$ref": "#/components/schemas/ErrorEnvelope"}
FORBIDDEN_BARE_REF = {"$ref": "#/components/schemas/ForbiddenError"}

_ERROR_DESCRIPTIONS = {
    400: "Validation or business-rule failure",
    401: "Invalid or missing secret key",
    403: "Forbidden resource",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type (send application/json)",
    429: "Rate limit exceeded",
    500: "Internal server error",
    503: "Temporarily unavailable",
}


def _envelope(data_schema: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "status": {"type": "boolean"},
            "message": {"type": "string"},
            "data": data_schema or {"nullable": True},
            "statusCode": {"type": "integer"},
        },
        "required": ["status", "message", "data", "statusCode"],
    }


def _error_response(status_code: int, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "description": _ERROR_DESCRIPTIONS.get(status_code, "Error"),
        "content": {"application/json": {"schema": schema}},
    }


class EnvelopeAutoSchema(AutoSchema):
    """Wraps 2xx JSON bodies in ``{status, message, data, statusCode}`` and adds error bodies.

    Views may set ``error_statuses`` (for example ``(404, 409)``) beyond the defaults. Every
    view under ``/api/v1/`` names its part of the API with ``openapi_tag`` (an ``ApiTag``). The
    scope a route's method needs (``required_scopes``) is shown as ``x-required-scope``, in the
    description, and by a 403 answer.
    """

    _examples_are_whole_answers = False

    def _get_examples(self, *args: Any, **kwargs: Any) -> Any:
        """Every example is a whole answer (the envelope around a list, too), so it is shown as
        written, never wrapped as one item of a list."""
        self._examples_are_whole_answers = True
        try:
            return super()._get_examples(*args, **kwargs)
        finally:
            self._examples_are_whole_answers = False

    def _is_list_view(self, serializer: Any = None) -> bool:
        if self._examples_are_whole_answers:
            return False
        return super()._is_list_view(serializer)

    def get_tags(self) -> list[str]:
        tag = getattr(self.view, "openapi_tag", None)
        if self.path.startswith("/api/v1/") and not isinstance(tag, ApiTag):
            raise ImproperlyConfigured(
                f"{type(self.view).__name__} must set openapi_tag to an ApiTag"
            )
        return [tag.value] if isinstance(tag, ApiTag) else super().get_tags()

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if not operation or not self.path.startswith("/api/v1/"):
            return operation
        for parameter in operation.get("parameters", []):
            schema = parameter.get("schema", {})
            if parameter.get("in") == "path" and schema.get("type") == "integer":
                # An id in the path is digits only: anything else names no route (404).
                schema.setdefault("minimum", 0)
        responses: dict[str, Any] = operation.setdefault("responses", {})
        for code, response in list(responses.items()):
            if not str(code).startswith("2"):
                continue
            content = response.get("content", {})
            json_body = content.get("application/json")
            if json_body is not None:
                json_body["schema"] = _envelope(json_body.get("schema"))
        style = getattr(self.view, "auth_error_style", AuthErrorStyle.UNAUTHORIZED)
        scope = required_scope(self.view, self.method)
        if scope is not None:
            operation["x-required-scope"] = str(scope)
            needs = f"Needs a key holding the scope `{scope}` (403 names the scope otherwise)."
            description = operation.get("description", "")
            operation["description"] = f"{description}\n\n{needs}" if description else needs
        if style == AuthErrorStyle.UNAUTHORIZED:
            responses.setdefault("401", _error_response(401, ERROR_ENVELOPE_REF))
            if scope is not None:
                responses.setdefault("403", _error_response(403, ERROR_ENVELOPE_REF))
        elif style == AuthErrorStyle.FORBIDDEN:
            responses.setdefault("403", _error_response(403, ERROR_ENVELOPE_REF))
        else:
            responses.setdefault("403", _error_response(403, FORBIDDEN_BARE_REF))
        # 404: a path naming nothing (an unknown route, or one holding control characters).
        extra = set(getattr(self.view, "error_statuses", ())) | {400, 404, 405, 413, 429, 500}
        if "requestBody" in operation:
            extra.add(415)  # a body in a media type the route does not parse
        for status_code in sorted(extra):
            responses.setdefault(str(status_code), _error_response(status_code, ERROR_ENVELOPE_REF))
        return operation


NULL_ALTERNATIVE: dict[str, Any] = {"type": "object", "nullable": True, "enum": [None]}


def _nullable_reference_rewrite(node: Any) -> Any:
    """``{allOf: [{$ref}], nullable: true}`` as OpenAPI 3.0 validators read it strictly.

    In 3.0 ``nullable`` widens only the ``type`` beside it, and the ``allOf`` still applies the
    referenced (non-nullable) schema to a null, so strict validators refuse a null there. The
    form 3.0 allows is a choice between the reference and a schema that admits null alone."""
    if isinstance(node, list):
        return [_nullable_reference_rewrite(item) for item in node]
    if not isinstance(node, dict):
        return node
    rewritten = {key: _nullable_reference_rewrite(value) for key, value in node.items()}
    all_of = rewritten.get("allOf")
    if (
        rewritten.get("nullable") is True
        and "type" not in rewritten
        and isinstance(all_of, list)
        and len(all_of) == 1
        and set(all_of[0]) == {"$ref"}
    ):
        del rewritten["nullable"], rewritten["allOf"]
        rewritten["oneOf"] = [all_of[0], dict(NULL_ALTERNATIVE)]
    return rewritten


def nullable_references_postprocess(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: every nullable reference in a strict 3.0 form."""
    return _nullable_reference_rewrite(result)
