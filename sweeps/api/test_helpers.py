"""The test-mode sweep helper: ``POST /api/v1/test-helpers/sweep/settlement-account/activate``
ends the cooling-off period of the pending test settlement account now, so a merchant can try
sweeps in test mode without waiting a day. Live accounts always wait."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from core.api.responses import EnvelopeResponse, response_example
from merchants.api.test_helpers import TEST_KEYS_ONLY_MESSAGE, TestHelperApi
from sweeps.api.examples import SETTINGS_EXAMPLE
from sweeps.api.serializers import SweepSettingsOutputSerializer
from sweeps.services import settlement_account_cooling_off_end

ACTIVATED_MESSAGE = "Test settlement account in effect"


class TestSettlementAccountActivateApi(TestHelperApi):
    """Test mode only: the pending test settlement account takes effect now."""

    error_statuses = (403,)
    live_key_status = 403
    live_key_message = TEST_KEYS_ONLY_MESSAGE

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
        self.test_key_required(request)
        now = timezone.now()
        result = settlement_account_cooling_off_end(
            merchant=self.merchant(request), actor=self.actor(request), now=now
        )
        return EnvelopeResponse(
            SweepSettingsOutputSerializer(result, context={"now": now}).data,
            message=ACTIVATED_MESSAGE,
        )
