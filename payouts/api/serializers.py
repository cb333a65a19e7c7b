"""Input and output serializers for the payout routes."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.exceptions import validation_message
from core.api.fields import (
    AmountField,
    IsoDateTimeParamField,
    MoneyField,
    StrictCharField,
    StrictSerializer,
    timestamp_representation,
)
from core.api.list_filters import DateRangeParamsSerializer, status_param_field
from core.exceptions import ApplicationError
from core.money import CURRENCY_NGN, format_amount
from payouts.models import (
    AttemptOutcome,
    PayoutApprovalStatus,
    PayoutBatchItemResult,
    PayoutBatchStatus,
    PayoutStatus,
)
from payouts.selectors import MAX_DATABASE_ID, payout_attempt_list
from payouts.services import BATCH_MAX_ITEMS, PayoutBatchItem

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
    scheduled_for = IsoDateTimeParamField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Extension: send the payout at this instant (ISO 8601; without an offset it is "
        "Lagos time, UTC+01:00), in the future and at most 30 days ahead. The funds are reserved "
        "now; until then the payout stays reserved and may be cancelled",
    )

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


# --- Bulk create (extension) -----------------------------------------------------------------


class StrictBooleanField(serializers.BooleanField):
    """A JSON ``true`` or ``false`` only: strings and numbers are refused."""

    default_error_messages = {"invalid": "must be true or false"}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class PayoutBatchItemInputSerializer(PayoutCreateInputSerializer):
    """One item of a bulk request: the single create's fields, but the currency is the
    batch's."""

    currency = None  # type: ignore[assignment]


class _AnyJsonValue(serializers.Field):
    """Whatever the item is: it is checked on its own afterwards."""

    def to_internal_value(self, data: Any) -> Any:
        return data

    def to_representation(self, value: Any) -> Any:
        return value


BATCH_ITEMS_COUNT_RULE = f"must hold between 1 and {BATCH_MAX_ITEMS} payouts"


@extend_schema_field(PayoutBatchItemInputSerializer(many=True))
class PayoutBatchItemsField(serializers.ListField):
    """1 to ``BATCH_MAX_ITEMS`` items; each is checked on its own afterwards
    (``payout_batch_items_parse``), so that a malformed item rejects only itself."""

    def __init__(self, **kwargs: Any) -> None:
        # null too: a null item is rejected on its own ("must be a JSON object"), like any
        # other item that is not an object, instead of the whole request.
        kwargs.setdefault("child", _AnyJsonValue(allow_null=True))
        kwargs.setdefault("min_length", 1)
        kwargs.setdefault("max_length", BATCH_MAX_ITEMS)
        kwargs.setdefault(
            "error_messages",
            {
                "not_a_list": "must be a list of payouts",
                "empty": BATCH_ITEMS_COUNT_RULE,
                "min_length": BATCH_ITEMS_COUNT_RULE,
                "max_length": BATCH_ITEMS_COUNT_RULE,
            },
        )
        super().__init__(**kwargs)


class PayoutBatchCreateInputSerializer(StrictSerializer):
    """The bulk request around its items."""

    batch_reference = StrictCharField(
        max_length=100,
        trim_whitespace=False,
        help_text="The request's idempotency key, unique per wallet: the same reference with "
        "the same items answers the first answer again (duplicate true); with other items, 409",
    )
    currency = StrictCharField(
        required=False, default=CURRENCY_NGN, trim_whitespace=False, allow_blank=True
    )
    atomic = StrictBooleanField(
        required=False,
        default=False,
        help_text="true: every item is reserved or none is, and the first failing item's error "
        "names it (items[3].amount: ...); false (default): each item is accepted or rejected "
        "on its own",
    )
    items = PayoutBatchItemsField(
        help_text=f"1 to {BATCH_MAX_ITEMS} payouts, each with the single create's fields (or "
        "beneficiary_id in place of the account) and its own idempotency_key, unique within "
        "the batch"
    )

    def validate_batch_reference(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("This field may not be blank.")
        return value


ITEM_NOT_AN_OBJECT_MESSAGE = "must be a JSON object"


def payout_batch_items_parse(raw_items: list[Any]) -> list[PayoutBatchItem]:
    """Each item of a bulk request checked as a single create's body would be: its arguments,
    or the message a single create would answer (``amount: must be ...``)."""
    parsed = []
    for raw in raw_items:
        if not isinstance(raw, dict):
            parsed.append(
                PayoutBatchItem(
                    idempotency_key=None,
                    error=ApplicationError(ITEM_NOT_AN_OBJECT_MESSAGE),
                    sent=raw,
                )
            )
            continue
        key = raw.get("idempotency_key")
        key = key if isinstance(key, str) else None
        serializer = PayoutBatchItemInputSerializer(data=raw)
        if serializer.is_valid():
            parsed.append(PayoutBatchItem(idempotency_key=key, arguments=serializer.validated_data))
        else:
            parsed.append(
                PayoutBatchItem(
                    idempotency_key=key,
                    error=ApplicationError(validation_message(serializer.errors)),
                    sent=raw,
                )
            )
    return parsed


# --- List ------------------------------------------------------------------------------------


class PayoutListParamsSerializer(DateRangeParamsSerializer):
    """The payout list's filters (``page``/``limit`` come from ``PageParamsSerializer``), named as
    ``payouts.selectors.PayoutListFilters`` names them."""

    currency = serializers.CharField(required=False, default=CURRENCY_NGN)
    status = status_param_field(PayoutStatus)
    from_date = IsoDateTimeParamField(required=False, source="created_from")
    to_date = IsoDateTimeParamField(required=False, end_of_day=True, source="created_to")
    reference = serializers.CharField(required=False, max_length=200)
    batch_id = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_DATABASE_ID,
        error_messages={
            "invalid": "must be a positive integer",
            "min_value": "must be a positive integer",
            "max_value": "must be a positive integer",
        },
    )


