"""The settlement routes: the list, one settlement, and the transactions it settled."""

from django.urls import path

from settlements.api.views import (
    SettlementDetailApi,
    SettlementListApi,
    SettlementTransactionListApi,
)

urlpatterns = [
    path("settlements", SettlementListApi.as_view(), name="settlements"),
    path(
        "settlements/<str:settlement_id>", SettlementDetailApi.as_view(), name="settlement-detail"
    ),
    path(
        "settlements/<str:settlement_id>/transactions",
        SettlementTransactionListApi.as_view(),
        name="settlement-transactions",
    ),
]
