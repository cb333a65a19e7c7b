"""Collection routes (spec §4.10-4.12) and the test-mode completion helper."""

from __future__ import annotations

import secrets

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from collections_app.api.serializers import (
    TestHelperCompleteInputSerializer,
    TransactionInitializeInputSerializer,
    TransactionInitializeOutputSerializer,
    TransactionSearchOutputSerializer,
    TransactionStatusOutputSerializer,
)
from collections_app.models import ConfirmationSource
from collections_app.selectors import (
    transaction_get,
    transaction_get_for_search,
    transaction_get_for_status,
)
from collections_app.services import SANDBOX_GATEWAY, transaction_confirm, transaction_initialize
from core.api.base import ForbiddenMerchantApi
from core.api.responses import EnvelopeResponse
from core.exceptions import ApplicationError, ConflictError, NotFoundError
from merchants.models import Mode

TRANSACTION_NOT_FOUND = "Transaction not found"


class TransactionInitializeApi(ForbiddenMerchantApi):
    error_statuses = (409, 503)

    @extend_schema(
        operation_id="transactions_initialize",
        summary="Initialize a collection transaction for a payment item",
        tags=["Collections"],
        request=TransactionInitializeInputSerializer,
        responses=TransactionInitializeOutputSerializer,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = TransactionInitializeInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = transaction_initialize(
            merchant=self.merchant(request),
            mode=self.mode(request),
            **serializer.service_arguments(),
        )
        message = "Transaction initialized" if result.created else "Transaction already initialized"
        return EnvelopeResponse(
            TransactionInitializeOutputSerializer(result.transaction).data, message=message
        )


class TransactionStatusApi(ForbiddenMerchantApi):
    @extend_schema(
        operation_id="transactions_check_status",
        summary="Check a collection transaction's status",
        tags=["Collections"],
        responses=TransactionStatusOutputSerializer,
    )
    def get(self, request: Request, reference: str) -> EnvelopeResponse:
        found = transaction_get_for_status(
            merchant=self.merchant(request), mode=self.mode(request), reference=reference
        )
        if found is None:
            raise ApplicationError(TRANSACTION_NOT_FOUND)
        return EnvelopeResponse(
            TransactionStatusOutputSerializer(found).data, message="Transaction status retrieved"
        )


class TransactionSearchApi(ForbiddenMerchantApi):
    error_statuses = (404,)

    @extend_schema(
        operation_id="transactions_search",
        summary="Everything about one collection transaction",
        tags=["Collections"],
        responses=TransactionSearchOutputSerializer,
    )
    def get(self, request: Request, reference: str) -> EnvelopeResponse:
        found = transaction_get_for_search(
            merchant=self.merchant(request), mode=self.mode(request), reference=reference
        )
        if found is None:
            raise NotFoundError(TRANSACTION_NOT_FOUND)
        return EnvelopeResponse(
            TransactionSearchOutputSerializer(found).data, message="Transaction found"
        )


class TestHelperTransactionCompleteApi(ForbiddenMerchantApi):
    """Test mode only: settles a pending transaction as a provider confirmation would."""

    error_statuses = (404, 409)

    @extend_schema(
        operation_id="test_helpers_transactions_complete",
        summary="Test mode: complete a pending transaction as paid, failed or cancelled",
        tags=["Test helpers"],
        request=TestHelperCompleteInputSerializer,
        responses=TransactionSearchOutputSerializer,
    )
    def post(self, request: Request, reference: str) -> EnvelopeResponse:
        merchant, mode = self.merchant(request), self.mode(request)
        if mode != Mode.TEST:
            raise NotFoundError("Not found: test helpers work only with a test secret key")
        serializer = TestHelperCompleteInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        found = transaction_get(merchant=merchant, mode=mode, reference=reference)
        if found is None:
            raise NotFoundError(TRANSACTION_NOT_FOUND)
        result = transaction_confirm(
            transaction=found,
            outcome=serializer.validated_data["outcome"],
            gateway_reference=f"SBX_{secrets.token_hex(8).upper()}",
            gateway_used=SANDBOX_GATEWAY,
            source=ConfirmationSource.TEST_HELPER,
        )
        if not result.applied:
            raise ConflictError(
                f"Transaction is already {result.transaction.payment_status}; "
                "a final transaction cannot change"
            )
        refreshed = transaction_get_for_search(merchant=merchant, mode=mode, reference=reference)
        return EnvelopeResponse(
            TransactionSearchOutputSerializer(refreshed).data,
            message=f"Transaction marked {result.transaction.payment_status}",
        )
