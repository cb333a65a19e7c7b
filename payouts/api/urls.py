"""The payout routes of the spec (quote, name enquiry, create, list, details, requery) and the
extensions beside them (bulk, the merchant's controls, test helpers, the payout providers'
webhooks)."""

from django.urls import path

from payouts.api.controls import PayoutApprovalSettingsApi, PayoutApproveApi, PayoutCancelApi
from payouts.api.provider_webhooks import FlutterwaveWebhookApi
from payouts.api.test_helpers import TestPayoutProviderSwitchApi
from payouts.api.views import (
    PayoutBatchCreateApi,
    PayoutBatchDetailApi,
    PayoutDetailApi,
    PayoutListCreateApi,
    PayoutQuoteApi,
    PayoutRequeryApi,
    TestPayoutReturnApi,
)

urlpatterns = [
    path(
        "transactions/in/merchant-wallet/payouts/quote",
        PayoutQuoteApi.as_view(),
        name="payout-quote",
    ),
    path("transactions/in/merchant-wallet/payouts", PayoutListCreateApi.as_view(), name="payouts"),
    path(
        "transactions/in/merchant-wallet/payouts/bulk",
        PayoutBatchCreateApi.as_view(),
        name="payout-bulk",
    ),
    path(
        "transactions/in/merchant-wallet/payouts/bulk/<int:batch_id>",
        PayoutBatchDetailApi.as_view(),
        name="payout-bulk-detail",
    ),
    path(
        "transactions/in/merchant-wallet/payouts/<int:payout_id>",
        PayoutDetailApi.as_view(),
        name="payout-detail",
    ),
    path(
        "transactions/in/merchant-wallet/payouts/<int:payout_id>/requery",
        PayoutRequeryApi.as_view(),
        name="payout-requery",
    ),
    path(
        "transactions/in/merchant-wallet/payouts/<int:payout_id>/approve",
        PayoutApproveApi.as_view(),
        name="payout-approve",
    ),
    path(
        "transactions/in/merchant-wallet/payouts/<int:payout_id>/cancel",
        PayoutCancelApi.as_view(),
        name="payout-cancel",
    ),
    path(
        "transactions/in/merchant-wallet/approvals",
        PayoutApprovalSettingsApi.as_view(),
        name="payout-approvals",
    ),
    path(
        "test-helpers/payouts/<int:payout_id>/return",
        TestPayoutReturnApi.as_view(),
        name="test-payout-return",
    ),
    path(
        "test-helpers/payout-providers/<str:provider_name>",
        TestPayoutProviderSwitchApi.as_view(),
        name="test-payout-provider-switch",
    ),
    path("webhooks/flutterwave", FlutterwaveWebhookApi.as_view(), name="webhook-flutterwave"),
]
