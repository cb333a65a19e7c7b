"""Settlements, the subaccount shares each settlement pays, and the platform ledger.

Money a customer pays sits with the platform until it leaves: to the merchant's wallet by a
settlement, to a subaccount by a payout, back to the customer by a refund, or to our fees. The
platform ledger records every move between those buckets as postings that sum to zero, with
``collected`` the only bucket money enters from; so at every instant

    collected = fees + merchant credits + subaccount payouts + refunds + still owed

where still owed is what the merchant, the subaccounts and pending refunds are owed.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import Q

from core.fields import MoneyField
from core.models import AppendOnlyModel, AppendOnlyQuerySet
from core.money import CURRENCY_NGN
from merchants.models import Merchant, Mode

ZERO = Decimal("0.00")


class SettlementStatus(models.TextChoices):
    # Recorded and the merchant's wallet credited; the subaccount payouts may still be running.
    COMPLETED = "completed", "Completed"


class Settlement(models.Model):
    """One settlement run's result for one merchant in one mode: the paid collections it
    settled (``CollectionTransaction.settlement``), the refunds it deducted
    (``Refund.settlement``) and the net credited to the wallet by one ``settlement`` ledger
    entry. ``net = gross - fees - subaccount_shares - refunds_deducted``."""

    settlement_id = models.CharField(max_length=40, unique=True, editable=False)
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="+")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    currency = models.CharField(max_length=3, default=CURRENCY_NGN)
    status = models.CharField(
        max_length=12, choices=SettlementStatus.choices, default=SettlementStatus.COMPLETED
    )
    # The paid_at range of the settled collections: [period_start, period_end).
    period_start = models.DateTimeField(null=True, blank=True)
    period_end = models.DateTimeField()
    transaction_count = models.PositiveIntegerField()
    gross = MoneyField()
    fees = MoneyField()
    subaccount_shares = MoneyField()
    refunds_deducted = MoneyField()
    net = MoneyField()
    ledger_entry = models.OneToOneField(
        "wallets.LedgerEntry",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="settlement",
    )
    settled_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["merchant", "mode", "-id"], name="settlement_newest_idx")]
        constraints = [
            models.CheckConstraint(
                condition=Q(gross__gte=0)
                & Q(fees__gte=0)
                & Q(subaccount_shares__gte=0)
                & Q(refunds_deducted__gte=0)
                & Q(net__gte=0),
                name="settlement_amounts_gte_0",
            ),
            models.CheckConstraint(
                condition=Q(
                    net=models.F("gross")
                    - models.F("fees")
                    - models.F("subaccount_shares")
                    - models.F("refunds_deducted")
                ),
                name="settlement_net_adds_up",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.settlement_id} ({self.mode}, net {self.net})"


class SettlementShare(models.Model):
    """What one settlement owes one subaccount, and the payout that pays it (from the
    platform's wallet of the mode, never the merchant's)."""

    settlement = models.ForeignKey(Settlement, on_delete=models.PROTECT, related_name="shares")
    subaccount = models.ForeignKey(
        "payment_items.Subaccount", on_delete=models.PROTECT, related_name="+"
    )
    amount = MoneyField()
    payout = models.OneToOneField(
        "payouts.Payout",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="settlement_share",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["settlement", "subaccount"], name="one_share_per_subaccount_settlement"
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="settlement_share_gt_0"),
        ]

    def __str__(self) -> str:
        return f"{self.settlement_id}/{self.subaccount_id}: {self.amount}"


class PlatformAccount(models.TextChoices):
    """The platform ledger's buckets. Money enters only through ``collected``; every other
    posting moves it between the rest."""

    COLLECTED = "collected", "Collected from customers"
    FEES = "fees", "Fees earned"
    OWED_MERCHANTS = "owed_merchants", "Owed to merchants"
    OWED_SUBACCOUNTS = "owed_subaccounts", "Owed to subaccounts"
    REFUNDS_PENDING = "refunds_pending", "Refunds in progress"
    MERCHANT_CREDITS = "merchant_credits", "Credited to merchants' wallets"
    SUBACCOUNT_PAYOUTS = "subaccount_payouts", "Paid to subaccounts"
    REFUNDS = "refunds", "Refunded to customers"


STILL_OWED_ACCOUNTS: tuple[str, ...] = (
    PlatformAccount.OWED_MERCHANTS,
    PlatformAccount.OWED_SUBACCOUNTS,
    PlatformAccount.REFUNDS_PENDING,
)


class PlatformLedgerEntryImmutableError(Exception):
    """Platform ledger entries are append-only."""


class PlatformLedgerEntry(AppendOnlyModel):
    """One posting: ``amount`` (signed) added to ``account`` in ``mode``. Postings are written
    in groups (``group``) by ``settlements.platform_ledger.platform_post``; a group's amounts
    sum to the amount it adds to ``collected`` twice over, i.e. ``collected`` = sum of the
    rest, always."""

    mode = models.CharField(max_length=4, choices=Mode.choices)
    account = models.CharField(max_length=20, choices=PlatformAccount.choices)
    amount = MoneyField()
    group = models.CharField(max_length=60, db_index=True)
    merchant = models.ForeignKey(
        Merchant, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    collection_id = models.BigIntegerField(null=True, blank=True)
    settlement_id = models.BigIntegerField(null=True, blank=True)
    refund_id = models.BigIntegerField(null=True, blank=True)
    payout_id = models.BigIntegerField(null=True, blank=True)
    description = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AppendOnlyQuerySet["PlatformLedgerEntry"].as_manager()
    immutable_error = PlatformLedgerEntryImmutableError
    immutable_noun = "platform ledger entries"

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "platform ledger entries"
        indexes = [
            models.Index(fields=["mode", "account"], name="platform_ledger_account_idx"),
            # What one merchant is owed (a refund's create reads it under the wallet lock).
            models.Index(
                fields=["merchant", "mode", "account"], name="platform_ledger_merchant_idx"
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(account__in=PlatformAccount.values),
                name="platform_ledger_account_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.mode} {self.account} {self.amount} ({self.group})"
