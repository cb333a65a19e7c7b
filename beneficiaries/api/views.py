"""Saved-beneficiary routes: save, list, details,
delete. A payout is made to a saved beneficiary through the payout create's ``beneficiary_id``.

Saving answers 201 with the new beneficiary, or 200 with the one already saved for that account
(same bank and number; unchanged, no name enquiry). Deleting answers 200 with the deleted
beneficiary in the envelope, like every other route (no 204: every answer has a body).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
)
from rest_framework.request import Request

from beneficiaries.api.serializers import (
    BeneficiaryCreateInputSerializer,
    BeneficiaryListParamsSerializer,
    SavedBeneficiaryOutputSerializer,
)
from beneficiaries.selectors import beneficiary_get, beneficiary_list
from beneficiaries.services import beneficiary_create, beneficiary_delete
from core.api.base import MerchantApi
from core.api.lists import list_query, list_schema
from core.api.pagination import paginate
from core.api.responses import EnvelopeResponse, envelope_example, page_example, page_response
from core.api.schema_components import ApiTag
from merchants.scopes import Scope

CREATED_MESSAGE = "Beneficiary saved"
EXISTING_MESSAGE = "Beneficiary already saved"

_EXAMPLE_BENEFICIARY: dict[str, Any] = {
    "id": 42,
    "account_number": "0123456789",
    "account_name": "SALAMI NGOZI UCHE",
    "bank_code": "058",
    "bank_name": "Guaranty Trust Bank",
    "nickname": "Warehouse rent",
    "created_at": "2026-03-02T09:15:04.118000+01:00",
}


class BeneficiaryListCreateApi(MerchantApi):
    """Save (POST) and list (GET) the merchant's beneficiaries of the key's mode."""

    openapi_tag = ApiTag.BENEFICIARIES
    required_scopes = {"GET": Scope.READ, "POST": Scope.BENEFICIARIES_WRITE}

    error_statuses = (503,)

    @property
    def throttle_scope(self) -> str | None:
        """A save costs a name enquiry, so it counts against the name-enquiry limit."""
        return "name_enquiry" if self.request.method == "POST" else None

    @extend_schema(
        operation_id="beneficiary_create",
        summary="Save a beneficiary (name resolved by name enquiry)",
        request=BeneficiaryCreateInputSerializer,
        responses={
            201: OpenApiResponse(SavedBeneficiaryOutputSerializer, description="saved"),
            200: OpenApiResponse(
                SavedBeneficiaryOutputSerializer,
                description="this account was already saved: the saved beneficiary, unchanged",
            ),
        },
        description=(
            "Resolves the bank and the account name through the name enquiry of the key's mode "
            "and saves the account; the name is for display (a payout resolves it again). "
            "Errors are the name enquiry's: 400 for a malformed account number, an unknown bank "
            "code or an unresolved account name, 503 with Retry-After while name enquiry is "
            "unavailable. Saving an account already saved (same bank_code and account_number) "
            "answers 200 with the saved beneficiary, unchanged."
        ),
        examples=[
            OpenApiExample(
                "Save an account",
                request_only=True,
                value={
                    "account_number": "0123456789",
                    "bank_code": "058",
                    "nickname": "Warehouse rent",
                },
            ),
            OpenApiExample(
                "Saved",
                response_only=True,
                status_codes=["201"],
                value=envelope_example(_EXAMPLE_BENEFICIARY, CREATED_MESSAGE, 201),
            ),
            OpenApiExample(
                "Already saved",
                response_only=True,
                status_codes=["200"],
                value=envelope_example(_EXAMPLE_BENEFICIARY, EXISTING_MESSAGE),
            ),
        ],
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = BeneficiaryCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = beneficiary_create(
            merchant=self.merchant(request), mode=self.mode(request), **serializer.validated_data
        )
        return EnvelopeResponse(
            SavedBeneficiaryOutputSerializer(result.beneficiary).data,
            message=CREATED_MESSAGE if result.created else EXISTING_MESSAGE,
            status=201 if result.created else 200,
        )

    @list_schema(
        operation_id="beneficiary_list",
        summary="List saved beneficiaries, newest first",
        parameters=[BeneficiaryListParamsSerializer],
        page_name="BeneficiaryPage",
        item_serializer=SavedBeneficiaryOutputSerializer,
        examples=[
            OpenApiExample(
                "One page",
                response_only=True,
                value=envelope_example(
                    page_example([_EXAMPLE_BENEFICIARY]), "Beneficiaries retrieved successfully"
                ),
            )
        ],
    )
    def get(self, request: Request) -> EnvelopeResponse:
        pages, filters = list_query(request.query_params, BeneficiaryListParamsSerializer)
        page = paginate(
            beneficiary_list(
                merchant=self.merchant(request),
                mode=self.mode(request),
                account_number=filters.get("account_number"),
            ),
            **pages,
        )
        return page_response(
            page, SavedBeneficiaryOutputSerializer, message="Beneficiaries retrieved successfully"
        )


class BeneficiaryDetailApi(MerchantApi):
    """One saved beneficiary (GET) and its deletion (DELETE); 404 for another merchant's, the
    other mode's or a deleted one."""

    openapi_tag = ApiTag.BENEFICIARIES
    required_scopes = {"GET": Scope.READ, "DELETE": Scope.BENEFICIARIES_WRITE}

    error_statuses = (404,)

    @extend_schema(
        operation_id="beneficiary_retrieve",
        summary="One saved beneficiary",
        responses=SavedBeneficiaryOutputSerializer,
        examples=[
            OpenApiExample(
                "Beneficiary",
                response_only=True,
                value=envelope_example(_EXAMPLE_BENEFICIARY, "Beneficiary retrieved successfully"),
            )
        ],
    )
    def get(self, request: Request, beneficiary_id: int) -> EnvelopeResponse:
        beneficiary = beneficiary_get(
            merchant=self.merchant(request),
            mode=self.mode(request),
            beneficiary_id=beneficiary_id,
        )
        return EnvelopeResponse(
            SavedBeneficiaryOutputSerializer(beneficiary).data,
            message="Beneficiary retrieved successfully",
        )

    @extend_schema(
        operation_id="beneficiary_delete",
        summary="Delete a saved beneficiary",
        request=None,
        responses={200: SavedBeneficiaryOutputSerializer},
        description=(
            "Answers 200 with the deleted beneficiary. It is gone from the list and details "
            "(404) and can no longer be paid by id; payouts already made to it keep their own "
            "copy of the account. The account may be saved again."
        ),
        examples=[
            OpenApiExample(
                "Deleted",
                response_only=True,
                value=envelope_example(_EXAMPLE_BENEFICIARY, "Beneficiary deleted"),
            )
        ],
    )
    def delete(self, request: Request, beneficiary_id: int) -> EnvelopeResponse:
        beneficiary = beneficiary_delete(
            merchant=self.merchant(request),
            mode=self.mode(request),
            beneficiary_id=beneficiary_id,
        )
        return EnvelopeResponse(
            SavedBeneficiaryOutputSerializer(beneficiary).data, message="Beneficiary deleted"
        )
