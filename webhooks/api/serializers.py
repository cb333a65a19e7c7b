"""Input and output serializers for the events routes (an extension beside docs/spec.md's
routes: the merchant reads what their server was told and asks for it again) and the webhook
settings routes (the URL, the signing secret's rotation and the test ping)."""

from __future__ import annotations

import json
from typing import Any

from django.db import models
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import (
    IsoDateTimeParamField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
)
from core.api.list_filters import DateRangeParamsSerializer
from merchants.services import WEBHOOK_SECRET_OVERLAP_MAX_HOURS
from webhooks.models import DeliveryStatus, DeliveryTarget, Event, EventType
from webhooks.selectors import event_latest_deliveries

EVENT_TYPES_TEXT = ", ".join(EventType.values)


def _enum_schema(choices: type[models.TextChoices], description: str) -> dict[str, Any]:
    """A choice set as its own named schema component: left to drf-spectacular, these would be
    named after the field (``StatusEnum``, ``TypeEnum``) and collide with other apps' ones."""
    return {"type": "string", "enum": list(choices.values), "description": description}


@extend_schema_field(
    _enum_schema(
        DeliveryStatus,
        "pending (an attempt is due), succeeded (a 2xx answer), failed (retry window ended)",
    ),
    component_name="DeliveryStatusEnum",
)
class DeliveryStatusField(serializers.ChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=DeliveryStatus.choices, **kwargs)


@extend_schema_field(
    _enum_schema(
        DeliveryTarget,
        "callback_url (the transaction's callback URL) or webhook_url (the merchant's)",
    ),
    component_name="DeliveryTargetEnum",
)
class DeliveryTargetField(serializers.ChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=DeliveryTarget.choices, **kwargs)


@extend_schema_field(_enum_schema(EventType, "the event type"), component_name="EventTypeEnum")
class EventTypeField(serializers.ChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=EventType.choices, **kwargs)


# --- List parameters -------------------------------------------------------------------------


class EventListParamsSerializer(DateRangeParamsSerializer):
    """The event list's filters (``page``/``limit`` come from ``PageParamsSerializer``), named as
    ``webhooks.selectors.EventListFilters`` names them."""

    type = EventTypeField(
        required=False,
        source="event_type",
        help_text="only events of this type",
        error_messages={"invalid_choice": f"must be one of {EVENT_TYPES_TEXT}"},
    )
    from_date = IsoDateTimeParamField(
        required=False,
        source="created_from",
        help_text="ISO 8601 lower bound on creation (inclusive)",
    )
    to_date = IsoDateTimeParamField(
        required=False,
        end_of_day=True,
        source="created_to",
        help_text="ISO 8601 upper bound on creation (inclusive; a bare date covers the day)",
    )
    reference = serializers.CharField(
        required=False,
        max_length=200,
        help_text="exact transaction or payout reference the event concerns",
    )


# --- Output ----------------------------------------------------------------------------------


class DeliverySummarySerializer(serializers.Serializer):
    """The latest delivery chain to one target (a resend replaces the chain it resends)."""

    status = DeliveryStatusField()
    attempt_count = serializers.IntegerField()
    last_status_code = serializers.IntegerField(
        allow_null=True,
        help_text="HTTP status of the last attempt; null before the first or without an answer",
    )
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    delivered_at = serializers.DateTimeField(allow_null=True)


class DeliveryStatusSerializer(serializers.Serializer):
    """One summary per target; null when the event was never sent there."""

    callback_url = DeliverySummarySerializer(
        allow_null=True, help_text="the collection transaction's callback URL"
    )
    webhook_url = DeliverySummarySerializer(
        allow_null=True, help_text="the merchant's webhook URL for the mode"
    )


class EventListItemSerializer(serializers.Serializer):
    id = serializers.CharField(source="event_id", help_text="the event id (evt_…) in the payload")
    type = EventTypeField(source="event_type")
    reference = serializers.CharField(help_text="the transaction or payout reference")
    created_at = serializers.DateTimeField()
    delivery_status = serializers.SerializerMethodField()

    @extend_schema_field(DeliveryStatusSerializer)
    def get_delivery_status(self, event: Event) -> dict[str, Any]:
        latest = event_latest_deliveries(event=event)
        return DeliveryStatusSerializer(
            {target: latest.get(target) for target in DeliveryTarget.values}
        ).data


