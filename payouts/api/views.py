"""Payout routes and the payout quote. Views parse input, call one service or
selector, serialize the result; the business rules live in ``payouts.services`` and
``payouts.rules``."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework.request import Request

from beneficiaries.selectors import beneficiary_payout_account
from core.api.base import MerchantApi
from core.api.fields import representation
from core.api.list_filters import date_range_parameters, status_parameter
from core.api.lists import list_query, list_schema
from core.api.responses import EnvelopeResponse, page_response
from core.api.schema_components import ApiTag
from core.exceptions import ConflictError
from merchants.api.test_helpers import TestHelperApi
from merchants.models import Mode
from merchants.scopes import Scope
from payouts.api import examples
from payouts.api.serializers import (
    PayoutBatchCreateInputSerializer,
    PayoutBatchCreateOutputSerializer,
    PayoutBatchDetailOutputSerializer,
    PayoutBatchOutputSerializer,
    PayoutCreateInputSerializer,
    PayoutCreateOutputSerializer,
    PayoutDetailOutputSerializer,
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
    payout_list_page,
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


class PayoutQuoteApi(MerchantApi):
    """Fee and total debit for a prospective payout; reserves nothing."""

    openapi_tag = ApiTag.PAYOUTS
    required_scopes = {"POST": Scope.READ}

    @extend_schema(
        operation_id="payout_quote",
        summary="Quote a payout's fee",
        description=(
            "The fee and the total a payout of this amount would debit from the available "
            "balance (amount + fee), from the merchant's fee schedule. Reserves nothing and "
            "creates nothing; the create charges the same fee."
        ),
        request=PayoutQuoteInputSerializer,
        responses=PayoutQuoteOutputSerializer,
        examples=examples.QUOTE_EXAMPLES,
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

    openapi_tag = ApiTag.PAYOUTS
    required_scopes = {"GET": Scope.READ, "POST": Scope.PAYOUTS_WRITE}
    error_statuses = (404, 409, 503)

    @extend_schema(
        operation_id="payout_create",
        summary="Create a payout",
        request=PayoutCreateInputSerializer,
        responses={202: PayoutCreateOutputSerializer},
        description=(
            "Resolves the beneficiary's account name, reserves amount + fee from the available "
            "balance and accepts the payout for asynchronous processing (status reserved; "
            "signed payout.* webhooks tell you how it ends). Idempotent per wallet: the same "
            "idempotency_key with identical parameters answers the original payout with "
            "duplicate=true (202); with different parameters, 409. The payout echoes your "
            "idempotency_key, and the list's reference filter finds it. beneficiary_id (a saved "
            "beneficiary) may stand in place of account_number, bank_code and bank_id; the "
            "account name is resolved again all the same; an unknown or deleted beneficiary is "
            "a 404. Too little available balance is a 400 and reserves nothing. Extensions: "
            "scheduled_for holds the payout (reserved) until that instant; a payout at or above "
            "the wallet's approval threshold waits (reserved) for another key's approval."
        ),
        examples=[
            *examples.create_examples(CREATED_MESSAGE, DUPLICATE_MESSAGE),
            *examples.create_held_examples(),
        ],
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
        result = payout_create(
            merchant=merchant,
            mode=mode,
            wallet=self.wallet(request),
            created_by_key_id=self.key_id(request),
            **arguments,
        )
        return EnvelopeResponse(
            representation(PayoutCreateOutputSerializer, result),
            message=DUPLICATE_MESSAGE if result.duplicate else CREATED_MESSAGE,
            status=202,
        )

    @list_schema(
        operation_id="payout_list",
        summary="List payouts",
        description=(
            "The payouts of the key's wallet, newest first, a page at a time (pagination.total "
            "is exact). Filters combine: status, creation time range (from_date, to_date), "
            "reference (our internal reference, your idempotency_key, the NIP session id, the "
            "beneficiary's account number, or part of the account name) and batch_id."
        ),
        examples=examples.LIST_EXAMPLES,
        parameters=[
            OpenApiParameter("currency", str, description="default NGN; only NGN"),
            status_parameter(PayoutStatus),
            *date_range_parameters("creation"),
            OpenApiParameter(
                "reference",
                str,
                description="internal reference, idempotency_key, NIP session id, beneficiary "
                "account number, or part of the account name",
            ),
            OpenApiParameter(
                "batch_id",
                int,
                description="only the payouts a bulk request created (its data.batch.id); "
                "another merchant's or mode's batch lists nothing",
            ),
        ],
        page_name="PayoutPage",
        item_serializer=PayoutOutputSerializer,
    )
    def get(self, request: Request) -> EnvelopeResponse:
        pages, filters = list_query(request.query_params, PayoutListParamsSerializer)
        wallet = self.wallet(request)
        page = payout_list_page(
            merchant=self.merchant(request),
            mode=self.mode(request),
            wallet_id=None if wallet is None else wallet.pk,
            filters=PayoutListFilters(**filters),
            **pages,
        )
        return page_response(page, PayoutOutputSerializer, message="Payouts retrieved successfully")


class PayoutDetailApi(MerchantApi):
    """One payout of the merchant in the key's mode."""

    openapi_tag = ApiTag.PAYOUTS
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404,)

    @extend_schema(
        operation_id="payout_retrieve",
        summary="Retrieve a payout",
        description=(
            "One payout of the key's wallet by its id, as it stands now. A payout of another "
            "merchant, or of the other mode (test or live), is a 404."
        ),
        responses=PayoutDetailOutputSerializer,
        examples=examples.DETAIL_EXAMPLES,
    )
    def get(self, request: Request, payout_id: int) -> EnvelopeResponse:
        payout = payout_get(
            merchant=self.merchant(request), mode=self.mode(request), payout_id=payout_id
        )
        return EnvelopeResponse(
            PayoutDetailOutputSerializer(payout).data, message="Payout retrieved successfully"
        )


