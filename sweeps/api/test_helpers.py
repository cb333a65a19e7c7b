"""The test-mode sweep helper: ``POST /api/v1/test-helpers/sweep/settlement-account/activate``
ends the cooling-off period of the pending test settlement account now, so a merchant can try
sweeps in test mode without waiting a day. Live accounts always wait."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.responses import EnvelopeResponse, response_example
from core.api.schema_components import ApiTag
from core.exceptions import ApplicationError
from merchants.models import Mode
from merchants.scopes import Scope
from sweeps.api.examples import SETTINGS_EXAMPLE
from sweeps.api.serializers import SweepSettingsOutputSerializer
from sweeps.services import settlement_account_cooling_off_end

TEST_KEYS_ONLY_MESSAGE = "Test helpers work only with a test secret key"
ACTIVATED_MESSAGE = "Test settlement account in effect"


class TestSettlementAccountActivateApi(MerchantApi):
    """Test mode only: the pending test settlement account takes effect now."""

    openapi_tag = ApiTag.TEST_HELPERS
    required_scopes = {"POST": Scope.TEST_HELPERS_WRITE}
    error_statuses = (403,)

    @extend_schema(
        operation_id="test_helper_settlement_account_activate",
        summary="Test mode: end a test settlement account's cooling-off period now",
        description=(
            "Test mode only. The test settlement account waiting out its cooling-off period "
            "takes effect now (the one it replaces stops now), as it would when the period "
            "ends; audited. 400 when no test account is cooling off. A live key gets 403: a "
            "live account always waits SWEEP_ACCOUNT_COOLING_OFF_HOURS."
        ),
        request=None,
        examples=[
            response_example(
                "In effect",
                {**SETTINGS_EXAMPLE, "pending_account": None},
                ACTIVATED_MESSAGE,
            )
        ],
        responses=SweepSettingsOutputSerializer,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        if self.mode(request) != Mode.TEST:
            raise ApplicationError(TEST_KEYS_ONLY_MESSAGE, status=403)
        now = timezone.now()
        result = settlement_account_cooling_off_end(
            merchant=self.merchant(request), actor=self.actor(request), now=now
        )
        return EnvelopeResponse(
            SweepSettingsOutputSerializer(result, context={"now": now}).data,
            message=ACTIVATED_MESSAGE,
        )
