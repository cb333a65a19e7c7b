"""Wallet routes: wallet and ledger, banks, name enquiry, funding notifications and the
test-mode funding helper. Views parse input, call one service or selector, serialize output."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import Http404, HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
)
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.base import MerchantApi
from core.api.lists import list_schema
from core.api.pagination import page_params, paginate
from core.api.parsers import json_body_load
from core.api.renderers import EnvelopeJSONRenderer
from core.api.request_text import request_text_check
from core.api.responses import EnvelopeResponse, page_response, response_example
from core.api.schema_components import ApiTag
from core.api.webhooks import INVALID_SIGNATURE_MESSAGE, ProviderWebhookApi
from core.exceptions import ApplicationError
from core.signing import hmac_sha512_hex_compute, hmac_sha512_hex_valid
from merchants.api.test_helpers import TestHelperApi
from merchants.models import Mode
from merchants.scopes import Scope
from wallets.api import examples
from wallets.api.serializers import (
    BankOutputSerializer,
    FundingNotificationInputSerializer,
    FundingOutputSerializer,
    LedgerEntryOutputSerializer,
    NameEnquiryInputSerializer,
    NameEnquiryOutputSerializer,
    TestWalletFundInputSerializer,
    TestWalletFundOutputSerializer,
    WalletAlertsInputSerializer,
    WalletAlertsOutputSerializer,
    WalletOutputSerializer,
    WalletStatementCsvParamsSerializer,
    WalletStatementOutputSerializer,
    WalletStatementParamsSerializer,
)
from wallets.models import FundingSource
from wallets.selectors import bank_list, ledger_entry_list, wallet_get
from wallets.services import funding_receive, name_enquiry_resolve, wallet_alerts_set
from wallets.statements import (
    STATEMENT_MAX_DAYS,
    wallet_statement,
    wallet_statement_csv_response,
)

logger = logging.getLogger(__name__)


class WalletDetailApi(MerchantApi):
    """The merchant wallet of the key's mode, with its static funding account."""

    openapi_tag = ApiTag.WALLET
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404,)

    @extend_schema(
        operation_id="merchant_wallet_retrieve",
        summary="Retrieve the wallet",
        description=(
            "The wallet of the key's mode: the available balance (what payouts can use), the "
            "reserved balance (held for payouts in flight) and the static account a bank "
            "transfer to which funds the wallet."
        ),
        responses=WalletOutputSerializer,
        examples=examples.WALLET_EXAMPLES,
    )
    def get(self, request: Request) -> EnvelopeResponse:
        wallet = wallet_get(merchant=self.merchant(request), mode=self.mode(request))
        return EnvelopeResponse(
            WalletOutputSerializer(wallet).data, message="Wallet retrieved successfully"
        )


class WalletLedgerListApi(MerchantApi):
    """Ledger entries of the key's wallet, newest first, paginated like the payout list."""

    openapi_tag = ApiTag.WALLET
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404,)

    @list_schema(
        operation_id="merchant_wallet_ledger_list",
        summary="List ledger entries",
        description=(
            "Every change to the wallet's balances, newest first: fundings, payout "
            "reservations, captures, releases and returns, each with its deltas and the "
            "balances after it. The sum of the deltas is the wallet's balance."
        ),
        examples=examples.LEDGER_EXAMPLES,
        page_name="LedgerPage",
        item_serializer=LedgerEntryOutputSerializer,
    )
    def get(self, request: Request) -> EnvelopeResponse:
        params = page_params(request.query_params)
        wallet = wallet_get(merchant=self.merchant(request), mode=self.mode(request))
        page = paginate(ledger_entry_list(wallet=wallet), **params)
        return page_response(
            page, LedgerEntryOutputSerializer, message="Ledger entries retrieved successfully"
        )


ALERTS_RETRIEVED = "Low-balance alert retrieved successfully"
ALERTS_UPDATED = "Low-balance alert updated"
ALERTS_ARMED = {
    "low_balance_threshold": "5000.00",
    "low_balance_alerted": False,
    "available_balance": "125000.00",
}


