"""Input and output serializers for the beneficiary routes."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import StrictCharField, StrictSerializer

NICKNAME_MAX_LENGTH = 100


class BeneficiaryCreateInputSerializer(StrictSerializer):
    """Like the name enquiry's body, plus an optional nickname; the account number's format is
    checked by the service with the name enquiry's own messages."""

    account_number = StrictCharField(allow_blank=True, trim_whitespace=False, help_text="10 digits")
    bank_code = StrictCharField(
        allow_blank=True, trim_whitespace=False, help_text="a bank_code from the bank list"
    )
    nickname = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=NICKNAME_MAX_LENGTH,
        default=None,
        help_text=f"optional label, at most {NICKNAME_MAX_LENGTH} characters",
    )


class BeneficiaryListParamsSerializer(serializers.Serializer):
    """The list's filter (``page``/``limit`` come from ``PageParamsSerializer``)."""

    account_number = serializers.CharField(
        required=False, help_text="only beneficiaries with this account number (10 digits)"
    )

    def validate_account_number(self, value: str) -> str:
        if not (len(value) == 10 and value.isascii() and value.isdigit()):
            raise serializers.ValidationError("must be exactly 10 digits")
        return value


class SavedBeneficiaryOutputSerializer(serializers.Serializer):
    """The Beneficiary resource (an extension beside the resources of docs/spec.md)."""

    id = serializers.IntegerField()
    account_number = serializers.CharField()
    account_name = serializers.CharField(help_text="as resolved by name enquiry when saved")
    bank_code = serializers.CharField()
    bank_name = serializers.CharField()
    nickname = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_nickname(self, beneficiary: Any) -> str | None:
        return beneficiary.nickname or None