class PayoutRequeryApi(MerchantApi):
    """Asks the provider for the payout's status without resubmitting the transfer.

    200 when the payout is final after the check (``successful``; or ``failed``, whose funds are
    back in the available balance); 202 while it is not conclusive (``ambiguous``, or still
    ``reserved``/``processing`` before the transfer was sent); 409 for a payout that was already
    final; 404 for an unknown payout.
    """

    openapi_tag = ApiTag.PAYOUTS
    required_scopes = {"POST": Scope.PAYOUTS_WRITE}
    error_statuses = (404, 409)

    @extend_schema(
        operation_id="payout_requery",
        summary="Requery a payout's status with the provider",
        description=(
            "Asks the provider how the transfer ended, without sending it again. 200 when the "
            "payout is final after the check: successful, or failed with its funds back in the "
            "available balance. 202 while it is not conclusive (ambiguous, or still reserved or "
            "processing before the transfer was sent): the funds stay reserved; the service "
            "keeps asking on its own. 409 for a payout that was already final; 404 for an "
            "unknown payout."
        ),
        examples=examples.requery_examples(
            REQUERY_SUCCESS_MESSAGE,
            REQUERY_FAILED_MESSAGE,
            REQUERY_AMBIGUOUS_MESSAGE,
            REQUERY_PENDING_MESSAGE,
        ),
        request=None,
        responses={
            200: PayoutDetailOutputSerializer,
            202: OpenApiResponse(
                PayoutDetailOutputSerializer, description="still processing or not yet conclusive"
            ),
        },
    )
    def post(self, request: Request, payout_id: int) -> EnvelopeResponse:
        payout = payout_get(
            merchant=self.merchant(request), mode=self.mode(request), payout_id=payout_id
        )
        payout = payout_requery(payout=payout)
        data = PayoutDetailOutputSerializer(payout).data
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


class TestPayoutReturnApi(TestHelperApi):
    """Test mode only: the beneficiary's bank sends a successful payout back, as a real bank
    sometimes does days later. The payout stays ``successful`` and gains ``returned_at`` and
    ``return_reason``; the principal goes back to the available balance (a ``payout_return``
    ledger entry); ``payout.returned`` is delivered. Once per payout: again is a 409, as is a
    payout that is not successful. A live key gets 404: the route does not exist in live mode.
    """

    error_statuses = (404, 409)

    @extend_schema(
        operation_id="test_helper_payout_return",
        summary="Test mode: the beneficiary's bank returns a successful payout",
        description=(
            "Test mode only. Makes the beneficiary's bank send a successful payout back, as a "
            "real bank sometimes does days later: the payout stays successful and gains "
            "returned_at and return_reason, its principal goes back to the available balance, "
            "and payout.returned is delivered. Once per payout: again, or a payout that is not "
            "successful, is a 409. A live key gets 404."
        ),
        examples=examples.return_examples(RETURNED_MESSAGE),
        request=TestPayoutReturnInputSerializer,
        responses=PayoutOutputSerializer,
    )
    def post(self, request: Request, payout_id: int) -> EnvelopeResponse:
        self.test_key_required(request)
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

    openapi_tag = ApiTag.PAYOUTS
    required_scopes = {"POST": Scope.PAYOUTS_WRITE}
    error_statuses = (404, 409, 503)
    throttle_scope = "payout_bulk"

    @extend_schema(
        operation_id="payout_bulk_create",
        summary="Create up to 500 payouts in one request",
        request=PayoutBatchCreateInputSerializer,
        responses={202: PayoutBatchCreateOutputSerializer},
        description=(
            f"1 to {BATCH_MAX_ITEMS} items, each with the "
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
        examples=examples.bulk_create_examples(BATCH_CREATED_MESSAGE),
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
            created_by_key_id=self.key_id(request),
        )
        return EnvelopeResponse(
            PayoutBatchCreateOutputSerializer(result).data,
            message=BATCH_DUPLICATE_MESSAGE if result.duplicate else BATCH_CREATED_MESSAGE,
            status=202,
        )


class PayoutBatchDetailApi(MerchantApi):
    """Extension: one bulk request of the merchant in the key's mode, with how many of its
    payouts are in each status now. Its payouts: ``GET …/payouts?batch_id=``."""

    openapi_tag = ApiTag.PAYOUTS
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404,)

    @extend_schema(
        operation_id="payout_bulk_retrieve",
        summary="Retrieve a bulk request and its payouts' statuses",
        responses=PayoutBatchDetailOutputSerializer,
        description=(
            "The batch as the create answered it (counts and totals of what it reserved) and "
            "payout_status_counts: how many of the payouts it created are in each of the six "
            "statuses now. List them with GET …/payouts?batch_id={id}. 404 for another "
            "merchant's or the other mode's batch."
        ),
        examples=examples.BULK_DETAIL_EXAMPLES,
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
