"""The collection routes of the spec (initialize, check status, search) and the test helpers."""

from django.urls import path

from collections_app.api.views import (
    PaystackWebhookApi,
    TestHelperTransactionCompleteApi,
    TransactionInitializeApi,
    TransactionSearchApi,
    TransactionStatusApi,
)

urlpatterns = [
    path(
        "transactions/in/initialize",
        TransactionInitializeApi.as_view(),
        name="transaction-initialize",
    ),
    path(
        "transactions/in/check-transaction-status/<str:reference>",
        TransactionStatusApi.as_view(),
        name="transaction-status",
    ),
    path(
        "transactions/in/search-transaction/<str:reference>",
        TransactionSearchApi.as_view(),
        name="transaction-search",
    ),
    path(
        "test-helpers/transactions/<str:reference>/complete",
        TestHelperTransactionCompleteApi.as_view(),
        name="test-helper-transaction-complete",
    ),
    path("webhooks/paystack", PaystackWebhookApi.as_view(), name="webhook-paystack"),
]
