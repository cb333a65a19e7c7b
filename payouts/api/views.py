"""Payout routes and the payout quote. Views parse input, call one service or
selector, serialize the result; the business rules live in ``payouts.services`` and
``payouts.rules``."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework.request import Request

from beneficiaries.selectors import beneficiary_payout_account
from core.api.base import MerchantApi
from core.api.pagination import PageParamsSerializer, PaginationField, paginate
from core.api.responses import EnvelopeResponse
from core.exceptions import ConflictError, NotFoundError
from merchants.models import Mode
from payouts.api.serializers import (
    PayoutCreateInputSerializer,
    PayoutCreateOutputSerializer,
    PayoutListParamsSerializer,
    PayoutOutputSerializer,
    PayoutQuoteInputSerializer,
    PayoutQuoteOutputSerializer,
    TestPayoutReturnInputSerializer,
)
from payouts.models import PayoutStatus
from payouts.selectors import PayoutListFilters, payout_get, payout_list, payout_quote
from payouts.services import (
    ALREADY_RETURNED_MESSAGE,
    payout_create,
    payout_requery,
    payout_return,
)

CREATED_MESSAGE = "Payout accepted for processing"
DUPLICATE_MESSAGE = "Payout request already accepted"
REQUERY_SUCCESS_MESSAGE = "Payout completed successfully"
REQUERY_FAILED_MESSAGE = "Payout failed"
REQUERY_AMBIGUOUS_MESSAGE = "Payout status is not yet conclusive; funds remain reserved"
REQUERY_PENDING_MESSAGE = "Payout is still being processed; funds remain reserved"
RETURNED_MESSAGE = "Payout returned; the amount is back in the available balance"
TEST_RETURN_REASON = "Returned by the beneficiary bank (test helper)"


class PayoutQuoteApi(MerchantApi):
    """Fee and total debit for a prospective payout; reserves nothing."""

    @extend_schema(
        operation_id="payout_quote",
        request=PayoutQuoteInputSerializer,
        responses=PayoutQuoteOutputSerializer,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = PayoutQuoteInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        quote = payout_quote(**serializer.validated_data)
        return EnvelopeResponse(
            PayoutQuoteOutputSerializer(quote).data, message="Fee calculated successfully"
        )


class PayoutListCreateApi(MerchantApi):
    """Create (POST) and list (GET) on one path."""

    error_statuses = (404, 409, 503)

    @extend_schema(
        operation_id="payout_create",
        request=PayoutCreateInputSerializer,
        responses={202: PayoutCreateOutputSerializer},
        description=(
            "Reserves amount + fee from the available balance and accepts the payout for "
            "asynchronous processing. Same idempotency_key and identical parameters: the "
            "original payout with duplicate=true (202); different parameters: 409. Extension: "
            "beneficiary_id (a saved beneficiary) in place of account_number, bank_code and "
            "bank_id; the account name is resolved again all the same; an unknown or deleted "
            "beneficiary is a 404."
        ),
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = PayoutCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        merchant, mode = self.merchant(request), self.mode(request)
        arguments = dict(serializer.validated_data)
        beneficiary_id = arguments.pop("beneficiary_id", None)
        if beneficiary_id is not None:
            arguments.update(
                beneficiary_payout_account(
                    merchant=merchant, mode=mode, beneficiary_id=beneficiary_id
                )
            )
        result = payout_create(merchant=merchant, mode=mode, **arguments)
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
        page = paginate(
            payout_list(
                merchant=self.merchant(request),
                mode=self.mode(request),
                filters=PayoutListFilters(
                    status=filters.get("status"),
                    created_from=filters.get("from_date"),
                    created_to=filters.get("to_date"),
                    reference=filters.get("reference"),
                    currency=filters["currency"],
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
    """One payout of the merchant in the key's mode."""

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
    """Asks the provider for the payout's status without resubmitting the transfer.

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


class TestPayoutReturnApi(MerchantApi):
    """Test mode only: the beneficiary's bank sends a successful payout back, as a real bank
    sometimes does days later. The payout stays ``successful`` and gains ``returned_at`` and
    ``return_reason``; the principal goes back to the available balance (a ``payout_return``
    ledger entry); ``payout.returned`` is delivered. Once per payout: again is a 409, as is a
    payout that is not successful. A live key gets 404: the route does not exist in live mode.
    """

    error_statuses = (404, 409)

    @extend_schema(
        operation_id="test_helper_payout_return",
        request=TestPayoutReturnInputSerializer,
        responses=PayoutOutputSerializer,
    )
    def post(self, request: Request, payout_id: int) -> EnvelopeResponse:
        if self.mode(request) != Mode.TEST:
            raise NotFoundError("Route not found")
        serializer = TestPayoutReturnInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        payout = payout_get(merchant=self.merchant(request), mode=Mode.TEST, payout_id=payout_id)
        returned = payout_return(
            payout_id=payout.pk,
            reason=serializer.validated_data["reason"] or TEST_RETURN_REASON,
        )
        if not returned.applied:
            raise ConflictError(ALREADY_RETURNED_MESSAGE)
        return EnvelopeResponse(
            PayoutOutputSerializer(returned.payout).data, message=RETURNED_MESSAGE
        )
