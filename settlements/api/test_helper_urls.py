"""The settlements test-mode helper route (the settlements API has its own ``urls``)."""

from django.urls import path

from settlements.api.test_helpers import TestSettlementRunApi

urlpatterns = [
    path(
        "test-helpers/settlements/run",
        TestSettlementRunApi.as_view(),
        name="test-settlements-run",
    ),
]
