"""Input and output shapes of the collection routes (initialize, status check, search and the
test-mode completion helper)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from collections_app.models import Channel, CollectionTransaction, PaymentStatus, PaymentType
from collections_app.services import CONFIRMATION_OUTCOMES, CustomerInfo, SubaccountAmount
from core.api.fields import (
    AmountField,
    MoneyField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
)
from core.money import MAX_AMOUNT
from payment_items.api.serializers import PaymentItemDetailOutputSerializer

MAX_PAYMENT_ITEM_ID_DIGITS = 18
_REFERENCE_RE = re.compile(r"[\x21-\x7e]+", re.ASCII)
_PHONE_RE = re.compile(r"\+?[0-9]{7,15}", re.ASCII)
_ID_RE = re.compile(r"[1-9][0-9]{0,17}", re.ASCII)


class StrictObjectSerializer(StrictSerializer):
    """A nested object: must be a JSON object and accepts only its own fields."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["must be a JSON object"]})
        return super().to_internal_value(data)


class StrictEmailField(serializers.EmailField):
    default_error_messages = {"invalid": "must be a valid email address"}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


@extend_schema_field({"type": "string", "pattern": r"^[1-9][0-9]{0,17}$"})
class PaymentItemIdField(serializers.Field):
    """A positive id as a numeric string (``"12"``); a JSON integer is accepted too."""

    default_error_messages = {"invalid": 'must be a numeric string such as "12"'}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool):
            self.fail("invalid")
        if isinstance(data, int):
            if data <= 0 or len(str(data)) > MAX_PAYMENT_ITEM_ID_DIGITS:
                self.fail("invalid")
            return data
        if not isinstance(data, str) or _ID_RE.fullmatch(data) is None:
            self.fail("invalid")
        return int(data)

    def to_representation(self, value: int) -> str:
        return str(value)


