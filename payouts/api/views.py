"""Payout routes and the payout quote. Views parse input, call one service or
selector, serialize the result; the business rules live in ``payouts.services`` and
``payouts.rules``."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework.request import Request

from beneficiaries.selectors import beneficiary_payout_account
from core.api.base import MerchantApi
from core.api.pagination import PageParamsSerializer, PaginationField, paginate
from core.api.responses import EnvelopeResponse, envelope_example
from core.exceptions import ConflictError, NotFoundError
from merchants.models import Mode
from payouts.api.serializers import (
    PayoutBatchCreateInputSerializer,
    PayoutBatchCreateOutputSerializer,
    PayoutBatchDetailOutputSerializer,
    PayoutBatchOutputSerializer,
    PayoutCreateInputSerializer,
    PayoutCreateOutputSerializer,
    PayoutListParamsSerializer,
    PayoutOutputSerializer,
    PayoutQuoteInputSerializer,
    PayoutQuoteOutputSerializer,
    TestPayoutReturnInputSerializer,
    payout_batch_items_parse,
)
from payouts.models import PayoutStatus
from payouts.selectors import (
    PayoutListFilters,
    payout_batch_get,
    payout_batch_status_counts,
    payout_get,
    payout_list,
    payout_quote,
)
from payouts.services import (
    ALREADY_RETURNED_MESSAGE,
    BATCH_MAX_ITEMS,
    payout_batch_create,
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
BATCH_CREATED_MESSAGE = "Bulk payout accepted for processing"
BATCH_DUPLICATE_MESSAGE = "Bulk payout request already accepted"
BATCH_TAGS = ["transactions"]  # beside the payout routes

_EXAMPLE_PAYOUT: dict[str, Any] = {
    "id": 1201,
    "internal_reference": "po_20260302_3f9a1c2b4d5e6f708192",
    "beneficiary": {
        "account_number": "0123456789",
        "account_name": "SALAMI NGOZI UCHE",
        "bank_code": "058",
        "bank_name": "Guaranty Trust Bank",
    },
    "currency": "NGN",
    "amount": "2500.00",
    "fee_amount": "10.00",
    "total_debit_amount": "2510.00",
    "status": "reserved",
    "narration": "March salary",
    "error_message": None,
    "nip_session_id": None,
    "returned_at": None,
    "return_reason": None,
    "created_at": "2026-03-02T09:15:04.118000+01:00",
    "completed_at": None,
    "updated_at": "2026-03-02T09:15:04.118000+01:00",
}
_EXAMPLE_BATCH: dict[str, Any] = {
    "id": 88,
    "batch_reference": "salaries-2026-03",
    "status": "partially_accepted",
    "atomic": False,
    "currency": "NGN",
    "total_items": 3,
    "accepted": 1,
    "duplicates": 1,
    "rejected": 1,
    "total_amount": "2500.00",
    "total_fee_amount": "10.00",
    "total_debit_amount": "2510.00",
    "created_at": "2026-03-02T09:15:04.101000+01:00",
}


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
            OpenApiParameter(
                "batch_id",
                int,
                description="Extension: only the payouts a bulk request created (its "
                "data.batch.id); another merchant's or mode's batch lists nothing",
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
                    batch_id=filters.get("batch_id"),
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


class PayoutBatchCreateApi(MerchantApi):
    """Extension: many payouts in one request. Each accepted item is an ordinary payout
    (reserved, dispatched, listed, requeried like a single one); see ``payout_batch_create``."""

    error_statuses = (404, 409, 503)
    throttle_scope = "payout_bulk"

    @extend_schema(
        operation_id="payout_bulk_create",
        summary="Create up to 500 payouts in one request (extension)",
        tags=BATCH_TAGS,
        request=PayoutBatchCreateInputSerializer,
        responses={202: PayoutBatchCreateOutputSerializer},
        description=(
            f"Extension beside the spec's routes. 1 to {BATCH_MAX_ITEMS} items, each with the "
            "single create's fields (account_number, bank_code, optional bank_id, amount, "
            "optional narration, idempotency_key) or beneficiary_id in place of the account; "
            "the currency is the batch's. Each item follows the single create's rules, "
            "messages and idempotency (per wallet): a key used before with the same parameters "
            "is a duplicate of that payout, with others the item gets the 409. atomic=false "
            "(default): each item is accepted or rejected on its own (data.items[].error holds "
            "the message and statusCode a single create would answer). atomic=true: all items "
            "are reserved or none is, and nothing is stored; the answer is the first failing "
            "item's error naming it (400 items[3].amount: ..., or its own 404/409/503). The "
            "same batch_reference with the same items answers the first answer again "
            "(duplicate=true, the payouts as they are now); with other items, 409. A key "
            "repeated within the batch is a 400 naming the later item. Answers 202 even when "
            "every item was rejected (data.batch.status rejected)."
        ),
        examples=[
            OpenApiExample(
                "Three payouts",
                request_only=True,
                value={
                    "batch_reference": "salaries-2026-03",
                    "atomic": False,
                    "items": [
                        {
                            "account_number": "0123456789",
                            "bank_code": "058",
                            "amount": "2500",
                            "narration": "March salary",
                            "idempotency_key": "salary-2026-03-ada",
                        },
                        {
                            "beneficiary_id": 42,
                            "amount": "1800.00",
                            "idempotency_key": "salary-2026-02-obi",
                        },
                        {
                            "account_number": "0123456780",
                            "bank_code": "058",
                            "amount": "99999999",
                            "idempotency_key": "salary-2026-03-uche",
                        },
                    ],
                },
            ),
            OpenApiExample(
                "Accepted, duplicate, rejected",
                response_only=True,
                status_codes=["202"],
                value=envelope_example(
                    {
                        "batch": _EXAMPLE_BATCH,
                        "items": [
                            {
                                "index": 0,
                                "idempotency_key": "salary-2026-03-ada",
                                "result": "accepted",
                                "payout": _EXAMPLE_PAYOUT,
                                "error": None,
                            },
                            {
                                "index": 1,
                                "idempotency_key": "salary-2026-02-obi",
                                "result": "duplicate",
                                "payout": {
                                    **_EXAMPLE_PAYOUT,
                                    "id": 1133,
                                    "internal_reference": "po_20260227_0a1b2c3d4e5f60718293",
                                    "amount": "1800.00",
                                    "total_debit_amount": "1810.00",
                                    "status": "successful",
                                },
                                "error": None,
                            },
                            {
                                "index": 2,
                                "idempotency_key": "salary-2026-03-uche",
                                "result": "rejected",
                                "payout": None,
                                "error": {
                                    "message": "insufficient available wallet balance",
                                    "statusCode": 400,
                                },
                            },
                        ],
                        "duplicate": False,
                    },
                    BATCH_CREATED_MESSAGE,
                    202,
                ),
            ),
        ],
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = PayoutBatchCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = payout_batch_create(
            merchant=self.merchant(request),
            mode=self.mode(request),
            batch_reference=data["batch_reference"],
            currency=data["currency"],
            atomic=data["atomic"],
            items=payout_batch_items_parse(data["items"]),
        )
        return EnvelopeResponse(
            PayoutBatchCreateOutputSerializer(result).data,
            message=BATCH_DUPLICATE_MESSAGE if result.duplicate else BATCH_CREATED_MESSAGE,
            status=202,
        )


class PayoutBatchDetailApi(MerchantApi):
    """Extension: one bulk request of the merchant in the key's mode, with how many of its
    payouts are in each status now. Its payouts: ``GET …/payouts?batch_id=``."""

    error_statuses = (404,)

    @extend_schema(
        operation_id="payout_bulk_retrieve",
        summary="A bulk request and its payouts' statuses (extension)",
        tags=BATCH_TAGS,
        responses=PayoutBatchDetailOutputSerializer,
        description=(
            "The batch as the create answered it (counts and totals of what it reserved) and "
            "payout_status_counts: how many of the payouts it created are in each of the six "
            "statuses now. List them with GET …/payouts?batch_id={id}. 404 for another "
            "merchant's or the other mode's batch."
        ),
        examples=[
            OpenApiExample(
                "A batch",
                response_only=True,
                value=envelope_example(
                    {
                        **_EXAMPLE_BATCH,
                        "payout_status_counts": {
                            "reserved": 0,
                            "processing": 0,
                            "dispatched": 0,
                            "ambiguous": 0,
                            "successful": 1,
                            "failed": 0,
                        },
                    },
                    "Payout batch retrieved successfully",
                ),
            )
        ],
    )
    def get(self, request: Request, batch_id: int) -> EnvelopeResponse:
        batch = payout_batch_get(
            merchant=self.merchant(request), mode=self.mode(request), batch_id=batch_id
        )
        return EnvelopeResponse(
            {
                **PayoutBatchOutputSerializer(batch).data,
                "payout_status_counts": payout_batch_status_counts(batch=batch),
            },
            message="Payout batch retrieved successfully",
        )
