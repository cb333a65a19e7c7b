"""The events routes (an extension): list, detail, resend."""

from django.urls import path

from webhooks.api.views import EventDetailApi, EventListApi, EventResendApi

urlpatterns = [
    path("events", EventListApi.as_view(), name="events"),
    path("events/<str:event_id>", EventDetailApi.as_view(), name="event-detail"),
    path("events/<str:event_id>/resend", EventResendApi.as_view(), name="event-resend"),
]