@extend_schema_field(OpenApiTypes.NUMBER)
class NumberField(serializers.Field):
    """A decimal amount as a JSON number: ``1500`` or ``1050.5``."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Decimal) -> int | float:
        if value == value.to_integral_value():
            return int(value)
        return float(value)


# --- initialize --------------------------------------------------------------------------------


class CustomerInfoInputSerializer(StrictObjectSerializer):
    email = StrictEmailField(max_length=254)
    phone_number = StrictCharField(max_length=20)
    first_name = StrictCharField(max_length=100)
    last_name = StrictCharField(max_length=100)

    def validate_phone_number(self, value: str) -> str:
        if _PHONE_RE.fullmatch(value) is None:
            raise serializers.ValidationError("must be 7 to 15 digits, optionally starting with +")
        return value


class SubaccountInputSerializer(StrictObjectSerializer):
    account_code = StrictCharField(max_length=30)
    amount = StrictIntegerField(min_value=1, max_value=int(MAX_AMOUNT))


class TransactionInitializeInputSerializer(StrictSerializer):
    callback_url = StrictCharField(max_length=2000)
    payment_item_id = PaymentItemIdField()
    transaction_reference = StrictCharField(max_length=100)
    channel = serializers.ChoiceField(
        choices=Channel.choices,
        error_messages={"invalid_choice": "must be one of bank, card, bank-transfer"},
    )
    amount = AmountField()
    customer_info = CustomerInfoInputSerializer()
    subaccounts = SubaccountInputSerializer(  # type: ignore[call-arg]  # many=True passes max_length to the ListSerializer; the stubs miss it
        many=True,
        required=False,
        allow_empty=False,
        max_length=50,
    )

    def validate_transaction_reference(self, value: str) -> str:
        if _REFERENCE_RE.fullmatch(value) is None:
            raise serializers.ValidationError(
                "must contain only visible ASCII characters, without spaces"
            )
        return value

    def service_arguments(self) -> dict[str, Any]:
        data = self.validated_data
        subaccounts = data.get("subaccounts")
        return {
            "payment_item_id": data["payment_item_id"],
            "transaction_reference": data["transaction_reference"],
            "channel": data["channel"],
            "amount": data["amount"],
            "callback_url": data["callback_url"],
            "customer_info": CustomerInfo(**data["customer_info"]),
            "subaccounts": (
                None
                if subaccounts is None
                else [SubaccountAmount(**entry) for entry in subaccounts]
            ),
        }


class PaymentInstructionsSerializer(serializers.Serializer):
    account_number = serializers.CharField(source="virtual_account_number")
    bank_name = serializers.CharField(source="virtual_bank_name")
    account_name = serializers.CharField(source="virtual_account_name")
    amount = MoneyField(source="amount_to_be_paid")


def _payment_status_field() -> serializers.ChoiceField:
    """``payment_status`` as answered: one of the ``PaymentStatus`` values (``paid``, never
    ``successful``)."""
    return serializers.ChoiceField(
        choices=PaymentStatus.choices,
        help_text="pending until the customer pays; then paid, failed, cancelled or expired",
    )


class TransactionInitializeOutputSerializer(serializers.Serializer):
    """The seven fields of every initialization answer; bank transfers add
    ``payment_instructions``."""

    payment_status = _payment_status_field()
    authorization_url = serializers.CharField(allow_null=True)
    amount = MoneyField()
    amount_to_be_paid = MoneyField()
    transaction_fee = MoneyField()
    reference = serializers.CharField()
    client_reference = serializers.CharField()
    payment_instructions = PaymentInstructionsSerializer(
        source="*", required=False, help_text="Only for bank-transfer: where and what to pay"
    )

    def to_representation(self, instance: CollectionTransaction) -> dict[str, Any]:
        data = super().to_representation(instance)
        if instance.channel != Channel.BANK_TRANSFER or not instance.virtual_account_number:
            data.pop("payment_instructions", None)
        return data


# --- status check and search -------------------------------------------------------------------


class CustomerOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    customer_tag = serializers.CharField()
    first_name = serializers.CharField()
    last_name = serializers.CharField()


class BusinessOutputSerializer(serializers.Serializer):
    business_name = serializers.CharField()


class TransactionStatusOutputSerializer(serializers.Serializer):
    reference = serializers.CharField()
    payment_status = _payment_status_field()
    amount = MoneyField()
    payment_item = PaymentItemDetailOutputSerializer()
    customer = CustomerOutputSerializer()
    business = BusinessOutputSerializer()


class SplitBreakdownOutputSerializer(serializers.Serializer):
    share = NumberField(help_text="What this subaccount receives from the transaction, in naira")
    bank_id = serializers.IntegerField(source="subaccount.bank_id")
    bank_name = serializers.CharField(source="subaccount.bank.name")
    account_code = serializers.CharField(source="subaccount.account_code")
    account_name = serializers.CharField(source="subaccount.account_name")
    account_number = serializers.CharField(source="subaccount.account_number")


class TransactionSearchOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    reference = serializers.CharField()
    client_reference = serializers.CharField()
    authorization_url = serializers.CharField(allow_null=True)
    amount = MoneyField()
    amount_paid = MoneyField()
    amount_refunded = MoneyField(
        help_text="Extension: how much of amount_paid is refunded or being refunded (refunds "
        "pending or processed; a failed refund no longer counts)"
    )
    amount_to_be_paid = MoneyField()
    transaction_fee = MoneyField()
    payment_status = _payment_status_field()
    payment_channel = serializers.ChoiceField(source="channel", choices=Channel.choices)
    payment_type = serializers.ChoiceField(choices=PaymentType.choices)
    paid_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    initiation_time = serializers.DateTimeField()
    gateway_reference = serializers.CharField(allow_null=True)
    gateway_used = serializers.CharField(allow_null=True)
    no_of_attempts = serializers.IntegerField()
    transaction_split_code = serializers.CharField(allow_blank=True)
    transaction_split_breakdown = SplitBreakdownOutputSerializer(
        source="split_entries.all", many=True
    )
    payment_item = PaymentItemDetailOutputSerializer()
    customer = CustomerOutputSerializer()
    business = BusinessOutputSerializer()
    meta_data = serializers.JSONField(allow_null=True)
    core_service_business_id = serializers.IntegerField(source="business_id")
    business_merchant_id = serializers.IntegerField(source="merchant_id")
    customer_id = serializers.IntegerField()
    customer_tag = serializers.CharField(source="customer.customer_tag")
    customer_email = serializers.EmailField(source="customer.email")
    customer_phone_number = serializers.CharField(source="customer.phone_number")


class TestHelperCompleteInputSerializer(StrictSerializer):
    outcome = serializers.ChoiceField(
        choices=[(value, value) for value in CONFIRMATION_OUTCOMES],
        error_messages={"invalid_choice": "must be one of paid, failed, cancelled"},
    )
