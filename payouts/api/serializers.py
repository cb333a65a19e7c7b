"""Input and output serializers for the payout routes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.api.fields import (
    AmountField,
    IsoDateTimeParamField,
    MoneyField,
    StrictCharField,
    StrictSerializer,
)
from core.money import CURRENCY_NGN
from payouts.models import PayoutStatus

STATUS_CHOICES_TEXT = ", ".join(PayoutStatus.values)
BENEFICIARY_ACCOUNT_FIELDS = ("account_number", "bank_code", "bank_id")


class StrictPositiveIntegerField(serializers.IntegerField):
    """A JSON integer ≥ 1: strings, booleans and floats are refused."""

    default_error_messages = {"invalid": "must be a positive integer"}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("error_messages", {"min_value": "must be a positive integer"})
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


# --- Quote -----------------------------------------------------------------------------------


class PayoutQuoteInputSerializer(StrictSerializer):
    amount = AmountField()
    currency = StrictCharField(
        required=False, default=CURRENCY_NGN, allow_blank=True, trim_whitespace=False
    )


class PayoutQuoteOutputSerializer(serializers.Serializer):
    amount = MoneyField()
    fee_amount = MoneyField()
    total_debit_amount = MoneyField()
    currency = serializers.CharField()


# --- Create ----------------------------------------------------------------------------------


class PayoutCreateInputSerializer(StrictSerializer):
    """The beneficiary is account_number + bank_code (+ bank_id) or, as an extension,
    beneficiary_id (a saved beneficiary): one form, never both."""

    account_number = StrictCharField(
        trim_whitespace=False, required=False, help_text="required unless beneficiary_id is sent"
    )
    bank_code = StrictCharField(
        trim_whitespace=False,
        allow_blank=True,
        required=False,
        help_text="required unless beneficiary_id is sent",
    )
    bank_id = StrictPositiveIntegerField(required=False)
    beneficiary_id = StrictPositiveIntegerField(
        required=False,
        help_text="Extension: a saved beneficiary's id, in place of account_number, bank_code "
        "and bank_id",
    )
    amount = AmountField()
    currency = StrictCharField(
        required=False, default=CURRENCY_NGN, trim_whitespace=False, allow_blank=True
    )
    narration = StrictCharField(
        required=False, allow_null=True, allow_blank=True, max_length=255, default=None
    )
    idempotency_key = StrictCharField(max_length=175, trim_whitespace=False)

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            if "beneficiary_id" in data:
                sent = [name for name in BENEFICIARY_ACCOUNT_FIELDS if name in data]
                if sent:
                    raise serializers.ValidationError(
                        {"beneficiary_id": [f"must not be sent with {', '.join(sent)}"]}
                    )
            else:
                self.fields["account_number"].required = True
                self.fields["bank_code"].required = True
        return super().to_internal_value(data)

    def validate_account_number(self, value: str) -> str:
        if not (len(value) == 10 and value.isascii() and value.isdigit()):
            raise serializers.ValidationError("must be exactly 10 digits")
        return value

    def validate_idempotency_key(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("This field may not be blank.")
        return value


# --- List ------------------------------------------------------------------------------------


class PayoutListParamsSerializer(serializers.Serializer):
    """The payout list's filters (``page``/``limit`` come from ``PageParamsSerializer``)."""

    currency = serializers.CharField(required=False, default=CURRENCY_NGN)
    status = serializers.ChoiceField(
        choices=PayoutStatus.choices,
        required=False,
        error_messages={"invalid_choice": f"must be one of {STATUS_CHOICES_TEXT}"},
    )
    from_date = IsoDateTimeParamField(required=False)
    to_date = IsoDateTimeParamField(required=False, end_of_day=True)
    reference = serializers.CharField(required=False, max_length=200)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("from_date"), attrs.get("to_date")
        if start is not None and end is not None and end < start:
            raise serializers.ValidationError({"to_date": "must not be earlier than from_date"})
        return attrs


# --- Output ----------------------------------------------------------------------------------


class BeneficiaryOutputSerializer(serializers.Serializer):
    account_number = serializers.CharField()
    account_name = serializers.CharField()
    bank_code = serializers.CharField()
    bank_name = serializers.CharField()


class PayoutOutputSerializer(serializers.Serializer):
    """The Payout resource."""

    id = serializers.IntegerField()
    internal_reference = serializers.CharField()
    beneficiary = BeneficiaryOutputSerializer(source="*")
    currency = serializers.CharField()
    amount = MoneyField()
    fee_amount = MoneyField()
    total_debit_amount = MoneyField()
    status = serializers.ChoiceField(choices=PayoutStatus.choices)
    narration = serializers.CharField(allow_null=True)
    error_message = serializers.CharField(allow_null=True)
    nip_session_id = serializers.SerializerMethodField(
        help_text="Extension: the interbank (NIP) session id of a completed transfer, when the "
        "provider reports one; null until then. The beneficiary's bank can trace the credit by it."
    )
    returned_at = serializers.DateTimeField(
        allow_null=True,
        help_text="Extension: when the beneficiary's bank sent a successful payout back (the "
        "status stays successful; the principal is back in the available balance); null "
        "otherwise.",
    )
    return_reason = serializers.SerializerMethodField(
        help_text="Extension: why it was returned, as the provider says; null if not returned."
    )
    created_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField()

    def get_return_reason(self, payout: Any) -> str | None:
        return payout.return_reason or None

    def get_nip_session_id(self, payout: Any) -> str | None:
        return payout.nip_session_id or None


class PayoutCreateOutputSerializer(serializers.Serializer):
    payout = PayoutOutputSerializer()
    duplicate = serializers.BooleanField()


# --- Test helper: a return after success -----------------------------------------------------


class TestPayoutReturnInputSerializer(StrictSerializer):
    reason = StrictCharField(required=False, allow_blank=True, max_length=255, default="")
