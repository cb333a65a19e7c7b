"""Events routes, an extension beside docs/spec.md's routes: the merchant's events of the
key's mode, one event with exactly what was sent and every attempt, and a resend; and the
webhook settings routes: the URL, the secret's rotation and a test ping. Views parse input,
call one selector or service, serialize the result."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
)
from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.lists import list_query, list_schema
from core.api.pagination import paginate
from core.api.responses import (
    EnvelopeResponse,
    envelope_example,
    page_example,
    page_response,
    request_example,
    response_example,
)
from core.api.schema_components import ApiTag
from merchants.scopes import Scope
from merchants.selectors import WebhookSettingsView, webhook_settings_view_get
from merchants.services import webhook_secret_rotate_recorded, webhook_settings_set_recorded
from webhooks.api.examples import (
    EXAMPLE_URL,
    PING_ANSWERED_EXAMPLE,
    PING_SENT,
    PING_TIMED_OUT_EXAMPLE,
    ROTATED_EXAMPLE,
    ROTATED_MESSAGE,
    SETTINGS_EXAMPLE,
    SETTINGS_FIRST_SAVED_EXAMPLE,
    SETTINGS_IN_OVERLAP_EXAMPLE,
    SETTINGS_RETRIEVED,
    SETTINGS_SAVED_EXAMPLE,
    SETTINGS_UPDATED,
)
from webhooks.api.serializers import (
    EventDetailSerializer,
    EventListItemSerializer,
    EventListParamsSerializer,
    WebhookPingOutputSerializer,
    WebhookSecretRotatedSerializer,
    WebhookSecretRotateInputSerializer,
    WebhookSettingsInputSerializer,
    WebhookSettingsOutputSerializer,
    WebhookSettingsSavedSerializer,
)
from webhooks.deliveries import event_resend_to_current_urls
from webhooks.ping import webhook_ping_send
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

    @list_schema(
        operation_id="event_list",
        summary="List the events sent to your server",
        parameters=[EventListParamsSerializer],
        page_name="EventPage",
        item_serializer=EventListItemSerializer,
        examples=[
            OpenApiExample(
                "a page of events",
                response_only=True,
                value=envelope_example(page_example([_EXAMPLE_ITEM]), LIST_MESSAGE),
            )
        ],
    )
    def get(self, request: Request) -> EnvelopeResponse:
        pages, filters = list_query(request.query_params, EventListParamsSerializer)
        page = paginate(
            event_list(
                merchant=self.merchant(request),
                mode=self.mode(request),
                filters=EventListFilters(**filters),
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


# --- Webhook settings --------------------------------------------------------------------------


def _settings_data(view: WebhookSettingsView, **extra: Any) -> dict[str, Any]:
    return {**WebhookSettingsOutputSerializer(view).data, **extra}


class WebhookSettingsApi(MerchantApi):
    """The merchant's webhook URL and whether a signing secret is set, for the key's mode; the
    URL is set here (the secret never leaves the service but on issue)."""

    openapi_tag = ApiTag.WEBHOOK_SETTINGS
    error_statuses = (400,)

    required_scopes = {"GET": Scope.READ, "PUT": Scope.WEBHOOKS_WRITE}

    @extend_schema(
        operation_id="webhook_settings_retrieve",
        summary="Retrieve your webhook settings",
        description=(
            "The webhook URL of the key's mode, whether a signing secret is set (never the "
            "secret) and, during a rotation overlap, until when the previous secret keeps "
            "signing beside the new one. A test key reads the test settings, a live key the "
            "live ones."
        ),
        responses=WebhookSettingsOutputSerializer,
        examples=[
            response_example("Settings", SETTINGS_EXAMPLE, SETTINGS_RETRIEVED),
            response_example(
                "During a rotation overlap", SETTINGS_IN_OVERLAP_EXAMPLE, SETTINGS_RETRIEVED
            ),
        ],
    )
    def get(self, request: Request) -> EnvelopeResponse:
        view = webhook_settings_view_get(
            merchant=self.merchant(request), mode=self.mode(request), now=timezone.now()
        )
        return EnvelopeResponse(_settings_data(view), message=SETTINGS_RETRIEVED)

    @extend_schema(
        operation_id="webhook_settings_update",
        summary="Set your webhook URL",
        description=(
            "Sets the webhook URL of the key's mode: an https URL whose host resolves only to "
            "public addresses (the SSRF rule; under make run also http on loopback and private "
            "hosts), or an empty string to stop webhooks. A refused URL answers 400 naming url "
            "and changes nothing. The first save of a mode generates its signing secret and "
            "answers it in secret, this once; later saves keep the secret (secret null). "
            "Pending deliveries follow the new URL from their next attempt. Audited."
        ),
        request=WebhookSettingsInputSerializer,
        responses=WebhookSettingsSavedSerializer,
        examples=[
            request_example("Set the URL", {"url": EXAMPLE_URL}),
            request_example("Stop webhooks", {"url": ""}),
            response_example("URL changed", SETTINGS_SAVED_EXAMPLE, SETTINGS_UPDATED),
            response_example(
                "First save: the secret, shown once", SETTINGS_FIRST_SAVED_EXAMPLE, SETTINGS_UPDATED
            ),
        ],
    )
    def put(self, request: Request) -> EnvelopeResponse:
        serializer = WebhookSettingsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        merchant, mode = self.merchant(request), self.mode(request)
        saved = webhook_settings_set_recorded(
            merchant=merchant,
            mode=mode,
            url=serializer.validated_data["url"],
            actor=self.actor(request),
            request=request,
        )
        view = webhook_settings_view_get(merchant=merchant, mode=mode, now=timezone.now())
        return EnvelopeResponse(
            _settings_data(view, secret=saved.issued_secret or None), message=SETTINGS_UPDATED
        )


class WebhookSecretRotateApi(MerchantApi):
    """A new signing secret for the key's mode, shown once; the previous one keeps signing
    beside it for the overlap."""

    openapi_tag = ApiTag.WEBHOOK_SETTINGS
    error_statuses = (400,)
    required_scopes = {"POST": Scope.WEBHOOKS_WRITE}

    @extend_schema(
        operation_id="webhook_secret_rotate",
        summary="Rotate your webhook signing secret",
        description=(
            "Generates a new signing secret for the key's mode and answers it in secret, this "
            "once: store it before anything else; it is never shown again. Every request is "
            "signed with it at once, and, for overlap_hours (default 24, at most 72; 0: not "
            "at all), also with the secret it replaces: webhook-signature then carries two "
            "signatures, so your server can switch secrets without missing a webhook. A second "
            "rotation during an overlap ends the older secret's. X-Webhook-Signature (the older "
            "scheme) is signed with the new secret only. Audited."
        ),
        request=WebhookSecretRotateInputSerializer,
        responses=WebhookSecretRotatedSerializer,
        examples=[
            request_example("Default overlap (24 h)", {}),
            request_example("Keep the old secret for 48 h", {"overlap_hours": 48}),
            response_example("Rotated", ROTATED_EXAMPLE, ROTATED_MESSAGE),
        ],
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = WebhookSecretRotateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        hours = serializer.validated_data.get("overlap_hours")
        merchant, mode = self.merchant(request), self.mode(request)
        rotated = webhook_secret_rotate_recorded(
            merchant=merchant,
            mode=mode,
            overlap=None if hours is None else timedelta(hours=hours),
            actor=self.actor(request),
            request=request,
        )
        view = webhook_settings_view_get(merchant=merchant, mode=mode, now=timezone.now())
        return EnvelopeResponse(
            _settings_data(view, secret=rotated.secret), message=ROTATED_MESSAGE
        )


class WebhookPingApi(MerchantApi):
    """A signed ping to the webhook URL of the key's mode, sent now, with the receiver's answer."""

    openapi_tag = ApiTag.WEBHOOK_SETTINGS
    error_statuses = (409,)
    throttle_scope = "webhook_test"
    required_scopes = {"POST": Scope.WEBHOOKS_WRITE}

    @extend_schema(
        operation_id="webhook_settings_test",
        summary="Send a test ping to your webhook URL",
        description=(
            'POSTs a ping event ({"id":"evt_…","event":"ping","created_at":…,'
            '"data":{"mode":…,"message":…}}) to the webhook URL of the key\'s mode, now, '
            "with every header and signature a delivery carries, and answers what your server "
            "did: status code, latency, error, the start of its answer. Sent once, never "
            "retried, within WEBHOOK_DELIVERY_DEADLINE_SECONDS (10 s); the URL is checked "
            "against the SSRF rule again. A ping is not an event: it is not in your event "
            "list. 200 whatever your server answered; 409 when no webhook URL is set; rate "
            "limited per key (THROTTLE_RATE_WEBHOOK_TEST, default 10/min)."
        ),
        request=None,
        responses=WebhookPingOutputSerializer,
        examples=[
            response_example("Your server answered 200", PING_ANSWERED_EXAMPLE, PING_SENT),
            response_example("Your server timed out", PING_TIMED_OUT_EXAMPLE, PING_SENT),
        ],
    )
    def post(self, request: Request) -> EnvelopeResponse:
        result = webhook_ping_send(merchant=self.merchant(request), mode=self.mode(request))
        return EnvelopeResponse(WebhookPingOutputSerializer(result).data, message=PING_SENT)
