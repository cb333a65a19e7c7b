"""The payment-item routes of the spec (list and detail)."""

from django.urls import path

from payment_items.api.views import PaymentItemDetailApi, PaymentItemListApi

urlpatterns = [
    path(
        "transactions/in/payment-items",
        PaymentItemListApi.as_view(),
        name="payment-item-list",
    ),
    path(
        "transactions/in/payment-item/<int:payment_item_id>",
        PaymentItemDetailApi.as_view(),
        name="payment-item-detail",
    ),
]