# --- Output ----------------------------------------------------------------------------------


class BeneficiaryOutputSerializer(serializers.Serializer):
    account_number = serializers.CharField()
    account_name = serializers.CharField()
    bank_code = serializers.CharField()
    bank_name = serializers.CharField()


class PayoutApprovalOutputSerializer(serializers.Serializer):
    """Extension: whether the payout waits for another key's approval."""

    # DRF's metaclass takes declared fields out of the class, so ``Field.required`` stays a bool.
    required = serializers.BooleanField(  # type: ignore[assignment]
        help_text="the payout was at or above the wallet's approval threshold when created"
    )
    status = serializers.ChoiceField(
        choices=PayoutApprovalStatus.choices,
        help_text="not_required; pending (reserved, not sent); approved; expired (not approved "
        "within 24 h: failed, funds released); cancelled (by the merchant)",
    )
    approved_at = serializers.DateTimeField(allow_null=True)


def approval_representation(payout: Any, *, zone: Any = None) -> dict[str, Any]:
    """The ``approval`` extension field of a payout."""
    return {
        "required": payout.approval_status != PayoutApprovalStatus.NOT_REQUIRED,
        "status": payout.approval_status,
        "approved_at": timestamp_representation(payout.approved_at, zone=zone),
    }


class PayoutOutputSerializer(serializers.Serializer):
    """The Payout resource."""

    id = serializers.IntegerField()
    internal_reference = serializers.CharField()
    idempotency_key = serializers.CharField(
        help_text="Extension: the idempotency_key the merchant sent with the create, so a "
        "payout can be tied back to the merchant's own record; the list's reference filter "
        "finds a payout by it too."
    )
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
    approval = serializers.SerializerMethodField(
        help_text="Extension: the payout's approval by a second key (see the approve route)"
    )
    scheduled_for = serializers.DateTimeField(
        allow_null=True,
        help_text="Extension: when the payout is to be sent; null when sent at once",
    )

    @extend_schema_field(PayoutApprovalOutputSerializer)
    def get_approval(self, payout: Any) -> dict[str, Any]:
        return approval_representation(payout)

    def get_return_reason(self, payout: Any) -> str | None:
        return payout.return_reason or None

    def get_nip_session_id(self, payout: Any) -> str | None:
        return payout.nip_session_id or None

    def to_representation(self, instance: Any) -> dict[str, Any]:
        """The fields declared above, in their order, built directly rather than by DRF's walk
        over them (a list page holds up to 200 payouts, and the walk costs about ten times
        as much); ``tests/payouts/test_serializers.py`` holds the two equal."""
        payout, zone = instance, timezone.get_current_timezone()
        return {
            "id": payout.id,
            "internal_reference": payout.internal_reference,
            "idempotency_key": payout.idempotency_key,
            "beneficiary": {
                "account_number": payout.account_number,
                "account_name": payout.account_name,
                "bank_code": payout.bank_code,
                "bank_name": payout.bank_name,
            },
            "currency": payout.currency,
            "amount": format_amount(payout.amount),
            "fee_amount": format_amount(payout.fee_amount),
            "total_debit_amount": format_amount(payout.total_debit_amount),
            "status": payout.status,
            "narration": payout.narration,
            "error_message": payout.error_message,
            "nip_session_id": self.get_nip_session_id(payout),
            "returned_at": timestamp_representation(payout.returned_at, zone=zone),
            "return_reason": self.get_return_reason(payout),
            "created_at": timestamp_representation(payout.created_at, zone=zone),
            "completed_at": timestamp_representation(payout.completed_at, zone=zone),
            "updated_at": timestamp_representation(payout.updated_at, zone=zone),
            "approval": approval_representation(payout, zone=zone),
            "scheduled_for": timestamp_representation(payout.scheduled_for, zone=zone),
        }


