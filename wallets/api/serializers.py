"""Input and output serializers for the wallet routes."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import AmountField, MoneyField, StrictCharField, StrictSerializer
from core.money import CURRENCY_NGN
from wallets.models import LedgerEntryType, WalletStatus

_ISO_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)

# --- Inputs ------------------------------------------------------------------------------------


class NameEnquiryInputSerializer(StrictSerializer):
    account_number = StrictCharField(allow_blank=True, trim_whitespace=False)
    bank_code = StrictCharField(allow_blank=True, trim_whitespace=False)


class TestWalletFundInputSerializer(StrictSerializer):
    amount = AmountField()
    reference = StrictCharField(required=False, max_length=100)


class WalletAlertsInputSerializer(StrictSerializer):
    low_balance_threshold = AmountField(
        allow_null=True,
        help_text=(
            "wallet.balance_low is sent when the available balance drops below this amount; "
            "greater than zero; null turns the alert off"
        ),
    )


class FundingNotificationInputSerializer(serializers.Serializer):
    """An inbound-transfer notification from the collection provider. Extra fields are kept in
    the stored raw payload and otherwise ignored."""

    reference = StrictCharField(max_length=100, help_text="provider transaction reference")
    account_number = StrictCharField(
        min_length=10, max_length=10, help_text="receiving static account number"
    )
    amount = AmountField()
    currency = StrictCharField(required=False, default=CURRENCY_NGN)
    sender_account_name = StrictCharField(required=False, default="", allow_blank=True)
    sender_account_number = StrictCharField(required=False, default="", allow_blank=True)
    sender_bank_name = StrictCharField(required=False, default="", allow_blank=True)
    narration = StrictCharField(required=False, default="", allow_blank=True)

    def validate_account_number(self, value: str) -> str:
        if not (value.isascii() and value.isdigit()):
            raise serializers.ValidationError("must contain only digits")
        return value


@extend_schema_field({"type": "string", "format": "date"})
class IsoDateParamField(serializers.Field):
    """A calendar date query parameter written ``YYYY-MM-DD`` (ASCII digits), nothing else."""

    default_error_messages = {"invalid": "must be a date written YYYY-MM-DD"}

    def to_internal_value(self, data: Any) -> date:
        if not isinstance(data, str) or _ISO_DATE_RE.fullmatch(data) is None:
            self.fail("invalid")
        try:
            return date.fromisoformat(data)
        except ValueError:
            self.fail("invalid")
            raise  # unreachable: fail() raises

    def to_representation(self, value: date) -> str:
        return value.isoformat()


STATEMENT_FORMATS = ("json", "csv")


class WalletStatementParamsSerializer(serializers.Serializer):
    """The statement's Lagos days; other query parameters are ignored."""

    from_date = IsoDateParamField(help_text="first Lagos day, YYYY-MM-DD")
    to_date = IsoDateParamField(
        required=False, help_text="last Lagos day, YYYY-MM-DD (default from_date)"
    )
    format = serializers.ChoiceField(
        choices=STATEMENT_FORMATS,
        required=False,
        help_text="csv for a CSV attachment (as with Accept: text/csv); default json",
        error_messages={"invalid_choice": "must be one of json, csv"},
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs.setdefault("to_date", attrs["from_date"])
        return attrs


class WalletStatementCsvParamsSerializer(WalletStatementParamsSerializer):
    """The CSV statement route's days: always CSV, so no ``format``."""

    format = None  # type: ignore[assignment]  # DRF removes a field set to None


# --- Outputs -----------------------------------------------------------------------------------


class StaticAccountOutputSerializer(serializers.Serializer):
    account_number = serializers.CharField(source="static_account_number")
    bank_name = serializers.CharField(source="static_bank_name")
    account_name = serializers.CharField(source="static_account_name")


class WalletOutputSerializer(serializers.Serializer):
    currency = serializers.CharField()
    status = serializers.ChoiceField(choices=WalletStatus.choices)
    available_balance = MoneyField()
    reserved_balance = MoneyField()
    static_account = StaticAccountOutputSerializer(source="*")


class WalletAlertsOutputSerializer(serializers.Serializer):
    low_balance_threshold = MoneyField(allow_null=True, help_text="null: no alert")
    low_balance_alerted = serializers.BooleanField(
        help_text="an alert was sent and the available balance has not been back at or above "
        "the threshold since (the next alert waits for that)"
    )
    available_balance = MoneyField()


class LedgerEntryOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    entry_type = serializers.ChoiceField(choices=LedgerEntryType.choices)
    amount = MoneyField()
    fee_amount = MoneyField()
    available_delta = MoneyField()
    reserved_delta = MoneyField()
    available_balance_after = MoneyField()
    reserved_balance_after = MoneyField()
    reference = serializers.CharField()
    payout_id = serializers.IntegerField(allow_null=True)
    description = serializers.CharField()
    created_at = serializers.DateTimeField()


class BankOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    bank_code = serializers.CharField()
    institution_code = serializers.CharField()


class NameEnquiryOutputSerializer(serializers.Serializer):
    account_name = serializers.CharField()
    account_number = serializers.CharField()
    bank_code = serializers.CharField()
    reference = serializers.CharField()


class FundingOutputSerializer(serializers.Serializer):
    reference = serializers.CharField(source="funding_transfer.provider_reference")
    amount = MoneyField(source="funding_transfer.amount")
    currency = serializers.CharField(source="funding_transfer.currency")
    duplicate = serializers.BooleanField()
    account_number = serializers.CharField(source="funding_transfer.receiving_account_number")
    credited_at = serializers.DateTimeField(source="funding_transfer.created_at")


class TestWalletFundOutputSerializer(FundingOutputSerializer):
    available_balance = MoneyField(source="wallet.available_balance")
    reserved_balance = MoneyField(source="wallet.reserved_balance")


class StatementBalancesOutputSerializer(serializers.Serializer):
    available = MoneyField()
    reserved = MoneyField()
    total = MoneyField(help_text="available + reserved")


class StatementMovementOutputSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    amount = MoneyField()


class StatementCaptureOutputSerializer(StatementMovementOutputSerializer):
    amount = MoneyField(help_text="principal paid out")
    fee_amount = MoneyField(help_text="fees captured with it")


class StatementReturnOutputSerializer(StatementMovementOutputSerializer):
    amount = MoneyField(help_text="principal returned")
    fee_amount = MoneyField(help_text="fees refunded with it (zero unless fees are refunded)")


class StatementMovementsOutputSerializer(serializers.Serializer):
    fundings = StatementMovementOutputSerializer(help_text="inbound transfers credited")
    payouts_reserved = StatementMovementOutputSerializer(
        help_text="payout total debits moved from available to reserved"
    )
    payouts_captured = StatementCaptureOutputSerializer(
        help_text="successful payouts taken from reserved: principal and fees"
    )
    releases = StatementMovementOutputSerializer(
        help_text="failed payouts' total debits returned from reserved to available"
    )
    returns = StatementReturnOutputSerializer(
        help_text="paid payouts returned by the beneficiary's bank to available"
    )
    settlements = StatementMovementOutputSerializer(
        help_text="settlements of paid collections credited to available (their nets)"
    )
    refunds = StatementMovementOutputSerializer(
        help_text="refunds to customers debited from available (the part of each refund the "
        "next settlement could not cover)"
    )
    refund_reversals = StatementMovementOutputSerializer(
        help_text="failed refunds' wallet parts credited back to available"
    )
    subaccount_shares = StatementMovementOutputSerializer(
        help_text="the platform's wallet only: subaccount shares credited to available before "
        "their payouts; zero on a merchant's wallet"
    )


class WalletStatementDayOutputSerializer(serializers.Serializer):
    date = serializers.DateField(help_text="a Lagos day")
    opening = StatementBalancesOutputSerializer()
    closing = StatementBalancesOutputSerializer()
    totals = StatementMovementsOutputSerializer()


class WalletStatementOutputSerializer(serializers.Serializer):
    """Balances and movements per Lagos day; each day's closing is the next day's opening."""

    wallet_id = serializers.IntegerField()
    mode = serializers.CharField()
    currency = serializers.CharField()
    timezone = serializers.CharField(source="timezone_name", help_text="e.g. Africa/Lagos")
    utc_offset = serializers.CharField(help_text="e.g. +01:00")
    from_date = serializers.DateField(source="first_day")
    to_date = serializers.DateField(source="last_day")
    opening = StatementBalancesOutputSerializer()
    closing = StatementBalancesOutputSerializer()
    totals = StatementMovementsOutputSerializer()
    days = WalletStatementDayOutputSerializer(many=True)
