"""Payment-item routes. Authentication failures answer the bare 403 body."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from core.api.base import PaymentItemMerchantApi
from core.api.responses import EnvelopeResponse
from core.api.schema_components import ApiTag
from merchants.scopes import Scope
from payment_items.api import examples
from payment_items.api.serializers import (
    PaymentItemDetailOutputSerializer,
    PaymentItemListOutputSerializer,
)
from payment_items.selectors import payment_item_get, payment_item_list


class PaymentItemListApi(PaymentItemMerchantApi):
    openapi_tag = ApiTag.PAYMENT_ITEMS
    required_scopes = {"GET": Scope.READ}

    @extend_schema(
        operation_id="payment_items_list",
        summary="List the merchant's active payment items",
        description=(
            "Every active, not deleted payment item of the merchant in the key's mode, with its "
            "category, the form fields its checkout asks for and its revenue split. An amount "
            "of 0.00 means the customer's amount is accepted (any amount); otherwise a "
            "collection must be for exactly that amount."
        ),
        examples=examples.LIST_EXAMPLES,
        responses=PaymentItemListOutputSerializer(many=True),
    )
    def get(self, request: Request) -> EnvelopeResponse:
        items = payment_item_list(merchant=self.merchant(request), mode=self.mode(request))
        return EnvelopeResponse(
            PaymentItemListOutputSerializer(items, many=True).data,
            message="Payment items retrieved",
        )


class PaymentItemDetailApi(PaymentItemMerchantApi):
    openapi_tag = ApiTag.PAYMENT_ITEMS
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404,)

    @extend_schema(
        operation_id="payment_items_retrieve",
        summary="Retrieve a payment item",
        description=(
            "One payment item of the merchant in the key's mode, with the full category and "
            "sub-category records. Another merchant's item, or one of the other mode, is a 404."
        ),
        examples=examples.DETAIL_EXAMPLES,
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
