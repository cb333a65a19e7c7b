"""Payment-item routes. Authentication failures answer the bare 403 body."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from core.api.base import PaymentItemMerchantApi
from core.api.responses import EnvelopeResponse
from payment_items.api.serializers import (
    PaymentItemDetailOutputSerializer,
    PaymentItemListOutputSerializer,
)
from payment_items.selectors import payment_item_get, payment_item_list


class PaymentItemListApi(PaymentItemMerchantApi):
    @extend_schema(
        operation_id="payment_items_list",
        summary="List the merchant's active payment items",
        tags=["Payment items"],
        responses=PaymentItemListOutputSerializer(many=True),
    )
    def get(self, request: Request) -> EnvelopeResponse:
        items = payment_item_list(merchant=self.merchant(request), mode=self.mode(request))
        return EnvelopeResponse(
            PaymentItemListOutputSerializer(items, many=True).data,
            message="Payment items retrieved",
        )


class PaymentItemDetailApi(PaymentItemMerchantApi):
    error_statuses = (404,)

    @extend_schema(
        operation_id="payment_items_retrieve",
        summary="One payment item (detail view)",
        tags=["Payment items"],
        responses=PaymentItemDetailOutputSerializer,
    )
    def get(self, request: Request, payment_item_id: int) -> EnvelopeResponse:
        item = payment_item_get(
            merchant=self.merchant(request),
            mode=self.mode(request),
            payment_item_id=payment_item_id,
        )
        return EnvelopeResponse(
            PaymentItemDetailOutputSerializer(item).data, message="Payment item retrieved"
        )
