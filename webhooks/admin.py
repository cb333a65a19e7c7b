"""Back office for events and their webhook deliveries: a read-only log. "Resend" starts a new
attempt chain with the same event id and bytes; it needs ``webhooks.resend_event`` and writes an
audit record per event or delivery resent."""

from __future__ import annotations

import json

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from audit.backoffice import BackOfficeAdminMixin
from audit.services import audit_record
from core.admin import (
    ReadOnlyAdminMixin,
    ReadOnlyTabularInline,
    status_column,
    time_column,
    value_column,
)
from webhooks.deliveries import event_resend, webhook_delivery_resend
from webhooks.models import Event, WebhookDelivery, WebhookDeliveryAttempt


class StatusCodeClassFilter(admin.SimpleListFilter):
    title = "status code"
    parameter_name = "status_code_class"
    field_name = "status_code"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [
            ("2xx", "2xx"),
            ("3xx", "3xx (redirect: counted as failure)"),
            ("4xx", "4xx"),
            ("5xx", "5xx"),
            ("none", "No answer (timeout, connection error, refused)"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "none":
            return queryset.filter(**{f"{self.field_name}__isnull": True})
        if value in ("2xx", "3xx", "4xx", "5xx"):
            low = int(value[0]) * 100
            return queryset.filter(
                Q(**{f"{self.field_name}__gte": low}) & Q(**{f"{self.field_name}__lt": low + 100})
            )
        return queryset


class LastStatusCodeClassFilter(StatusCodeClassFilter):
    title = "last status code"
    parameter_name = "last_status_code_class"
    field_name = "last_status_code"


class WebhookDeliveryInline(ReadOnlyTabularInline):
    model = WebhookDelivery
    show_change_link = True
    fields = (
        "target",
        "url",
        "status",
        "attempt_count",
        "last_status_code",
        "last_error",
        "next_attempt_at",
        "delivered_at",
        "created_at",
    )
    readonly_fields = fields


@admin.register(Event)
class EventAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("event_id", "event_type", "reference", "merchant", "mode", "created_at")
    list_filter = (
        ("merchant", admin.RelatedOnlyFieldListFilter),
        "event_type",
        "mode",
        "created_at",
    )
    search_fields = ("event_id", "reference")
    date_hierarchy = "created_at"
    list_select_related = ("merchant",)
    fields = (
        "event_id",
        "event_type",
        "merchant",
        "mode",
        "reference",
        "transaction",
        "payout",
        "created_at",
        "payload",
    )
    readonly_fields = fields
    inlines = [WebhookDeliveryInline]
    actions = ["resend"]

    @admin.display(description="payload (exact bytes sent)")
    def payload(self, obj: Event) -> str:
        try:
            pretty = json.dumps(json.loads(obj.body), indent=2, ensure_ascii=False)
        except ValueError:
            pretty = obj.body
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", pretty)

    def has_resend_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "webhooks.resend_event")

    @admin.action(
        description="Resend (new attempt chains, same event id and bytes)", permissions=["resend"]
    )
    def resend(self, request: HttpRequest, queryset: QuerySet[Event]) -> None:
        count = 0
        for event in queryset.order_by("pk"):
            with transaction.atomic():
                resent = event_resend(event=event)
                audit_record(
                    actor=request.user,
                    action=self.audit_action("resend"),
                    obj=event,
                    after={"deliveries": [(delivery.pk, delivery.url) for delivery in resent]},
                    request=request,
                )
            count += len(resent)
        self.message_user(request, f"Queued {count} new delivery chain(s).", level=messages.SUCCESS)


class WebhookDeliveryAttemptInline(ReadOnlyTabularInline):
    model = WebhookDeliveryAttempt
    fields = (
        "attempt_number",
        "created_at",
        "status_code",
        "latency_ms",
        "error",
        "response_excerpt",
        "next_attempt_at",
    )
    readonly_fields = fields


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    # Fits 1400 px (tests/payouts/test_admin_browser.py): short headers, the URL wraps.
    list_display = (
        "created_display",
        "event_id_display",
        "event_type_display",
        "target",
        "url",
        "status_display",
        "attempts_display",
        "last_code_display",
        "next_attempt_display",
    )
    list_display_links = ("event_id_display",)
    list_filter = (
        "status",
        ("event__merchant", admin.RelatedOnlyFieldListFilter),
        "event__event_type",
        "target",
        LastStatusCodeClassFilter,
        "created_at",
    )
    search_fields = ("event__event_id", "event__reference", "url")
    date_hierarchy = "created_at"
    list_select_related = ("event",)
    fields = (
        "event",
        "target",
        "url",
        "status",
        "attempt_count",
        "next_attempt_at",
        "give_up_at",
        "last_status_code",
        "last_error",
        "delivered_at",
        "resend_of",
        "created_at",
    )
    readonly_fields = fields
    inlines = [WebhookDeliveryAttemptInline]
    actions = ["resend"]

    @admin.display(description="event id", ordering="event__event_id")
    def event_id_display(self, obj: WebhookDelivery) -> str:
        return obj.event.event_id

    @admin.display(description="event", ordering="event__event_type")
    def event_type_display(self, obj: WebhookDelivery) -> str:
        return obj.event.event_type

    created_display = time_column("created_at", "created")

    status_display = status_column("status", "status")

    attempts_display = value_column("attempt_count", "tries")

    last_code_display = value_column("last_status_code", "last code")

    next_attempt_display = time_column("next_attempt_at", "next attempt")

    def has_resend_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "webhooks.resend_event")

    @admin.action(
        description="Resend (new attempt chain, same event id and bytes)", permissions=["resend"]
    )
    def resend(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        count = 0
        for delivery in queryset.select_related("event").order_by("pk"):
            with transaction.atomic():
                resent = webhook_delivery_resend(delivery=delivery)
                audit_record(
                    actor=request.user,
                    action=self.audit_action("resend"),
                    obj=delivery,
                    after={"delivery": resent.pk, "event_id": delivery.event.event_id},
                    request=request,
                )
            count += 1
        self.message_user(request, f"Queued {count} new delivery chain(s).", level=messages.SUCCESS)


@admin.register(WebhookDeliveryAttempt)
class WebhookDeliveryAttemptAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    # Fits 1400 px (tests/payouts/test_admin_browser.py): short headers; URL and error wrap.
    list_display = (
        "created_display",
        "event_id_display",
        "event_type_display",
        "url",
        "attempt_display",
        "code_display",
        "latency_display",
        "error",
        "next_attempt_display",
    )
    list_filter = (
        ("delivery__event__merchant", admin.RelatedOnlyFieldListFilter),
        "delivery__event__event_type",
        StatusCodeClassFilter,
        "status_code",
        "succeeded",
        "created_at",
    )
    search_fields = ("delivery__event__event_id", "delivery__event__reference", "url")
    date_hierarchy = "created_at"
    list_select_related = ("delivery__event",)

    @admin.display(description="event id")
    def event_id_display(self, obj: WebhookDeliveryAttempt) -> str:
        return obj.delivery.event.event_id

    @admin.display(description="event")
    def event_type_display(self, obj: WebhookDeliveryAttempt) -> str:
        return obj.delivery.event.event_type

    created_display = time_column("created_at", "at")

    attempt_display = value_column("attempt_number", "try")

    code_display = value_column("status_code", "code")

    latency_display = value_column("latency_ms", "ms")

    next_attempt_display = time_column("next_attempt_at", "next attempt")
