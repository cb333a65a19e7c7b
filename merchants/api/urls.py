"""The keys routes (an extension), under ``/api/v1/keys``."""

from django.urls import path

from merchants.api.views import KeyDetailApi, KeyListCreateApi, KeyRollApi

urlpatterns = [
    path("keys", KeyListCreateApi.as_view(), name="keys"),
    path("keys/roll", KeyRollApi.as_view(), name="key-roll"),
    path("keys/<int:key_id>", KeyDetailApi.as_view(), name="key-detail"),
]