class WalletAlertsApi(MerchantApi):
    """The low-balance alert of the key's wallet.

    ``wallet.balance_low`` is sent once when the available balance crosses from at or above the
    threshold to below it, and again only after it has been back at or above the threshold.
    Setting a new threshold the balance is already below sends one alert at once.
    """

    openapi_tag = ApiTag.WALLET
    required_scopes = {"GET": Scope.READ, "PUT": Scope.ALERTS_WRITE}
    error_statuses = (404,)

    @extend_schema(
        operation_id="merchant_wallet_alerts_retrieve",
        summary="Retrieve the low-balance alert",
        description=(
            "The wallet's low-balance threshold (null when the alert is off), whether the "
            "alert has fired since the balance last stood at or above it, and the available "
            "balance. wallet.balance_low is sent once when the available balance falls below "
            "the threshold, and again only after it has been back at or above it."
        ),
        responses=WalletAlertsOutputSerializer,
        examples=[
            response_example("Alert armed", ALERTS_ARMED, ALERTS_RETRIEVED),
            response_example(
                "No alert",
                {
                    "low_balance_threshold": None,
                    "low_balance_alerted": False,
                    "available_balance": "125000.00",
                },
                ALERTS_RETRIEVED,
            ),
        ],
    )
    def get(self, request: Request) -> EnvelopeResponse:
        wallet = wallet_get(merchant=self.merchant(request), mode=self.mode(request))
        return EnvelopeResponse(WalletAlertsOutputSerializer(wallet).data, message=ALERTS_RETRIEVED)

    @extend_schema(
        operation_id="merchant_wallet_alerts_update",
        summary="Set or turn off the low-balance alert",
        request=WalletAlertsInputSerializer,
        responses=WalletAlertsOutputSerializer,
        description=(
            "Sets the wallet's low-balance threshold (greater than zero), or turns the alert "
            "off with null. A new threshold the available balance is already below sends one "
            "wallet.balance_low at once (low_balance_alerted is then true); sending the "
            "current threshold again changes nothing."
        ),
        examples=[
            OpenApiExample(
                "Alert below NGN 5000",
                value={"low_balance_threshold": "5000.00"},
                request_only=True,
            ),
            OpenApiExample(
                "Turn the alert off", value={"low_balance_threshold": None}, request_only=True
            ),
            response_example("Alert armed", ALERTS_ARMED, ALERTS_UPDATED),
            response_example(
                "Already below so alerted at once",
                {
                    "low_balance_threshold": "200000.00",
                    "low_balance_alerted": True,
                    "available_balance": "125000.00",
                },
                ALERTS_UPDATED,
            ),
        ],
    )
    def put(self, request: Request) -> EnvelopeResponse:
        serializer = WalletAlertsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        wallet = wallet_get(merchant=self.merchant(request), mode=self.mode(request))
        wallet = wallet_alerts_set(
            wallet_id=wallet.pk,
            low_balance_threshold=serializer.validated_data["low_balance_threshold"],
        )
        return EnvelopeResponse(WalletAlertsOutputSerializer(wallet).data, message=ALERTS_UPDATED)


class StatementCsvRenderer(BaseRenderer):
    """``text/csv`` (``Accept: text/csv`` or ``?format=csv``) for the statement route.

    The view writes the CSV itself (``wallet_statement_csv_response``, an attachment) and errors
    stay in the JSON envelope, so this renderer only lets content negotiation choose CSV.
    """

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if isinstance(data, bytes):
            return data
        raise TypeError("the statement CSV is written by the view, not rendered from data")


class WalletStatementApi(MerchantApi):
    """The daily settlement statement of the key's wallet: opening balances, movements and
    closing balances per Lagos day and for the range; JSON in the envelope, or a CSV attachment
    (one row per day and a totals row). Errors are always the JSON envelope."""

    renderer_classes = [EnvelopeJSONRenderer, StatementCsvRenderer]
    openapi_tag = ApiTag.WALLET
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404, 406)

    @extend_schema(
        operation_id="merchant_wallet_statement_retrieve",
        summary="Daily settlement statement",
        examples=examples.STATEMENT_EXAMPLES,
        parameters=[WalletStatementParamsSerializer],
        responses={
            (200, "application/json"): WalletStatementOutputSerializer,
            (200, "text/csv"): OpenApiTypes.STR,
        },
        description=(
            "Opening balances, movements (fundings, payouts reserved, payouts captured with "
            "their fees, releases, returns) and closing balances for each day and for the "
            "range. Days are Africa/Lagos days; from_date to to_date covers at most "
            f"{STATEMENT_MAX_DAYS} days and ends no later than today. CSV (one row per day "
            "and a totals row) with Accept: text/csv or format=csv; errors are always the JSON "
            "envelope."
        ),
    )
    def get(self, request: Request) -> HttpResponseBase:
        params = WalletStatementParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        wallet = wallet_get(merchant=self.merchant(request), mode=self.mode(request))
        statement = wallet_statement(
            wallet=wallet,
            first_day=params.validated_data["from_date"],
            last_day=params.validated_data["to_date"],
        )
        if isinstance(request.accepted_renderer, StatementCsvRenderer):
            return wallet_statement_csv_response(statement=statement)
        return EnvelopeResponse(
            WalletStatementOutputSerializer(statement).data,
            message="Statement retrieved successfully",
        )

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[BaseRenderer, str]:
        """An unknown ``format`` is answered after authentication, as a 400 naming it (the
        parameters serializer), rather than DRF's 404 before it: negotiate JSON meanwhile."""
        try:
            return super().perform_content_negotiation(request, force=force)
        except Http404:
            renderer = EnvelopeJSONRenderer()
            return renderer, renderer.media_type

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        """Errors stay the JSON envelope even when CSV was asked for."""
        if response.status_code >= 400 and isinstance(
            getattr(request, "accepted_renderer", None), StatementCsvRenderer
        ):
            renderer = EnvelopeJSONRenderer()
            request.accepted_renderer = renderer
            request.accepted_media_type = renderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