class PayoutAttemptOutputSerializer(serializers.Serializer):
    """One send of the payout to a provider (extension)."""

    number = serializers.IntegerField(help_text="1 for the first send, then 2, 3, …")
    provider = serializers.CharField(source="provider_name", help_text="the provider it went to")
    status = serializers.ChoiceField(
        source="outcome",
        choices=AttemptOutcome.choices,
        help_text="in_flight while being sent; pending, unknown (no conclusive answer yet), "
        "successful or failed as the provider answers; not_sent or rejected when it certainly "
        "moved no money (the payout may then go to another provider)",
    )
    created_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)


class PayoutDetailOutputSerializer(PayoutOutputSerializer):
    """The Payout resource of one payout's routes (retrieve, requery), with the extension field
    ``attempts``; the list leaves it out, to stay one read per page."""

    attempts = PayoutAttemptOutputSerializer(
        many=True,
        help_text="Extension: every send of the payout to a provider, oldest first. The service "
        "chooses the provider; a send that certainly moved no money may be followed by another "
        "to a different provider, and at most one can ever succeed.",
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = super().to_representation(instance)
        zone = timezone.get_current_timezone()
        data["attempts"] = [
            {
                "number": attempt.number,
                "provider": attempt.provider_name,
                "status": attempt.outcome,
                "created_at": timestamp_representation(attempt.created_at, zone=zone),
                "completed_at": timestamp_representation(attempt.completed_at, zone=zone),
            }
            for attempt in payout_attempt_list(payout=instance)
        ]
        return data


class PayoutCreateOutputSerializer(serializers.Serializer):
    payout = PayoutOutputSerializer()
    duplicate = serializers.BooleanField()


# --- Bulk output (extension) -------------------------------------------------------------------


class PayoutBatchOutputSerializer(serializers.Serializer):
    """A bulk request: how it ended and what it reserved. ``accepted`` items created payouts
    (the totals are theirs), ``duplicates`` named earlier payouts by their keys, ``rejected``
    ones created nothing."""

    id = serializers.IntegerField()
    batch_reference = serializers.CharField()
    status = serializers.ChoiceField(choices=PayoutBatchStatus.choices)
    atomic = serializers.BooleanField()
    currency = serializers.CharField()
    total_items = serializers.IntegerField()
    accepted = serializers.IntegerField(source="accepted_count")
    duplicates = serializers.IntegerField(source="duplicate_count")
    rejected = serializers.IntegerField(source="rejected_count")
    total_amount = MoneyField()
    total_fee_amount = MoneyField()
    total_debit_amount = MoneyField()
    created_at = serializers.DateTimeField()


class PayoutBatchItemErrorOutputSerializer(serializers.Serializer):
    message = serializers.CharField()
    statusCode = serializers.IntegerField(source="status_code")  # named as in the envelope


class PayoutBatchItemOutputSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="the item's place in the request, from 0")
    idempotency_key = serializers.CharField(allow_null=True)
    result = serializers.ChoiceField(choices=PayoutBatchItemResult.choices)
    payout = PayoutOutputSerializer(
        allow_null=True, help_text="the payout created (accepted) or replayed (duplicate)"
    )
    error = PayoutBatchItemErrorOutputSerializer(
        allow_null=True, help_text="why the item was rejected, as a single create would answer"
    )


class PayoutBatchCreateOutputSerializer(serializers.Serializer):
    batch = PayoutBatchOutputSerializer()
    items = PayoutBatchItemOutputSerializer(many=True, help_text="in request order")
    duplicate = serializers.BooleanField(
        help_text="true when this answers an earlier request with the same batch_reference"
    )


class PayoutStatusCountsOutputSerializer(serializers.Serializer):
    reserved = serializers.IntegerField()
    processing = serializers.IntegerField()
    dispatched = serializers.IntegerField()
    ambiguous = serializers.IntegerField()
    successful = serializers.IntegerField()
    failed = serializers.IntegerField()


class PayoutBatchDetailOutputSerializer(PayoutBatchOutputSerializer):
    payout_status_counts = PayoutStatusCountsOutputSerializer(
        help_text="how many of the batch's payouts are in each status now"
    )


# --- The merchant's controls (extension) -------------------------------------------------------


class PayoutApprovalSettingsInputSerializer(StrictSerializer):
    approval_threshold = AmountField(
        allow_null=True,
        help_text="API payouts of at least this amount wait for another key's approval; greater "
        "than zero; null turns approval off",
    )


class PayoutApprovalSettingsOutputSerializer(serializers.Serializer):
    approval_threshold = MoneyField(allow_null=True, help_text="null: no approval needed")
    approval_expires_after_seconds = serializers.IntegerField(
        help_text="a payout not approved within this long is cancelled (Approval expired)"
    )


# --- Test helper: a return after success -----------------------------------------------------


class TestPayoutReturnInputSerializer(StrictSerializer):
    reason = StrictCharField(required=False, allow_blank=True, max_length=255, default="")
