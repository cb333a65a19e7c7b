"""Events routes, an extension beside docs/spec.md's routes: the merchant's events of the
key's mode, one event with exactly what was sent and every attempt, and a resend. Views parse
input, call one selector or service, serialize the result."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
)
from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.pagination import PAGE_PARAMETERS, page_params, page_schema, paginate
from core.api.responses import EnvelopeResponse, envelope_example, page_example, page_response
from core.api.schema_components import ApiTag
from merchants.scopes import Scope
from webhooks.api.serializers import (
    EventDetailSerializer,
    EventListItemSerializer,
    EventListParamsSerializer,
)
from webhooks.deliveries import event_resend_to_current_urls
from webhooks.selectors import EventListFilters, event_get, event_list

LIST_MESSAGE = "Events retrieved successfully"
DETAIL_MESSAGE = "Event retrieved successfully"
RESEND_MESSAGE = "Event queued for redelivery"

EXAMPLE_EVENT_ID = "evt_b2f110ce313f96d5c2e01452"
_EXAMPLE_BODY = (
    '{"id":"evt_b2f110ce313f96d5c2e01452","event":"payout.successful",'
    '"created_at":"2026-11-22T10:15:02.118204+01:00","data":{"id":42,'
    '"reference":"po_20261122_7f3a9c01d3e5b6774c2d","status":"successful","amount":"25000.00"}}'
)
_EXAMPLE_SUMMARY = {
    "callback_url": None,
    "webhook_url": {
        "status": "succeeded",
        "attempt_count": 2,
        "last_status_code": 200,
        "next_attempt_at": None,
        "delivered_at": "2026-11-22T10:15:33.904512+01:00",
    },
}
_EXAMPLE_ITEM = {
    "id": EXAMPLE_EVENT_ID,
    "type": "payout.successful",
    "reference": "po_20261122_7f3a9c01d3e5b6774c2d",
    "created_at": "2026-11-22T10:15:02.118204+01:00",
    "delivery_status": _EXAMPLE_SUMMARY,
}
_EXAMPLE_DETAIL = {
    **_EXAMPLE_ITEM,
    "payload": {
        "id": EXAMPLE_EVENT_ID,
        "event": "payout.successful",
        "created_at": "2026-11-22T10:15:02.118204+01:00",
        "data": {
            "id": 42,
            "reference": "po_20261122_7f3a9c01d3e5b6774c2d",
            "status": "successful",
            "amount": "25000.00",
        },
    },
    "body": _EXAMPLE_BODY,
    "deliveries": [
        {
            "id": 311,
            "target": "webhook_url",
            "url": "https://merchant.example.com/webhooks",
            "status": "succeeded",
            "attempt_count": 2,
            "last_status_code": 200,
            "last_error": "",
            "next_attempt_at": None,
            "give_up_at": "2026-11-25T10:15:02.118204+01:00",
            "delivered_at": "2026-11-22T10:15:33.904512+01:00",
            "resend_of": None,
            "created_at": "2026-11-22T10:15:02.118204+01:00",
            "attempts": [
                {
                    "attempt_number": 1,
                    "status_code": 503,
                    "succeeded": False,
                    "error": "",
                    "latency_ms": 212,
                    "created_at": "2026-11-22T10:15:02.402117+01:00",
                },
                {
                    "attempt_number": 2,
                    "status_code": 200,
                    "succeeded": True,
                    "error": "",
                    "latency_ms": 87,
                    "created_at": "2026-11-22T10:15:33.904512+01:00",
                },
            ],
        }
    ],
}
_EXAMPLE_RESENT = {
    **_EXAMPLE_DETAIL,
    "delivery_status": {
        "callback_url": None,
        "webhook_url": {
            "status": "pending",
            "attempt_count": 0,
            "last_status_code": None,
            "next_attempt_at": "2026-11-23T09:00:00.120331+01:00",
            "delivered_at": None,
        },
    },
    "deliveries": [
        *_EXAMPLE_DETAIL["deliveries"],
        {
            "id": 388,
            "target": "webhook_url",
            "url": "https://merchant.example.com/webhooks",
            "status": "pending",
            "attempt_count": 0,
            "last_status_code": None,
            "last_error": "",
            "next_attempt_at": "2026-11-23T09:00:00.120331+01:00",
            "give_up_at": "2026-11-26T09:00:00.120331+01:00",
            "delivered_at": None,
            "resend_of": 311,
            "created_at": "2026-11-23T09:00:00.120331+01:00",
            "attempts": [],
        },
    ],
}


EVENT_ID_PARAMETER = OpenApiParameter(
    "event_id",
    str,
    OpenApiParameter.PATH,
    description="the event id (evt_…), as in the payload's id and the X-Webhook-Event-Id header",
    examples=[OpenApiExample("event id", value=EXAMPLE_EVENT_ID)],
)


class EventListApi(MerchantApi):
    """The merchant's events of the key's mode, newest first, paginated like the payout list."""

    openapi_tag = ApiTag.EVENTS
    required_scopes = {"GET": Scope.READ}

    @extend_schema(
        operation_id="event_list",
        summary="List the events sent to your server",
        parameters=[
            *PAGE_PARAMETERS,
            EventListParamsSerializer,
        ],
        responses=page_schema("EventPage", EventListItemSerializer(many=True)),
        examples=[
            OpenApiExample(
                "a page of events",
                response_only=True,
                value=envelope_example(page_example([_EXAMPLE_ITEM]), LIST_MESSAGE),
            )
        ],
    )
    def get(self, request: Request) -> EnvelopeResponse:
        pages = page_params(request.query_params)
        params = EventListParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        filters = params.validated_data
        page = paginate(
            event_list(
                merchant=self.merchant(request),
                mode=self.mode(request),
                filters=EventListFilters(
                    event_type=filters.get("type"),
                    created_from=filters.get("from_date"),
                    created_to=filters.get("to_date"),
                    reference=filters.get("reference"),
                ),
            ),
            **pages,
        )
        return page_response(page, EventListItemSerializer, message=LIST_MESSAGE)


class EventDetailApi(MerchantApi):
    """One event of the merchant in the key's mode: the payload exactly as sent, and every
    delivery chain (resends included) with its attempts."""

    openapi_tag = ApiTag.EVENTS
    required_scopes = {"GET": Scope.READ}

    error_statuses = (404,)

    @extend_schema(
        operation_id="event_retrieve",
        summary="One event: the exact bytes sent and every delivery attempt",
        parameters=[EVENT_ID_PARAMETER],
        responses=EventDetailSerializer,
        examples=[
            OpenApiExample(
                "a payout event delivered on the second attempt",
                response_only=True,
                value=envelope_example(_EXAMPLE_DETAIL, DETAIL_MESSAGE),
            )
        ],
    )
    def get(self, request: Request, event_id: str) -> EnvelopeResponse:
        event = event_get(
            merchant=self.merchant(request), mode=self.mode(request), event_id=event_id
        )
        return EnvelopeResponse(EventDetailSerializer(event).data, message=DETAIL_MESSAGE)


class EventResendApi(MerchantApi):
    """Sends the event again (same id, same bytes) to its destinations as they are now: the
    merchant's current webhook URL for the mode and, for a collection event, the transaction's
    callback URL. Queued; the answer is the event with its new pending deliveries."""

    openapi_tag = ApiTag.EVENTS
    required_scopes = {"POST": Scope.WEBHOOKS_WRITE}

    throttle_scope = "event_resend"
    error_statuses = (404, 409)

    @extend_schema(
        operation_id="event_resend",
        summary="Send an event again to your current webhook URL",
        description=(
            "New delivery chains with the same event id and the same bytes (so the same "
            "signature under the same secret), sent to the current webhook URL for the key's "
            "mode and, for a collection event, to the transaction's callback URL; retried like "
            "the first delivery. 409 when no webhook URL is configured for the mode. Rate "
            "limited per key (THROTTLE_RATE_EVENT_RESEND, default 30/min): 429 with Retry-After."
        ),
        parameters=[EVENT_ID_PARAMETER],
        request=None,
        responses={202: EventDetailSerializer},
        examples=[
            OpenApiExample(
                "queued again",
                response_only=True,
                status_codes=["202"],
                value=envelope_example(_EXAMPLE_RESENT, RESEND_MESSAGE, 202),
            )
        ],
    )
    def post(self, request: Request, event_id: str) -> EnvelopeResponse:
        merchant, mode = self.merchant(request), self.mode(request)
        event = event_get(merchant=merchant, mode=mode, event_id=event_id)
        event_resend_to_current_urls(event=event)
        event = event_get(merchant=merchant, mode=mode, event_id=event_id)
        return EnvelopeResponse(
            EventDetailSerializer(event).data, message=RESEND_MESSAGE, status=202
        )
