"""The refund routes (an extension beside the collection routes)."""

from django.urls import path

from refunds.api.views import RefundDetailApi, RefundListCreateApi

urlpatterns = [
    path("transactions/in/refunds", RefundListCreateApi.as_view(), name="refunds"),
    path(
        "transactions/in/refunds/<str:refund_id>",
        RefundDetailApi.as_view(),
        name="refund-detail",
    ),
]
