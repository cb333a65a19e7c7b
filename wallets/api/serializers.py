"""Input and output serializers for the wallet routes."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import AmountField, MoneyField, StrictCharField, StrictSerializer
from core.money import CURRENCY_NGN

# --- Inputs ------------------------------------------------------------------------------------


class NameEnquiryInputSerializer(StrictSerializer):
    account_number = StrictCharField(allow_blank=True, trim_whitespace=False)
    bank_code = StrictCharField(allow_blank=True, trim_whitespace=False)


class TestWalletFundInputSerializer(StrictSerializer):
    amount = AmountField()
    reference = StrictCharField(required=False, max_length=100)


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


# --- Outputs -----------------------------------------------------------------------------------


class StaticAccountOutputSerializer(serializers.Serializer):
    account_number = serializers.CharField(source="static_account_number")
    bank_name = serializers.CharField(source="static_bank_name")
    account_name = serializers.CharField(source="static_account_name")


class WalletOutputSerializer(serializers.Serializer):
    currency = serializers.CharField()
    status = serializers.CharField()
    available_balance = MoneyField()
    reserved_balance = MoneyField()
    static_account = StaticAccountOutputSerializer(source="*")


class LedgerEntryOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    entry_type = serializers.CharField()
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
