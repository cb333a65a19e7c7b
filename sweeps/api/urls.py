"""The sweep routes (extensions), beside the other merchant-wallet routes."""

from django.urls import path

from sweeps.api.test_helpers import TestSettlementAccountActivateApi
from sweeps.api.views import SweepRunApi, SweepSettingsApi

urlpatterns = [
    path(
        "transactions/in/merchant-wallet/sweep",
        SweepSettingsApi.as_view(),
        name="wallet-sweep",
    ),
    path(
        "transactions/in/merchant-wallet/sweep/run",
        SweepRunApi.as_view(),
        name="wallet-sweep-run",
    ),
    path(
        "test-helpers/sweep/settlement-account/activate",
        TestSettlementAccountActivateApi.as_view(),
        name="test-helper-settlement-account-activate",
    ),
]
