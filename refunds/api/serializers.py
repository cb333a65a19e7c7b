"""Input and output serializers for the refund routes."""

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
from core.api.list_filters import DateRangeParamsSerializer, status_param_field
from refunds.models import RefundStatus


class RefundCreateInputSerializer(StrictSerializer):
    transaction_reference = StrictCharField(
        max_length=40,
        trim_whitespace=False,
        help_text="The reference of the paid collection transaction to refund",
    )
    amount = AmountField(
        required=False,
        help_text="How much to refund (a partial refund); default: all that is left to refund",
    )
    reason = StrictCharField(
        required=False, allow_blank=True, allow_null=True, max_length=255, default=""
    )
    idempotency_key = StrictCharField(
        max_length=100,
        trim_whitespace=False,
        help_text="Unique per merchant and mode: the same key with the same parameters answers "
        "the first refund again (duplicate true); with other parameters, 409",
    )

    def validate_transaction_reference(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("This field may not be blank.")
        return value

    def validate_idempotency_key(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("This field may not be blank.")
        return value

    def validate_reason(self, value: str | None) -> str:
        return value or ""


class RefundListParamsSerializer(DateRangeParamsSerializer):
    """The refund list's filters (``page``/``limit`` come from ``PageParamsSerializer``), named as
    ``refunds.selectors.RefundListFilters`` names them."""

    status = status_param_field(RefundStatus)
    from_date = IsoDateTimeParamField(required=False, source="created_from")
    to_date = IsoDateTimeParamField(required=False, end_of_day=True, source="created_to")
    reference = serializers.CharField(required=False, max_length=100)


class RefundOutputSerializer(serializers.Serializer):
    """The Refund resource."""

    refund_id = serializers.CharField()
    transaction_reference = serializers.CharField(source="collection.reference")
    amount = MoneyField()
    fee_returned = MoneyField(
        help_text="The part of our collection fee given back with this refund (0.00 unless the "
        "service is configured to return fees)"
    )
    currency = serializers.CharField()
    status = serializers.ChoiceField(choices=RefundStatus.choices)
    reason = serializers.SerializerMethodField()
    deducted_from_settlement = MoneyField(
        help_text="Taken from what the next settlement pays you (the collection was not settled)"
    )
    debited_from_wallet = MoneyField(help_text="Taken from your wallet's available balance")
    failure_reason = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    processed_at = serializers.DateTimeField(allow_null=True)

    def get_reason(self, refund: Any) -> str | None:
        return refund.reason or None

    def get_failure_reason(self, refund: Any) -> str | None:
        return refund.failure_reason or None


class RefundCreateOutputSerializer(serializers.Serializer):
    refund = RefundOutputSerializer()
    duplicate = serializers.BooleanField()
