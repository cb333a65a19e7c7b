"""Payout routes (spec §4.4–4.7). Views parse input, call one service or selector, serialize
the result; the business rules live in ``payouts.services``."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.pagination import PageParamsSerializer, paginate, pagination_schema
from core.api.responses import EnvelopeResponse
from core.exceptions import ApplicationError
from core.money import CURRENCY_NGN
from payouts.api.serializers import (
    PayoutCreateInputSerializer,
    PayoutCreateOutputSerializer,
    PayoutListParamsSerializer,
    PayoutOutputSerializer,
)
from payouts.models import PayoutStatus
from payouts.selectors import PayoutListFilters, payout_get, payout_list
from payouts.services import ONLY_NGN_MESSAGE, payout_create, payout_requery

CREATED_MESSAGE = "Payout accepted for processing"
DUPLICATE_MESSAGE = "Payout request already accepted"
REQUERY_SUCCESS_MESSAGE = "Payout completed successfully"
REQUERY_FAILED_MESSAGE = "Payout failed"
REQUERY_AMBIGUOUS_MESSAGE = "Payout status is not yet conclusive; funds remain reserved"
REQUERY_PENDING_MESSAGE = "Payout is still being processed; funds remain reserved"


@extend_schema_field(pagination_schema())
class PaginationField(serializers.JSONField):
    """The §4.5 pagination object (documentation only)."""


class PayoutListCreateApi(MerchantApi):
    """§4.4 create (POST) and §4.5 list (GET) on one path."""

    error_statuses = (404, 409, 503)

    @extend_schema(
        operation_id="payout_create",
        request=PayoutCreateInputSerializer,
        responses={202: PayoutCreateOutputSerializer},
        description=(
            "Reserves amount + fee from the available balance and accepts the payout for "
            "asynchronous processing. Same idempotency_key and identical parameters: the "
            "original payout with duplicate=true (202); different parameters: 409."
        ),
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = PayoutCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = payout_create(
            merchant=self.merchant(request), mode=self.mode(request), **serializer.validated_data
        )
        return EnvelopeResponse(
            PayoutCreateOutputSerializer(result).data,
            message=DUPLICATE_MESSAGE if result.duplicate else CREATED_MESSAGE,
            status=202,
        )

    @extend_schema(
        operation_id="payout_list",
        parameters=[
            OpenApiParameter("currency", str, description="default NGN; only NGN"),
            OpenApiParameter("page", int, description="default 1"),
            OpenApiParameter("limit", int, description="1 to 200, default 50"),
            OpenApiParameter("status", str, enum=PayoutStatus.values),
            OpenApiParameter("from_date", str, description="ISO 8601 lower bound on creation"),
            OpenApiParameter("to_date", str, description="ISO 8601 upper bound on creation"),
            OpenApiParameter(
                "reference",
                str,
                description="internal reference, beneficiary account number or name",
            ),
        ],
        responses=inline_serializer(
            "PayoutPage",
            {"items": PayoutOutputSerializer(many=True), "pagination": PaginationField()},
        ),
    )
    def get(self, request: Request) -> EnvelopeResponse:
        page_params = PageParamsSerializer(data=request.query_params)
        page_params.is_valid(raise_exception=True)
        params = PayoutListParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        filters = params.validated_data
        if filters["currency"] != CURRENCY_NGN:
            raise ApplicationError(ONLY_NGN_MESSAGE)
        page = paginate(
            payout_list(
                merchant=self.merchant(request),
                mode=self.mode(request),
                filters=PayoutListFilters(
                    status=filters.get("status"),
                    created_from=filters.get("from_date"),
                    created_to=filters.get("to_date"),
                    reference=filters.get("reference"),
                ),
            ),
            **page_params.validated_data,
        )
        return EnvelopeResponse(
            {
                "items": PayoutOutputSerializer(page.items, many=True).data,
                "pagination": page.pagination(),
            },
            message="Payouts retrieved successfully",
        )


class PayoutDetailApi(MerchantApi):
    """§4.6: one payout of the merchant in the key's mode."""

    error_statuses = (404,)

    @extend_schema(operation_id="payout_retrieve", responses=PayoutOutputSerializer)
    def get(self, request: Request, payout_id: int) -> EnvelopeResponse:
        payout = payout_get(
            merchant=self.merchant(request), mode=self.mode(request), payout_id=payout_id
        )
        return EnvelopeResponse(
            PayoutOutputSerializer(payout).data, message="Payout retrieved successfully"
        )


class PayoutRequeryApi(MerchantApi):
    """§4.7: asks the provider for the payout's status without resubmitting the transfer.

    200 when the payout is final after the check (``successful``; or ``failed``, whose funds are
    back in the available balance); 202 while it is not conclusive (``ambiguous``, or still
    ``reserved``/``processing`` before the transfer was sent); 409 for a payout that was already
    final; 404 for an unknown payout.
    """

    error_statuses = (404, 409)

    @extend_schema(
        operation_id="payout_requery",
        request=None,
        responses={
            200: PayoutOutputSerializer,
            202: OpenApiResponse(PayoutOutputSerializer, description="still not conclusive"),
        },
    )
    def post(self, request: Request, payout_id: int) -> EnvelopeResponse:
        payout = payout_get(
            merchant=self.merchant(request), mode=self.mode(request), payout_id=payout_id
        )
        payout = payout_requery(payout=payout)
        data = PayoutOutputSerializer(payout).data
        if payout.status == PayoutStatus.SUCCESSFUL:
            return EnvelopeResponse(data, message=REQUERY_SUCCESS_MESSAGE, status=200)
        if payout.status == PayoutStatus.FAILED:
            return EnvelopeResponse(data, message=REQUERY_FAILED_MESSAGE, status=200)
        message = (
            REQUERY_AMBIGUOUS_MESSAGE
            if payout.status in (PayoutStatus.AMBIGUOUS, PayoutStatus.DISPATCHED)
            else REQUERY_PENDING_MESSAGE
        )
        return EnvelopeResponse(data, message=message, status=202)