class WalletStatementCsvApi(WalletStatementApi):
    """The statement as its CSV attachment whatever the Accept header says: one operation with
    one ``text/csv`` answer, so a generated client reads it as text. Errors stay the JSON
    envelope."""

    renderer_classes = [StatementCsvRenderer]

    @extend_schema(
        operation_id="merchant_wallet_statement_csv",
        summary="Daily settlement statement as CSV",
        parameters=[WalletStatementCsvParamsSerializer],
        responses={(200, "text/csv"): OpenApiTypes.STR},
        description=(
            "The daily settlement statement as a CSV attachment (one row per Africa/Lagos day "
            "and a totals row), the same figures as the JSON statement, whatever the Accept "
            f"header. from_date to to_date covers at most {STATEMENT_MAX_DAYS} days and ends "
            "no later than today; errors are the JSON envelope."
        ),
    )
    def get(self, request: Request) -> HttpResponseBase:
        return super().get(request)

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[BaseRenderer, str]:
        renderer = StatementCsvRenderer()
        return renderer, renderer.media_type


class BankListApi(MerchantApi):
    """The active banks (cached)."""

    openapi_tag = ApiTag.BANKS
    required_scopes = {"GET": Scope.READ}

    @extend_schema(
        operation_id="bank_list",
        summary="List banks",
        description=(
            "The banks a payout can go to: bank_code is what a payout, a name enquiry or a "
            "saved beneficiary takes; id is the optional bank_id of a payout."
        ),
        responses=BankOutputSerializer(many=True),
        examples=examples.BANK_LIST_EXAMPLES,
    )
    def get(self, request: Request) -> EnvelopeResponse:
        return EnvelopeResponse(
            BankOutputSerializer(bank_list(), many=True).data,
            message="Banks retrieved successfully",
        )


class NameEnquiryApi(MerchantApi):
    """Resolves a beneficiary's account name through the mode's provider.

    The success answer keeps the whole envelope, ``statusCode`` included.
    """

    openapi_tag = ApiTag.BANKS
    required_scopes = {"POST": Scope.PAYOUTS_WRITE}
    throttle_scope = "name_enquiry"
    error_statuses = (503,)

    @extend_schema(
        operation_id="payout_name_enquiry",
        summary="Resolve an account holder's name",
        description=(
            "The name the bank holds for this account number, so you can show it before you "
            "pay. An account the bank does not know is a 400; the provider being unreachable "
            "is a 503 (try again later). The payout create resolves the name again itself."
        ),
        examples=examples.NAME_ENQUIRY_EXAMPLES,
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


class TestWalletFundApi(TestHelperApi):
    """Test mode only: simulates an inbound transfer to the test wallet's static account.

    A live key gets 404: the route does not exist in live mode.
    """

    error_statuses = (404, 409)

    @extend_schema(
        operation_id="test_helper_wallet_fund",
        summary="Test mode: fund the test wallet",
        description=(
            "Test mode only. Simulates a bank transfer into the test wallet's static account: "
            "the amount is credited to the available balance at once, with a funding ledger "
            "entry. The same reference again records nothing more (duplicate=true). A live key "
            "gets 404."
        ),
        examples=examples.TEST_FUND_EXAMPLES,
        request=TestWalletFundInputSerializer,
        responses=TestWalletFundOutputSerializer,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        self.test_key_required(request)
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


class FundingNotificationApi(ProviderWebhookApi):
    """Inbound-transfer notifications from the collection provider.

    Authenticated by a hex HMAC-SHA512 of the raw body with ``FUNDING_WEBHOOK_SECRET`` in the
    ``FUNDING_WEBHOOK_SIGNATURE_HEADER`` header (default ``X-Provider-Signature``), not by a
    merchant key. Idempotent on the provider's transaction reference.
    """

    error_statuses = (401, 404, 409)

    @extend_schema(
        operation_id="funding_notification",
        summary="Wallet funding notification from the collection provider",
        description=(
            "Called by the collection provider when a bank transfer reaches a wallet's static "
            "account; merchants never call it. Authenticated by a hex HMAC-SHA512 of the raw "
            "body in the provider's signature header (X-Provider-Signature by default), not by "
            "a merchant key: a missing or wrong signature is a 401. Idempotent on the "
            "provider's reference: the same notification again credits nothing more "
            "(duplicate=true)."
        ),
        examples=examples.FUNDING_NOTIFICATION_EXAMPLES,
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

    def _verify_signature(self, request: Request, raw_body: bytes) -> None:
        secret = settings.FUNDING_WEBHOOK_SECRET
        provided = request.headers.get(settings.FUNDING_WEBHOOK_SIGNATURE_HEADER, "").strip()
        if not secret:
            logger.error("funding notification refused: FUNDING_WEBHOOK_SECRET is not set")
            raise ApplicationError(INVALID_SIGNATURE_MESSAGE, status=401)
        if not provided:
            raise self.signature_refused(request, "funding notification refused: missing signature")
        if not hmac_sha512_hex_valid(raw_body, provided, secret=secret):
            raise self.signature_refused(request, "funding notification refused: bad signature")
