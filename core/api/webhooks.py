"""The base of the routes a provider calls (``ProviderWebhookApi``): authenticated by the
provider's own signature, which the view checks, never by a merchant key; and their OpenAPI
description (``provider_event_schema``: any JSON object in, an acknowledgement out)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from core.api.schema_components import ApiTag
from core.exceptions import ApplicationError

INVALID_SIGNATURE_MESSAGE = "Invalid or missing provider signature"

# A request body documented only as a JSON object: the provider's own event shape.
ANY_JSON_OBJECT: dict[str, Any] = {"application/json": {"type": "object"}}


class ProviderWebhookApi(APIView):
    """A provider's webhook: no merchant key, no throttle; the view checks the provider's
    signature on the raw body first and refuses a request without a valid one
    (``signature_refused``)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []
    openapi_tag = ApiTag.PROVIDER_WEBHOOKS

    def signature_refused(self, request: Request, reason: str) -> ApplicationError:
        """The 401 for a missing or wrong signature, logged (as a warning of the view's module)
        with ``reason`` and the caller's address."""
        logging.getLogger(type(self).__module__).warning(
            "%s (from %s)", reason, request.META.get("REMOTE_ADDR", "")
        )
        return ApplicationError(INVALID_SIGNATURE_MESSAGE, status=401)


def acknowledgement_response(properties: dict[str, Any], description: str) -> OpenApiResponse:
    """A provider webhook's 200: ``data`` null (the event ignored) or an object holding each of
    ``properties`` (what the event applied to)."""
    return OpenApiResponse(
        {
            "type": "object",
            "nullable": True,
            "properties": properties,
            "required": list(properties),
        },
        description=description,
    )


def provider_event_schema(
    *,
    operation_id: str,
    summary: str,
    description: str,
    acknowledged: dict[str, Any],
    acknowledgement: str,
    examples: Sequence[OpenApiExample],
) -> Callable[[Any], Any]:
    """``extend_schema`` of a route that takes a provider's event: no merchant key, the body any
    JSON object (the provider's own shape), the 200 ``acknowledgement_response(acknowledged,
    acknowledgement)``."""
    return extend_schema(
        operation_id=operation_id,
        summary=summary,
        description=description,
        request=ANY_JSON_OBJECT,
        responses={200: acknowledgement_response(acknowledged, acknowledgement)},
        examples=list(examples),
        auth=[],
    )