class DeliveryAttemptSerializer(serializers.Serializer):
    attempt_number = serializers.IntegerField()
    status_code = serializers.IntegerField(
        allow_null=True, help_text="null: no answer (timeout, connection error, refused URL)"
    )
    succeeded = serializers.BooleanField()
    error = serializers.CharField(help_text="empty when an answer was received")
    latency_ms = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()


class DeliverySerializer(serializers.Serializer):
    """One attempt chain: the event to one URL, retried until a 2xx answer or the window ends."""

    id = serializers.IntegerField()
    target = DeliveryTargetField()
    url = serializers.CharField()
    status = DeliveryStatusField()
    attempt_count = serializers.IntegerField()
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField()
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    give_up_at = serializers.DateTimeField()
    delivered_at = serializers.DateTimeField(allow_null=True)
    resend_of = serializers.IntegerField(
        source="resend_of_id",
        allow_null=True,
        help_text="the delivery this one resends; null for the original deliveries",
    )
    created_at = serializers.DateTimeField()
    attempts = DeliveryAttemptSerializer(many=True)


class EventDetailSerializer(EventListItemSerializer):
    payload = serializers.SerializerMethodField(
        help_text="the JSON object every delivery of the event sends, parsed"
    )
    body = serializers.CharField(
        help_text=(
            "the exact JSON text sent (UTF-8): webhook-signature signs "
            '"{webhook-id}.{webhook-timestamp}." followed by these bytes; X-Webhook-Signature '
            "is the hex HMAC-SHA512 of these bytes with the webhook secret"
        )
    )
    deliveries = DeliverySerializer(
        many=True, help_text="every attempt chain, oldest first, resends included"
    )

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_payload(self, event: Event) -> Any:
        return json.loads(event.body)


# --- Webhook settings ------------------------------------------------------------------------


class WebhookSettingsOutputSerializer(serializers.Serializer):
    """The webhook settings of the key's mode: never the secret."""

    mode = serializers.CharField(help_text="test or live: the key's mode")
    url = serializers.CharField(help_text="where events are POSTed; empty: no webhook URL")
    secret_set = serializers.BooleanField(help_text="whether a signing secret is set")
    previous_secret_expires_at = serializers.DateTimeField(
        allow_null=True,
        help_text=(
            "after a rotation, until when the previous secret keeps signing beside the new one "
            "(a second webhook-signature); null outside a rotation overlap"
        ),
    )
    updated_at = serializers.DateTimeField(allow_null=True)


class WebhookSettingsInputSerializer(StrictSerializer):
    url = StrictCharField(
        max_length=500,
        allow_blank=True,
        trim_whitespace=True,
        help_text=(
            "an https URL on a public host (under make run also http on loopback or private "
            "hosts); an empty string stops webhooks for the mode"
        ),
    )


class WebhookSettingsSavedSerializer(WebhookSettingsOutputSerializer):
    secret = serializers.CharField(
        allow_null=True,
        help_text=(
            "the signing secret, shown this once, when this save generated the mode's first "
            "one; null otherwise"
        ),
    )


class WebhookSecretRotateInputSerializer(StrictSerializer):
    overlap_hours = StrictIntegerField(
        required=False,
        min_value=0,
        max_value=WEBHOOK_SECRET_OVERLAP_MAX_HOURS,
        help_text=(
            "how long the previous secret keeps signing beside the new one (0 to 72; default "
            "WEBHOOK_SECRET_ROTATION_OVERLAP_HOURS, 24); 0 stops it at once"
        ),
    )


class WebhookSecretRotatedSerializer(WebhookSettingsOutputSerializer):
    secret = serializers.CharField(
        help_text="the new signing secret (whsec_…), shown this once and never again"
    )


class WebhookPingOutputSerializer(serializers.Serializer):
    event_id = serializers.CharField(help_text="the ping's id (webhook-id); not kept")
    url = serializers.CharField(help_text="where the ping was sent")
    sent = serializers.BooleanField(
        help_text="false when the URL was refused by the SSRF check and nothing was sent"
    )
    succeeded = serializers.BooleanField(help_text="your server answered 2xx")
    status_code = serializers.IntegerField(
        allow_null=True, help_text="your server's HTTP status; null without an answer"
    )
    latency_ms = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(help_text="timeout, connection error or refusal; else empty")
    response_excerpt = serializers.CharField(help_text="the start of your server's answer")
