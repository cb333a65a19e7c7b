"""The test-mode settlement helper: ``POST /api/v1/test-helpers/settlements/run`` settles the
merchant's paid test collections now, as the beat would (test mode settles at once)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request

from core.api.fields import MoneyField
from core.api.responses import EnvelopeResponse, response_example
from merchants.api.test_helpers import TEST_KEYS_ONLY_MESSAGE, TestHelperApi
from merchants.models import Mode
from settlements.models import Settlement
from settlements.services import settlement_run

SETTLED_MESSAGE = "Settlement run completed"
NOTHING_DUE_MESSAGE = "Nothing to settle"


class TestHelperSettlementOutputSerializer(serializers.ModelSerializer):
    gross = MoneyField()
    fees = MoneyField()
    subaccount_shares = MoneyField()
    refunds_deducted = MoneyField()
    net = MoneyField()

    class Meta:
        model = Settlement
        fields = (
            "settlement_id",
            "transaction_count",
            "gross",
            "fees",
            "subaccount_shares",
            "refunds_deducted",
            "net",
        )


class TestHelperSettlementRunOutputSerializer(serializers.Serializer):
    settlements = TestHelperSettlementOutputSerializer(many=True)


_SETTLED_EXAMPLE = {
    "settlements": [
        {
            "settlement_id": "STL_7Q2M4K9D1X8B6N3V5C0Z",
            "transaction_count": 1,
            "gross": "7205.00",
            "fees": "205.00",
            "subaccount_shares": "700.00",
            "refunds_deducted": "0.00",
            "net": "6300.00",
        }
    ]
}

RUN_EXAMPLES = [
    response_example("Settled", _SETTLED_EXAMPLE, SETTLED_MESSAGE),
    response_example("Nothing due", {"settlements": []}, NOTHING_DUE_MESSAGE),
]


class TestSettlementRunApi(TestHelperApi):
    """Test mode only: settles the merchant's paid, unsettled test collections now."""

    error_statuses = (403,)
    live_key_status = 403
    live_key_message = TEST_KEYS_ONLY_MESSAGE

    @extend_schema(
        operation_id="test_helper_settlements_run",
        summary="Test mode: settle paid test collections now",
        description=(
            "Test mode only. Settles every paid, unsettled test collection of yours now, as the "
            "scheduled run would: one settlement credits its net (gross minus our fees, "
            "subaccount shares and refunds deducted) to the test wallet with one settlement "
            "ledger entry, records settlement.completed and pays each subaccount its share. "
            "The answer lists the settlements made (none when nothing was due). A live key "
            "gets 403."
        ),
        request=None,
        examples=RUN_EXAMPLES,
        responses=TestHelperSettlementRunOutputSerializer,
    )
    def post(self, request: Request) -> EnvelopeResponse:
        self.test_key_required(request)
        settlement = settlement_run(merchant_id=self.merchant(request).pk, mode=Mode.TEST)
        settlements = [settlement] if settlement is not None else []
        return EnvelopeResponse(
            TestHelperSettlementRunOutputSerializer({"settlements": settlements}).data,
            message=SETTLED_MESSAGE if settlements else NOTHING_DUE_MESSAGE,
        )
