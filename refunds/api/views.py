"""Refund routes. Views parse input, call one service or selector, serialize the result; the
rules live in ``refunds.services``."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.fields import representation
from core.api.list_filters import date_range_parameters, status_parameter
from core.api.lists import list_query, list_schema
from core.api.responses import EnvelopeResponse, page_response
from core.api.schema_components import ApiTag
from merchants.scopes import Scope
from refunds.api import examples
from refunds.api.serializers import (
    RefundCreateInputSerializer,
    RefundCreateOutputSerializer,
    RefundListParamsSerializer,
    RefundOutputSerializer,
)
from refunds.models import RefundStatus
from refunds.selectors import RefundListFilters, refund_get, refund_list_page
from refunds.services import refund_create

CREATED_MESSAGE = "Refund accepted for processing"
DUPLICATE_MESSAGE = "Refund request already accepted"


class RefundListCreateApi(MerchantApi):
    """Create (POST) and list (GET) on one path."""

    openapi_tag = ApiTag.COLLECTIONS
    required_scopes = {"GET": Scope.READ, "POST": Scope.REFUNDS_WRITE}
    error_statuses = (404, 409)

    @extend_schema(
        operation_id="refund_create",
        summary="Refund a paid collection transaction, wholly or in part",
        request=RefundCreateInputSerializer,
        responses={202: RefundCreateOutputSerializer},
        description=(
            "Extension. Refunds amount (default: all of the amount paid not refunded yet) of "
            "one of your paid collection transactions in the key's mode to the customer. The "
            "refunds of a transaction never add up to more than the customer paid; a larger "
            "amount is a 400 naming the refundable amount. While the transaction is not "
            "settled, the refund is taken from what its settlement would pay you "
            "(deducted_from_settlement); once settled, or for what that does not cover, from "
            "your wallet's available balance (debited_from_wallet; too little is a 400 and "
            "nothing changes). Our collection fee is not given back unless the service is "
            "configured to (fee_returned). The refund starts pending and ends processed or "
            "failed (its money back where it came from); refund.pending, refund.processed and "
            "refund.failed webhooks tell you. Idempotent per merchant and mode: the same "
            "idempotency_key with the same parameters answers the first refund with "
            "duplicate=true (202); with other parameters, 409. An unknown reference, or one of "
            "another merchant or mode, is a 404; a transaction that is not paid, a 400."
        ),
        examples=examples.create_examples(CREATED_MESSAGE, DUPLICATE_MESSAGE),
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = RefundCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        merchant = self.merchant(request)
        result = refund_create(
            merchant=merchant,
            mode=self.mode(request),
            transaction_reference=data["transaction_reference"],
            amount=data.get("amount"),
            reason=data["reason"],
            idempotency_key=data["idempotency_key"],
            initiated_by=f"api:{merchant.pk}",
        )
        return EnvelopeResponse(
            representation(RefundCreateOutputSerializer, result),
            message=DUPLICATE_MESSAGE if result.duplicate else CREATED_MESSAGE,
            status=202,
        )

    @list_schema(
        operation_id="refund_list",
        summary="List refunds",
        description=(
            "Extension. Your refunds in the key's mode, newest first, a page at a time. Filters "
            "combine: status, creation time range (from_date, to_date) and reference (a "
            "refund_id or the refunded transaction's reference)."
        ),
        examples=examples.LIST_EXAMPLES,
        parameters=[
            status_parameter(RefundStatus),
            *date_range_parameters("creation"),
            OpenApiParameter(
                "reference", str, description="a refund_id or the transaction's reference"
            ),
        ],
        page_name="RefundPage",
        item_serializer=RefundOutputSerializer,
    )
    def get(self, request: Request) -> EnvelopeResponse:
        pages, filters = list_query(request.query_params, RefundListParamsSerializer)
        page = refund_list_page(
            merchant=self.merchant(request),
            mode=self.mode(request),
            filters=RefundListFilters(**filters),
            **pages,
        )
        return page_response(page, RefundOutputSerializer, message=examples.LIST_MESSAGE)


class RefundDetailApi(MerchantApi):
    """One refund of the merchant in the key's mode."""

    openapi_tag = ApiTag.COLLECTIONS
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404,)

    @extend_schema(
        operation_id="refund_retrieve",
        summary="Retrieve a refund",
        description=(
            "Extension. One of your refunds by its refund_id, as it stands now. A refund of "
            "another merchant, or of the other mode, is a 404."
        ),
        responses=RefundOutputSerializer,
        examples=examples.DETAIL_EXAMPLES,
    )
    def get(self, request: Request, refund_id: str) -> EnvelopeResponse:
        refund = refund_get(
            merchant=self.merchant(request), mode=self.mode(request), refund_id=refund_id
        )
        return EnvelopeResponse(
            RefundOutputSerializer(refund).data, message=examples.DETAIL_MESSAGE
        )
