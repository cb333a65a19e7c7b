"""Sweep routes (extensions): the wallet's sweep settings (schedule, amount kept, settlement
account) and "sweep now". Views parse input, call one service or selector, serialize output."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.responses import EnvelopeResponse, request_example, response_example
from core.api.schema_components import ApiTag
from merchants.scopes import Scope
from sweeps.api.examples import (
    SETTINGS_EXAMPLE,
    SETTINGS_RETRIEVED,
    SETTINGS_UPDATED,
    SWEEP_CREATED,
    SWEEP_DUPLICATE,
    SWEEP_EXAMPLE,
)
from sweeps.api.serializers import (
    SweepRunOutputSerializer,
    SweepSettingsInputSerializer,
    SweepSettingsOutputSerializer,
)
from sweeps.selectors import sweep_settings_get
from sweeps.services import sweep_run_now, sweep_settings_set


class SweepSettingsApi(MerchantApi):
    """The sweep settings of the key's wallet: schedule, amount kept, settlement account."""

    openapi_tag = ApiTag.WALLET
    required_scopes = {"GET": Scope.READ, "PUT": Scope.SWEEPS_WRITE}
    error_statuses = (404, 503)

    @property
    def throttle_scope(self) -> str | None:
        """Setting an account costs a name enquiry, so a PUT counts against that limit."""
        return "name_enquiry" if self.request.method == "PUT" else None

    @extend_schema(
        operation_id="merchant_wallet_sweep_retrieve",
        summary="Retrieve the sweep settings",
        description=(
            "The wallet's sweep schedule (daily at a Lagos time, weekly on a weekday at a "
            "Lagos time, or manual), the amount every sweep leaves in the wallet, the "
            "settlement account sweeps pay into (status active, or pending during its "
            "cooling-off period), a new account still in its cooling-off period, and when the "
            "next sweep is due. 404 until the settings are first set."
        ),
        responses=SweepSettingsOutputSerializer,
        examples=[response_example("Daily at 17:00", SETTINGS_EXAMPLE, SETTINGS_RETRIEVED)],
    )
    def get(self, request: Request) -> EnvelopeResponse:
        now = timezone.now()
        merchant, mode = self.merchant(request), self.mode(request)
        wallet = self.wallet(request)
        result = sweep_settings_get(
            wallet_id=wallet.pk if wallet is not None else 0,
            merchant_id=merchant.pk,
            mode=mode,
            now=now,
        )
        return EnvelopeResponse(
            SweepSettingsOutputSerializer(result, context={"now": now}).data,
            message=SETTINGS_RETRIEVED,
        )

    @extend_schema(
        operation_id="merchant_wallet_sweep_update",
        summary="Set the sweep settings",
        description=(
            "Sets the schedule, the amount to keep and, when sent, the settlement account "
            "(required until one is set). The account's name is resolved by name enquiry, "
            "with the payout create's errors. A new account takes effect only after a "
            "cooling-off period (24 h by default; the first account too) and is announced at "
            "once by a settlement_account.changed event; until then sweeps keep paying the "
            "account in effect. Sending the account in effect again cancels a pending one at "
            "once. Each sweep is an ordinary payout (idempotency key sweep-<wallet id>-<Lagos "
            "day>) of everything above amount_to_keep after its fee, at most one per Lagos "
            "day. A bad value answers 400 naming its field and changes nothing."
        ),
        request=SweepSettingsInputSerializer,
        responses=SweepSettingsOutputSerializer,
        examples=[
            request_example(
                "Daily at 17:00 keeping NGN 50,000",
                {
                    "schedule": "daily",
                    "time": "17:00",
                    "amount_to_keep": "50000.00",
                    "settlement_account": {"bank_code": "044", "account_number": "0987654321"},
                },
            ),
            request_example(
                "Weekly on Friday, account unchanged",
                {
                    "schedule": "weekly",
                    "time": "09:30",
                    "weekday": "friday",
                    "amount_to_keep": "0",
                },
            ),
            response_example("New account pending", SETTINGS_EXAMPLE, SETTINGS_UPDATED),
        ],
    )
    def put(self, request: Request) -> EnvelopeResponse:
        serializer = SweepSettingsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        account = data.pop("settlement_account", None) or {}
        now = timezone.now()
        result = sweep_settings_set(
            merchant=self.merchant(request),
            mode=self.mode(request),
            bank_code=account.get("bank_code"),
            account_number=account.get("account_number"),
            actor=self.actor(request),
            now=now,
            **data,
        )
        return EnvelopeResponse(
            SweepSettingsOutputSerializer(result, context={"now": now}).data,
            message=SETTINGS_UPDATED,
        )


class SweepRunApi(MerchantApi):
    """Sweep now: today's sweep of the key's wallet, whatever its schedule."""

    openapi_tag = ApiTag.WALLET
    required_scopes = {"POST": Scope.SWEEPS_WRITE}
    error_statuses = (404, 503)

    @extend_schema(
        operation_id="merchant_wallet_sweep_run",
        summary="Sweep now",
        description=(
            "Makes today's sweep at once, whatever the schedule: an ordinary payout of "
            "everything above amount_to_keep, after its fee, to the settlement account in "
            "effect (202). There is at most one sweep per wallet per Africa/Lagos day, "
            "scheduled or not: when today's was made already this answers it (200, "
            "duplicate true) and pays nothing more. 400 when nothing is above the amount kept "
            "plus the fee, when no account is in effect yet, or with the payout create's "
            "errors; 404 before the sweep settings are set."
        ),
        request=None,
        responses={
            202: OpenApiResponse(SweepRunOutputSerializer, description="the sweep was made"),
            200: OpenApiResponse(
                SweepRunOutputSerializer, description="today's sweep, made before"
            ),
        },
        examples=[
            response_example(
                "Swept", {"sweep": SWEEP_EXAMPLE, "duplicate": False}, SWEEP_CREATED, 202
            ),
            response_example(
                "Already swept today",
                {"sweep": SWEEP_EXAMPLE, "duplicate": True},
                SWEEP_DUPLICATE,
            ),
        ],
    )
    def post(self, request: Request) -> EnvelopeResponse:
        made = sweep_run_now(merchant=self.merchant(request), mode=self.mode(request))
        return EnvelopeResponse(
            SweepRunOutputSerializer({"sweep": made.sweep, "duplicate": made.duplicate}).data,
            message=SWEEP_DUPLICATE if made.duplicate else SWEEP_CREATED,
            status=200 if made.duplicate else 202,
        )
