"""Wallet routes: wallet and ledger, banks, name enquiry, funding notifications and the
test-mode funding helper. Views parse input, call one service or selector, serialize output."""

from __future__ import annotations

import logging
import secrets

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from core.api.base import MerchantApi
from core.api.pagination import PageParamsSerializer, PaginationField, paginate
from core.api.parsers import json_body_load
from core.api.request_text import request_text_check
from core.api.responses import EnvelopeResponse
from core.exceptions import ApplicationError, NotFoundError
from core.signing import hmac_sha512_hex_compute, hmac_sha512_hex_valid
from merchants.models import Mode
from wallets.api.serializers import (
    BankOutputSerializer,
    FundingNotificationInputSerializer,
    FundingOutputSerializer,
    LedgerEntryOutputSerializer,
    NameEnquiryInputSerializer,
    NameEnquiryOutputSerializer,
    TestWalletFundInputSerializer,
    TestWalletFundOutputSerializer,
    WalletOutputSerializer,
)
from wallets.models import FundingSource
from wallets.selectors import bank_list, ledger_entry_list, wallet_get
from wallets.services import funding_receive, name_enquiry_resolve

logger = logging.getLogger(__name__)

INVALID_SIGNATURE_MESSAGE = "Invalid or missing provider signature"


class WalletDetailApi(MerchantApi):
    """The merchant wallet of the key's mode, with its static funding account."""

    error_statuses = (404,)

    @extend_schema(operation_id="merchant_wallet_retrieve", responses=WalletOutputSerializer)
    def get(self, request: Request) -> EnvelopeResponse:
        wallet = wallet_get(merchant=self.merchant(request), mode=self.mode(request))
        return EnvelopeResponse(
            WalletOutputSerializer(wallet).data, message="Wallet retrieved successfully"
        )


class WalletLedgerListApi(MerchantApi):
    """Ledger entries of the key's wallet, newest first, paginated like the payout list."""

    error_statuses = (404,)

    @extend_schema(
        operation_id="merchant_wallet_ledger_list",
        parameters=[
            OpenApiParameter("page", int, description="default 1"),
            OpenApiParameter("limit", int, description="1 to 200, default 50"),
        ],
        responses=inline_serializer(
            "LedgerPage",
            {
                "items": LedgerEntryOutputSerializer(many=True),
                "pagination": PaginationField(),
            },
        ),
    )
    def get(self, request: Request) -> EnvelopeResponse:
        params = PageParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        wallet = wallet_get(merchant=self.merchant(request), mode=self.mode(request))
        page = paginate(ledger_entry_list(wallet=wallet), **params.validated_data)
        return EnvelopeResponse(
            {
                "items": LedgerEntryOutputSerializer(page.items, many=True).data,
                "pagination": page.pagination(),
            },
            message="Ledger entries retrieved successfully",
        )


class BankListApi(MerchantApi):
    """The active banks (cached)."""

    @extend_schema(operation_id="bank_list", responses=BankOutputSerializer(many=True))
    def get(self, request: Request) -> EnvelopeResponse:
        return EnvelopeResponse(
            BankOutputSerializer(bank_list(), many=True).data,
            message="Banks retrieved successfully",
        )


class NameEnquiryApi(MerchantApi):
    """Resolves a beneficiary's account name through the mode's provider.

    The spec's success example omits ``statusCode``; this service keeps the full envelope.
    """

    throttle_scope = "name_enquiry"
    error_statuses = (503,)

    @extend_schema(
        operation_id="payout_name_enquiry",
        request=NameEnquiryInputSerializer,
        responses=NameEnquiryOutputSerializer,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = NameEnquiryInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = name_enquiry_resolve(mode=self.mode(request), **serializer.validated_data)
        return EnvelopeResponse(
            NameEnquiryOutputSerializer(result).data,
            message="Account name resolved successfully",
        )


class TestWalletFundApi(MerchantApi):
    """Test mode only: simulates an inbound transfer to the test wallet's static account.

    A live key gets 404: the route does not exist in live mode.
    """

    error_statuses = (404, 409)

    @extend_schema(
        operation_id="test_helper_wallet_fund",
        request=TestWalletFundInputSerializer,
        responses=TestWalletFundOutputSerializer,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        if self.mode(request) != Mode.TEST:
            raise NotFoundError("Route not found")
        serializer = TestWalletFundInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        wallet = wallet_get(merchant=self.merchant(request), mode=Mode.TEST)
        reference = serializer.validated_data.get("reference") or (
            f"TEST-FUND-{secrets.token_hex(8).upper()}"
        )
        result = funding_receive(
            account_number=wallet.static_account_number,
            amount=serializer.validated_data["amount"],
            reference=reference,
            source=FundingSource.TEST_HELPER,
            sender_account_name="Sandbox Sender",
            sender_bank_name="Sandbox Test Bank",
            narration="Simulated inbound transfer",
            raw_payload={"simulated": True, "reference": reference},
        )
        message = "Funding already recorded" if result.duplicate else "Test wallet funded"
        return EnvelopeResponse(TestWalletFundOutputSerializer(result).data, message=message)


def funding_signature_compute(raw_body: bytes, *, secret: str) -> str:
    """Hex HMAC-SHA512 of the raw request body."""
    return hmac_sha512_hex_compute(raw_body, secret=secret)


class FundingNotificationApi(APIView):
    """Inbound-transfer notifications from the collection provider.

    Authenticated by a hex HMAC-SHA512 of the raw body with ``FUNDING_WEBHOOK_SECRET`` in the
    ``FUNDING_WEBHOOK_SIGNATURE_HEADER`` header (default ``X-Provider-Signature``), not by a
    merchant key. Idempotent on the provider's transaction reference.
    """

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []
    error_statuses = (401, 404, 409)

    @extend_schema(
        operation_id="funding_notification",
        request=FundingNotificationInputSerializer,
        responses=FundingOutputSerializer,
        auth=[],
    )
    def post(self, request: Request) -> EnvelopeResponse:
        raw_body = request.body
        self._verify_signature(request, raw_body)
        request_text_check(request, {})
        payload = json_body_load(raw_body)
        if not isinstance(payload, dict):
            raise ApplicationError("request body must be a JSON object")
        serializer = FundingNotificationInputSerializer(data=payload)
        serializer.is_valid(raise_exception=True)
        result = funding_receive(
            **serializer.validated_data,
            source=FundingSource.PROVIDER,
            raw_payload=payload,
        )
        message = "Funding already credited" if result.duplicate else "Funding credited"
        return EnvelopeResponse(FundingOutputSerializer(result).data, message=message)

    @staticmethod
    def _verify_signature(request: Request, raw_body: bytes) -> None:
        secret = settings.FUNDING_WEBHOOK_SECRET
        provided = request.headers.get(settings.FUNDING_WEBHOOK_SIGNATURE_HEADER, "").strip()
        remote = request.META.get("REMOTE_ADDR", "")
        if not secret:
            logger.error("funding notification refused: FUNDING_WEBHOOK_SECRET is not set")
            raise ApplicationError(INVALID_SIGNATURE_MESSAGE, status=401)
        if not provided:
            logger.warning("funding notification refused: missing signature (from %s)", remote)
            raise ApplicationError(INVALID_SIGNATURE_MESSAGE, status=401)
        if not hmac_sha512_hex_valid(raw_body, provided, secret=secret):
            logger.warning("funding notification refused: bad signature (from %s)", remote)
            raise ApplicationError(INVALID_SIGNATURE_MESSAGE, status=401)
