"""The test-mode payout provider switch: ``POST /api/v1/test-helpers/payout-providers/{name}``
switches a sandbox provider ``down``, ``slow`` or back ``up`` for the key's merchant only, so a
merchant can watch its payouts fail over to the other sandbox provider."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request

from core.api.fields import StrictSerializer
from core.api.responses import EnvelopeResponse, request_example, response_example
from merchants.api.test_helpers import TestHelperApi
from payouts.models import SandboxSwitchState
from payouts.services.sandbox_switch import sandbox_provider_switch_set, sandbox_provider_switches

SWITCHED_MESSAGE = "Sandbox payout provider switched"


class SandboxProviderSwitchInputSerializer(StrictSerializer):
    state = serializers.ChoiceField(
        choices=SandboxSwitchState.choices,
        error_messages={"invalid_choice": "must be one of up, down, slow"},
        help_text="down: every send is refused before it connects (not sent: the payout goes to "
        "the other sandbox provider); slow: every answer comes a few seconds late; up: normal",
    )


class SandboxProviderSwitchOutputSerializer(serializers.Serializer):
    provider = serializers.CharField()
    state = serializers.ChoiceField(choices=SandboxSwitchState.choices)
    providers = serializers.DictField(
        child=serializers.CharField(), help_text="every sandbox provider's state for this merchant"
    )


SWITCH_EXAMPLES = [
    request_example("Switch sandbox down", {"state": "down"}),
    response_example(
        "Switched",
        {
            "provider": "sandbox",
            "state": "down",
            "providers": {"sandbox": "down", "sandbox-b": "up"},
        },
        message=SWITCHED_MESSAGE,
    ),
]


class TestPayoutProviderSwitchApi(TestHelperApi):
    """Test mode only: one sandbox payout provider's state for the key's merchant. A live key
    gets 404: the route does not exist in live mode."""

    error_statuses = (404,)

    @extend_schema(
        operation_id="test_helper_payout_provider_switch",
        summary="Test mode: switch a sandbox payout provider down, slow or up",
        description=(
            "Test mode only, for the key's merchant only (no other merchant sees it). "
            "name is sandbox or sandbox-b. down: every send to it is refused before it "
            "connects, so the payout's attempt is not_sent and the payout goes to the other "
            "sandbox provider (GET the payout: attempts lists both); slow: it answers a few "
            "seconds late; up: normal again. An unknown name, or a live key, is a 404."
        ),
        request=SandboxProviderSwitchInputSerializer,
        responses=SandboxProviderSwitchOutputSerializer,
        examples=SWITCH_EXAMPLES,
    )
    def post(self, request: Request, provider_name: str) -> EnvelopeResponse:
        self.test_key_required(request)
        serializer = SandboxProviderSwitchInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        merchant = self.merchant(request)
        switch = sandbox_provider_switch_set(
            merchant=merchant,
            provider_name=provider_name,
            state=serializer.validated_data["state"],
        )
        data = {
            "provider": switch.provider_name,
            "state": switch.state,
            "providers": sandbox_provider_switches(merchant=merchant),
        }
        return EnvelopeResponse(
            SandboxProviderSwitchOutputSerializer(data).data, message=SWITCHED_MESSAGE
        )
