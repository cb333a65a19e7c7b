"""The events routes (an extension): list, detail, resend; the webhook settings routes: read and
set the URL, rotate the secret, send a test ping."""

from django.urls import path

from webhooks.api.views import (
    EventDetailApi,
    EventListApi,
    EventResendApi,
    WebhookPingApi,
    WebhookSecretRotateApi,
    WebhookSettingsApi,
)

urlpatterns = [
    path("events", EventListApi.as_view(), name="events"),
    path("events/<str:event_id>", EventDetailApi.as_view(), name="event-detail"),
    path("events/<str:event_id>/resend", EventResendApi.as_view(), name="event-resend"),
    path("webhook-settings", WebhookSettingsApi.as_view(), name="webhook-settings"),
    path(
        "webhook-settings/rotate-secret",
        WebhookSecretRotateApi.as_view(),
        name="webhook-settings-rotate-secret",
    ),
    path("webhook-settings/test", WebhookPingApi.as_view(), name="webhook-settings-test"),
]
