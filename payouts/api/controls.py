"""The routes of the merchant's own payout controls (extensions beside the spec's routes): the
wallet's approval threshold, approving a payout with a second key, cancelling a held payout.
Views parse input, call one service, serialize the result; the rules live in
``payouts.services.controls``."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.responses import EnvelopeResponse
from core.api.schema_components import ApiTag
from merchants.scopes import Scope
from payouts.api import examples
from payouts.api.serializers import (
    PayoutApprovalSettingsInputSerializer,
    PayoutApprovalSettingsOutputSerializer,
    PayoutOutputSerializer,
)
from payouts.services.controls import (
    approval_expires_after,
    payout_approval_threshold_set,
    payout_approve,
    payout_cancel,
)
from wallets.models import Wallet
from wallets.selectors import wallet_get

APPROVALS_RETRIEVED_MESSAGE = "Payout approval settings retrieved successfully"
APPROVALS_UPDATED_MESSAGE = "Payout approval settings updated"
APPROVED_MESSAGE = "Payout approved"
CANCELLED_MESSAGE = "Payout cancelled; the funds are back in the available balance"


def _approval_settings(wallet: Wallet) -> dict[str, object]:
    return PayoutApprovalSettingsOutputSerializer(
        {
            "approval_threshold": wallet.approval_threshold,
            "approval_expires_after_seconds": int(approval_expires_after().total_seconds()),
        }
    ).data


APPROVAL_SETTINGS_EXAMPLES = examples.approval_settings_examples(
    APPROVALS_RETRIEVED_MESSAGE, APPROVALS_UPDATED_MESSAGE
)


class PayoutApprovalSettingsApi(MerchantApi):
    """The approval threshold of the key's wallet: API payouts of at least this amount wait,
    reserved, for another key's approval."""

    openapi_tag = ApiTag.PAYOUTS
    # Setting the threshold needs the approving scope: a key that may only create payouts must
    # not lift the approval its own payouts wait for.
    required_scopes = {"GET": Scope.READ, "PUT": Scope.PAYOUTS_APPROVE}
    error_statuses = (404,)

    @extend_schema(
        operation_id="payout_approvals_retrieve",
        summary="Retrieve the payout approval threshold",
        description=(
            "Extension. The wallet's approval threshold (null: no approval needed) and how long "
            "a payout waits for approval before it is cancelled (Approval expired)."
        ),
        responses=PayoutApprovalSettingsOutputSerializer,
        examples=APPROVAL_SETTINGS_EXAMPLES["get"],
    )
    def get(self, request: Request) -> EnvelopeResponse:
        wallet = wallet_get(merchant=self.merchant(request), mode=self.mode(request))
        return EnvelopeResponse(_approval_settings(wallet), message=APPROVALS_RETRIEVED_MESSAGE)

    @extend_schema(
        operation_id="payout_approvals_update",
        summary="Set or turn off the payout approval threshold",
        description=(
            "Extension. A payout created with a key (single or bulk item) whose amount is at "
            "or above approval_threshold (greater than zero) is reserved but not sent until "
            "another key approves it (POST …/payouts/{id}/approve); not approved within 24 h, "
            "it is cancelled and its funds released. null turns approval off; payouts already "
            "created keep the approval they were created with. Per mode (the key's). Audited."
        ),
        request=PayoutApprovalSettingsInputSerializer,
        responses=PayoutApprovalSettingsOutputSerializer,
        examples=APPROVAL_SETTINGS_EXAMPLES["put"],
    )
    def put(self, request: Request) -> EnvelopeResponse:
        serializer = PayoutApprovalSettingsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        wallet = wallet_get(merchant=self.merchant(request), mode=self.mode(request))
        wallet = payout_approval_threshold_set(
            wallet_id=wallet.pk,
            approval_threshold=serializer.validated_data["approval_threshold"],
            actor=self.actor(request),
        )
        return EnvelopeResponse(_approval_settings(wallet), message=APPROVALS_UPDATED_MESSAGE)


class PayoutApproveApi(MerchantApi):
    """Approves a payout awaiting approval, with another key than the one that created it."""

    openapi_tag = ApiTag.PAYOUTS
    required_scopes = {"POST": Scope.PAYOUTS_APPROVE}
    error_statuses = (403, 404, 409)

    @extend_schema(
        operation_id="payout_approve",
        summary="Approve a payout awaiting approval",
        description=(
            "Extension. Releases a payout at or above the approval threshold for dispatch: at "
            "once, or at its scheduled_for. The key must not be the one that created the payout "
            "(403). A payout that needs no approval, is approved already, or was cancelled, "
            "expired or is final is a 409. Audited."
        ),
        request=None,
        responses=PayoutOutputSerializer,
        examples=examples.approve_examples(APPROVED_MESSAGE),
    )
    def post(self, request: Request, payout_id: int) -> EnvelopeResponse:
        payout = payout_approve(
            merchant=self.merchant(request),
            mode=self.mode(request),
            payout_id=payout_id,
            key_id=self.key_id(request),
            actor=self.actor(request),
        )
        return EnvelopeResponse(PayoutOutputSerializer(payout).data, message=APPROVED_MESSAGE)


class PayoutCancelApi(MerchantApi):
    """Cancels a payout still held: awaiting approval or its scheduled time."""

    openapi_tag = ApiTag.PAYOUTS
    required_scopes = {"POST": Scope.PAYOUTS_WRITE}
    error_statuses = (404, 409)

    @extend_schema(
        operation_id="payout_cancel",
        summary="Cancel a payout awaiting approval or its scheduled time",
        description=(
            "Extension. Before dispatch only: the payout becomes failed with error_message "
            '"Cancelled by the merchant", its total debit goes back to the available balance '
            "(a payout_reversal ledger entry) and payout.failed is sent. A payout being "
            "dispatched or after, or one that was never held (no approval pending, no "
            "scheduled time to wait for), is a 409. Audited."
        ),
        request=None,
        responses=PayoutOutputSerializer,
        examples=examples.cancel_examples(CANCELLED_MESSAGE),
    )
    def post(self, request: Request, payout_id: int) -> EnvelopeResponse:
        payout = payout_cancel(
            merchant=self.merchant(request),
            mode=self.mode(request),
            payout_id=payout_id,
            actor=self.actor(request),
        )
        return EnvelopeResponse(PayoutOutputSerializer(payout).data, message=CANCELLED_MESSAGE)
