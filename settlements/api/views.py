"""Settlement routes: the merchant's settlements of the key's mode, one settlement with its
subaccount shares, and the paid collections a settlement settled. Reads only; the settlement
runs themselves are ``settlements.services``'."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.list_filters import date_range_parameters, status_parameter
from core.api.lists import list_query, list_schema
from core.api.pagination import page_params
from core.api.responses import EnvelopeResponse, page_response
from core.api.schema_components import ApiTag
from merchants.scopes import Scope
from settlements.api import examples
from settlements.api.serializers import (
    SettlementDetailOutputSerializer,
    SettlementListParamsSerializer,
    SettlementOutputSerializer,
    SettlementTransactionOutputSerializer,
)
from settlements.models import SettlementStatus
from settlements.selectors import (
    SettlementListFilters,
    settlement_get,
    settlement_list_page,
    settlement_transactions_page,
)


class SettlementListApi(MerchantApi):
    """The merchant's settlements in the key's mode, newest first."""

    openapi_tag = ApiTag.SETTLEMENTS
    required_scopes = {"GET": Scope.READ}

    @list_schema(
        operation_id="settlement_list",
        summary="List settlements",
        description=(
            "The settlements of the key's mode, newest first, a page at a time (pagination.total "
            "is exact). Each settlement credited the wallet with its net (gross - fees - "
            "subaccount shares - refunds deducted) by one settlement ledger entry. Filters "
            "combine: status, and from_date/to_date on settled_at (ISO 8601; a bare date is a "
            "whole Lagos day). A test key sees test settlements only, a live key live ones."
        ),
        examples=examples.LIST_EXAMPLES,
        parameters=[status_parameter(SettlementStatus), *date_range_parameters("settled_at")],
        page_name="SettlementPage",
        item_serializer=SettlementOutputSerializer,
    )
    def get(self, request: Request) -> EnvelopeResponse:
        pages, filters = list_query(request.query_params, SettlementListParamsSerializer)
        page = settlement_list_page(
            merchant=self.merchant(request),
            mode=self.mode(request),
            filters=SettlementListFilters(**filters),
            **pages,
        )
        return page_response(page, SettlementOutputSerializer, message=examples.LIST_MESSAGE)


class SettlementDetailApi(MerchantApi):
    """One settlement of the merchant in the key's mode, with its subaccount shares."""

    openapi_tag = ApiTag.SETTLEMENTS
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404,)

    @extend_schema(
        operation_id="settlement_retrieve",
        summary="Retrieve a settlement",
        description=(
            "One settlement by its settlement_id, with what it pays each subaccount (shares: "
            "account_code, account_name, amount and the payout that pays it from the platform's "
            "wallet, null until created). A settlement of another merchant, or of the other "
            "mode (test or live), is a 404."
        ),
        responses=SettlementDetailOutputSerializer,
        examples=examples.DETAIL_EXAMPLES,
    )
    def get(self, request: Request, settlement_id: str) -> EnvelopeResponse:
        settlement = settlement_get(
            merchant=self.merchant(request), mode=self.mode(request), settlement_id=settlement_id
        )
        return EnvelopeResponse(
            SettlementDetailOutputSerializer(settlement).data, message=examples.DETAIL_MESSAGE
        )


class SettlementTransactionListApi(MerchantApi):
    """The paid collections one settlement settled."""

    openapi_tag = ApiTag.SETTLEMENTS
    required_scopes = {"GET": Scope.READ}
    error_statuses = (404,)

    @list_schema(
        operation_id="settlement_transactions",
        summary="List a settlement's transactions",
        description=(
            "The paid collections the settlement settled, in the order they were paid, a page "
            "at a time: each with its amount, our fee, what the customer paid, what was "
            "refunded so far, the subaccounts' shares and the net to the merchant "
            "(amount_paid - transaction_fee - subaccount_shares). A settlement of another "
            "merchant, or of the other mode, is a 404."
        ),
        examples=examples.TRANSACTIONS_EXAMPLES,
        page_name="SettlementTransactionPage",
        item_serializer=SettlementTransactionOutputSerializer,
    )
    def get(self, request: Request, settlement_id: str) -> EnvelopeResponse:
        pages = page_params(request.query_params)
        settlement = settlement_get(
            merchant=self.merchant(request),
            mode=self.mode(request),
            settlement_id=settlement_id,
            with_shares=False,
        )
        page = settlement_transactions_page(settlement=settlement, **pages)
        return page_response(
            page, SettlementTransactionOutputSerializer, message=examples.TRANSACTIONS_MESSAGE
        )
