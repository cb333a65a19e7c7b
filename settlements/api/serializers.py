"""Input and output serializers for the settlement routes.

The Settlement resource here is the same object as the ``settlement.completed`` event's data
(``settlement_id``, ``mode``, ``currency``, the period, the counts and amounts, ``status``,
``settled_at``); the detail adds the subaccount shares and their payouts.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from collections_app.models import Channel
from core.api.fields import IsoDateTimeParamField, MoneyField
from core.api.list_filters import DateRangeParamsSerializer, status_param_field
from payouts.models import PayoutStatus
from settlements.models import SettlementStatus


class SettlementListParamsSerializer(DateRangeParamsSerializer):
    """The settlement list's filters (``page``/``limit`` come from ``PageParamsSerializer``).
    ``from_date``/``to_date`` bound ``settled_at``; a bare date is a whole Lagos day. Named as
    ``settlements.selectors.SettlementListFilters`` names them."""

    status = status_param_field(SettlementStatus)
    from_date = IsoDateTimeParamField(required=False, source="settled_from")
    to_date = IsoDateTimeParamField(required=False, end_of_day=True, source="settled_to")


class SettlementOutputSerializer(serializers.Serializer):
    """The Settlement resource (list items, the ``settlement.completed`` event's data)."""

    settlement_id = serializers.CharField()
    mode = serializers.CharField()
    currency = serializers.CharField()
    period_start = serializers.DateTimeField(
        allow_null=True,
        help_text="the earliest paid_at the settlement could cover (inclusive); null for the "
        "merchant's first settlement in this mode",
    )
    period_end = serializers.DateTimeField(
        help_text="the cutoff: collections paid before it were settled (exclusive)"
    )
    transaction_count = serializers.IntegerField(help_text="paid collections settled")
    gross = MoneyField(help_text="what the customers paid, our fees included")
    fees = MoneyField(help_text="our collection fees")
    subaccount_shares = MoneyField(help_text="the subaccounts' shares, paid out separately")
    refunds_deducted = MoneyField(
        help_text="refunds of collections not yet settled when they were made, taken from "
        "this settlement"
    )
    net = MoneyField(
        help_text="gross - fees - subaccount_shares - refunds_deducted: credited to the "
        "wallet by one settlement ledger entry"
    )
    status = serializers.ChoiceField(choices=SettlementStatus.choices)
    settled_at = serializers.DateTimeField()


class SettlementSharePayoutOutputSerializer(serializers.Serializer):
    internal_reference = serializers.CharField()
    status = serializers.ChoiceField(choices=PayoutStatus.choices)


class SettlementShareOutputSerializer(serializers.Serializer):
    account_code = serializers.CharField(source="subaccount.account_code")
    account_name = serializers.CharField(source="subaccount.account_name")
    amount = MoneyField()
    payout = SettlementSharePayoutOutputSerializer(
        allow_null=True,
        help_text="the payout that pays this share from the platform's wallet; null until it "
        "is created",
    )


class SettlementDetailOutputSerializer(SettlementOutputSerializer):
    """One settlement with what it pays each subaccount."""

    shares = SettlementShareOutputSerializer(
        many=True, help_text="one per subaccount with a share in the settled collections"
    )


class SettlementTransactionOutputSerializer(serializers.Serializer):
    """One paid collection a settlement settled."""

    reference = serializers.CharField()
    client_reference = serializers.CharField()
    amount = MoneyField(help_text="the item's amount")
    transaction_fee = MoneyField(help_text="our collection fee (the customer pays it)")
    amount_paid = MoneyField(help_text="what the customer paid: amount + transaction_fee")
    amount_refunded = MoneyField(help_text="refunded so far (pending and processed refunds)")
    subaccount_shares = MoneyField(
        source="subaccount_share_total", help_text="the subaccounts' shares of this collection"
    )
    net_to_merchant = serializers.SerializerMethodField(
        help_text="amount_paid - transaction_fee - subaccount_shares"
    )
    paid_at = serializers.DateTimeField()
    payment_channel = serializers.ChoiceField(source="channel", choices=Channel.choices)

    def get_net_to_merchant(self, transaction: Any) -> str:
        net = transaction.amount_paid - transaction.transaction_fee
        return MoneyField().to_representation(net - transaction.subaccount_share_total)
