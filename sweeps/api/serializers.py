"""Input and output serializers of the sweep routes."""

from __future__ import annotations

import re
from datetime import datetime, time
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import AmountField, MoneyField, StrictCharField, StrictSerializer
from payouts.api.serializers import PayoutOutputSerializer
from sweeps.models import SettlementAccount, SweepScheduleKind, SweepTrigger, Weekday

_CLOCK_RE = re.compile(r"(?:[01][0-9]|2[0-3]):[0-5][0-9]", re.ASCII)


@extend_schema_field({"type": "string", "pattern": r"^([01][0-9]|2[0-3]):[0-5][0-9]$"})
class ClockTimeField(serializers.Field):
    """A clock time written ``HH:MM`` (24 h, ASCII digits), Africa/Lagos."""

    default_error_messages = {"invalid": "must be HH:MM (24-hour clock, Africa/Lagos)"}

    def to_internal_value(self, data: Any) -> time:
        if not isinstance(data, str) or _CLOCK_RE.fullmatch(data) is None:
            self.fail("invalid")
        return time(int(data[:2]), int(data[3:]))

    def to_representation(self, value: time) -> str:
        return f"{value:%H:%M}"


class SettlementAccountInputSerializer(StrictSerializer):
    bank_code = StrictCharField(trim_whitespace=False, help_text="from the bank list")
    account_number = StrictCharField(trim_whitespace=False, help_text="10 digits (NUBAN)")

    def validate_account_number(self, value: str) -> str:
        if not (len(value) == 10 and value.isascii() and value.isdigit()):
            raise serializers.ValidationError("must be exactly 10 digits")
        return value


class SweepSettingsInputSerializer(StrictSerializer):
    schedule = serializers.ChoiceField(
        choices=SweepScheduleKind.choices,
        error_messages={"invalid_choice": "must be one of daily, weekly, manual"},
        help_text="daily at time, weekly on weekday at time, or manual (only when asked)",
    )
    time = ClockTimeField(
        required=False,
        allow_null=True,
        help_text="HH:MM, Africa/Lagos; required for daily and weekly, not sent for manual",
    )
    weekday = serializers.ChoiceField(
        choices=Weekday.choices,
        required=False,
        allow_null=True,
        error_messages={
            "invalid_choice": "must be one of monday, tuesday, wednesday, thursday, friday, "
            "saturday, sunday"
        },
        help_text="required for weekly, not sent otherwise",
    )
    amount_to_keep = AmountField(
        allow_zero=True, help_text="left in the wallet by every sweep; 0 sweeps everything"
    )
    settlement_account = SettlementAccountInputSerializer(
        required=False,
        help_text="required until an account is set; a new account takes effect after the "
        "cooling-off period (24 h by default)",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs.setdefault("time", None)
        attrs.setdefault("weekday", None)
        return attrs


class SettlementAccountOutputSerializer(serializers.Serializer):
    bank_code = serializers.CharField(source="bank.bank_code")
    bank_name = serializers.CharField(source="bank.name")
    account_number = serializers.CharField()
    account_name = serializers.CharField(help_text="as resolved by name enquiry")
    effective_at = serializers.DateTimeField(help_text="when sweeps start paying into it")
    status = serializers.SerializerMethodField(
        help_text="active: sweeps pay into it; pending: in its cooling-off period"
    )

    @extend_schema_field({"type": "string", "enum": ["active", "pending"]})
    def get_status(self, account: SettlementAccount) -> str:
        now: datetime = self.context["now"]
        return "active" if account.effective_at <= now else "pending"


class SweepSettingsOutputSerializer(serializers.Serializer):
    schedule = serializers.ChoiceField(
        choices=SweepScheduleKind.choices, source="schedule.schedule"
    )
    time = ClockTimeField(source="schedule.time", allow_null=True)
    weekday = serializers.ChoiceField(
        choices=Weekday.choices, source="schedule.weekday", allow_null=True
    )
    amount_to_keep = MoneyField(source="schedule.amount_to_keep")
    settlement_account = serializers.SerializerMethodField(
        help_text="the account in effect, else the pending one (status pending); null if none"
    )
    pending_account = serializers.SerializerMethodField(
        help_text="a new account in its cooling-off period while another is in effect, else null"
    )
    next_sweep_at = serializers.DateTimeField(
        allow_null=True,
        help_text="when the beat next sweeps (if there is something above amount_to_keep); "
        "null for a manual schedule",
    )

    @extend_schema_field(SettlementAccountOutputSerializer(allow_null=True))
    def get_settlement_account(self, settings: Any) -> dict[str, Any] | None:
        account = settings.account or settings.pending_account
        return self._account(account)

    @extend_schema_field(SettlementAccountOutputSerializer(allow_null=True))
    def get_pending_account(self, settings: Any) -> dict[str, Any] | None:
        return self._account(settings.pending_account if settings.account else None)

    def _account(self, account: SettlementAccount | None) -> dict[str, Any] | None:
        if account is None:
            return None
        return dict(SettlementAccountOutputSerializer(account, context=self.context).data)


class SweepOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    sweep_date = serializers.DateField(help_text="the Africa/Lagos day it counts for")
    trigger = serializers.ChoiceField(choices=SweepTrigger.choices)
    amount = MoneyField(help_text="the payout's amount; its fee comes on top")
    amount_to_keep = MoneyField(help_text="what the sweep left in the wallet")
    payout = PayoutOutputSerializer()
    created_at = serializers.DateTimeField()


class SweepRunOutputSerializer(serializers.Serializer):
    sweep = SweepOutputSerializer()
    duplicate = serializers.BooleanField(
        help_text="true: today's sweep was made before; nothing new was paid"
    )
