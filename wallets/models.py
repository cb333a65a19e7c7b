"""Wallets, the append-only ledger, the payout fee schedule, banks and inbound funding transfers.

Balances change only through ``wallets.services`` under a row lock, together with the ledger
entry that explains the change, so each balance always equals the sum of its entries' deltas.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import Q

from core.fields import MoneyField
from core.models import AppendOnlyModel, AppendOnlyQuerySet, TimeStampedModel
from core.money import CURRENCY_NGN
from merchants.models import Merchant, Mode

ZERO = Decimal("0.00")


class WalletStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    INACTIVE = "inactive", "Inactive"


class Wallet(TimeStampedModel):
    """One wallet per merchant per mode, with its static virtual account for inbound transfers."""

    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="wallets")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    currency = models.CharField(max_length=3, default=CURRENCY_NGN)
    status = models.CharField(
        max_length=10, choices=WalletStatus.choices, default=WalletStatus.ACTIVE
    )
    available_balance = MoneyField(default=ZERO)
    reserved_balance = MoneyField(default=ZERO)
    static_account_number = models.CharField(max_length=10, unique=True)
    static_bank_name = models.CharField(max_length=100)
    static_account_name = models.CharField(max_length=200)
    # Low-balance alert (``wallet_alerts_set``; ``_ledger_write`` keeps it): null turns it off.
    # ``low_balance_alerted`` is true from the alert until the available balance is back at or
    # above the threshold (re-armed), so it holds exactly when available < threshold.
    low_balance_threshold = MoneyField(
        null=True,
        blank=True,
        help_text="wallet.balance_low is sent when available balance drops below this",
    )
    low_balance_alerted = models.BooleanField(
        default=False, help_text="An alert was sent and the balance has not recovered since"
    )
    # Payout approval (``payouts.services.controls.payout_approval_threshold_set``): an API
    # payout of at least this amount waits for another key's approval; null turns it off.
    approval_threshold = MoneyField(
        null=True,
        blank=True,
        help_text="API payouts of at least this amount wait for another key's approval",
    )

    class Meta:
        ordering = ["id"]
        permissions = [("change_wallet_status", "Can activate or deactivate a wallet")]
        constraints = [
            models.UniqueConstraint(fields=["merchant", "mode"], name="one_wallet_per_mode"),
            models.CheckConstraint(
                condition=Q(available_balance__gte=0), name="wallet_available_balance_gte_0"
            ),
            models.CheckConstraint(
                condition=Q(reserved_balance__gte=0), name="wallet_reserved_balance_gte_0"
            ),
            models.CheckConstraint(
                condition=Q(static_account_number__regex=r"^[0-9]{10}$"),
                name="wallet_static_account_number_10_digits",
            ),
            models.CheckConstraint(
                condition=Q(low_balance_threshold__isnull=True) | Q(low_balance_threshold__gt=0),
                name="wallet_low_balance_threshold_gt_0",
            ),
            models.CheckConstraint(
                condition=Q(approval_threshold__isnull=True) | Q(approval_threshold__gt=0),
                name="wallet_approval_threshold_gt_0",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.merchant.name} {self.mode} wallet ({self.static_account_number})"

    @property
    def is_active(self) -> bool:
        return self.status == WalletStatus.ACTIVE


class LedgerEntryType(models.TextChoices):
    FUNDING = "funding", "Funding"
    PAYOUT_RESERVE = "payout_reserve", "Payout reserve"
    PAYOUT_DEBIT = "payout_debit", "Payout debit"
    PAYOUT_REVERSAL = "payout_reversal", "Payout reversal"
    # A successful payout sent back by the beneficiary's bank: available += amount (+ the fee
    # when PAYOUT_RETURN_REFUNDS_FEE), reserved untouched.
    PAYOUT_RETURN = "payout_return", "Payout return"
    # Collected money settled to the merchant: available += net of one settlement.
    SETTLEMENT = "settlement", "Settlement"
    # A refund to a customer taken from the wallet (the collection was settled already, or
    # what is owed to the merchant did not cover it): available -= amount.
    REFUND = "refund", "Refund"
    # A failed refund's wallet part put back: available += amount.
    REFUND_REVERSAL = "refund_reversal", "Refund reversal"
    # The platform's wallet only: a settlement's subaccount shares, paid out from there.
    SUBACCOUNT_SHARES = "subaccount_shares", "Subaccount shares"


# Collected money credited to a wallet (``wallets.services.wallet_collection_credit``).
COLLECTION_CREDIT_TYPES: tuple[str, ...] = (
    LedgerEntryType.SETTLEMENT,
    LedgerEntryType.REFUND_REVERSAL,
    LedgerEntryType.SUBACCOUNT_SHARES,
)


class LedgerEntryImmutableError(Exception):
    """Ledger entries are append-only: they are never updated or deleted."""


class LedgerEntry(AppendOnlyModel):
    """One balance movement. ``amount`` is the principal; for ``payout_debit`` the payout amount
    and ``fee_amount`` the fee captured with it. Deltas are signed; balances-after are snapshots.
    """

    wallet = models.ForeignKey(Wallet, on_delete=models.PROTECT, related_name="ledger_entries")
    entry_type = models.CharField(max_length=20, choices=LedgerEntryType.choices)
    amount = MoneyField()
    fee_amount = MoneyField(default=ZERO)
    available_delta = MoneyField()
    reserved_delta = MoneyField()
    available_balance_after = MoneyField()
    reserved_balance_after = MoneyField()
    reference = models.CharField(max_length=100, db_index=True)
    payout_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    description = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AppendOnlyQuerySet["LedgerEntry"].as_manager()
    immutable_error = LedgerEntryImmutableError
    immutable_noun = "ledger entries"

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "ledger entries"
        indexes = [
            models.Index(fields=["wallet", "-id"], name="ledger_wallet_newest_idx"),
            # Statements: a wallet's entries of a range of days, and its last entry before one.
            models.Index(fields=["wallet", "created_at", "id"], name="ledger_wallet_created_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gte=0), name="ledger_amount_gte_0"),
            models.CheckConstraint(condition=Q(fee_amount__gte=0), name="ledger_fee_gte_0"),
            models.CheckConstraint(
                condition=Q(available_balance_after__gte=0), name="ledger_available_after_gte_0"
            ),
            models.CheckConstraint(
                condition=Q(reserved_balance_after__gte=0), name="ledger_reserved_after_gte_0"
            ),
            models.CheckConstraint(
                condition=Q(entry_type__in=LedgerEntryType.values), name="ledger_entry_type_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.entry_type} {self.amount} ({self.reference})"


class Bank(TimeStampedModel):
    """A beneficiary bank: CBN/provider bank code and NIP institution code."""

    name = models.CharField(max_length=150)
    bank_code = models.CharField(max_length=10, unique=True)
    institution_code = models.CharField(max_length=10, blank=True, default="")
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.bank_code})"


class FeeSchedule(models.Model):
    """A payout pricing list; the schedule with the latest ``effective_from`` not in the future
    applies. Editing prices means adding a new schedule, so past quotes stay explainable."""

    name = models.CharField(max_length=100)
    currency = models.CharField(max_length=3, default=CURRENCY_NGN)
    effective_from = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-effective_from"]
        constraints = [
            models.UniqueConstraint(
                fields=["currency", "effective_from"], name="one_fee_schedule_per_instant"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} (from {self.effective_from:%Y-%m-%d %H:%M})"


class FeeTier(models.Model):
    """Flat fee for payout amounts in ``[min_amount, max_amount]`` (no upper bound when null)."""

    schedule = models.ForeignKey(FeeSchedule, on_delete=models.CASCADE, related_name="tiers")
    min_amount = MoneyField()
    max_amount = MoneyField(null=True, blank=True)
    fee_amount = MoneyField()

    class Meta:
        ordering = ["schedule", "min_amount"]
        constraints = [
            models.CheckConstraint(condition=Q(min_amount__gte=0), name="fee_tier_min_gte_0"),
            models.CheckConstraint(condition=Q(fee_amount__gte=0), name="fee_tier_fee_gte_0"),
            models.CheckConstraint(
                condition=Q(max_amount__isnull=True) | Q(max_amount__gte=models.F("min_amount")),
                name="fee_tier_max_gte_min",
            ),
            models.UniqueConstraint(
                fields=["schedule", "min_amount"], name="fee_tier_unique_start"
            ),
        ]

    def __str__(self) -> str:
        upper = self.max_amount if self.max_amount is not None else "∞"
        return f"{self.min_amount}–{upper}: {self.fee_amount}"


class FundingSource(models.TextChoices):
    PROVIDER = "provider", "Provider notification"
    TEST_HELPER = "test_helper", "Test helper"


class FundingTransfer(models.Model):
    """An inbound transfer to a static account; its reference makes it idempotent.

    References never meet across modes: a live reference is the provider's transfer reference,
    unique among live fundings (the same reference to another live wallet is a conflict); a
    test reference is chosen by the merchant (test helper) and unique within its wallet only,
    so no test funding can block, or reveal, a live one or another merchant's.
    """

    provider_reference = models.CharField(max_length=100)
    wallet = models.ForeignKey(Wallet, on_delete=models.PROTECT, related_name="funding_transfers")
    mode = models.CharField(max_length=4, choices=Mode.choices, editable=False)
    ledger_entry = models.OneToOneField(
        LedgerEntry, on_delete=models.PROTECT, related_name="funding_transfer"
    )
    amount = MoneyField()
    currency = models.CharField(max_length=3, default=CURRENCY_NGN)
    source = models.CharField(max_length=20, choices=FundingSource.choices)
    receiving_account_number = models.CharField(max_length=10)
    sender_account_name = models.CharField(max_length=200, blank=True, default="")
    sender_account_number = models.CharField(max_length=20, blank=True, default="")
    sender_bank_name = models.CharField(max_length=150, blank=True, default="")
    narration = models.CharField(max_length=255, blank=True, default="")
    raw_payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="funding_amount_gt_0"),
            models.UniqueConstraint(
                fields=["provider_reference", "wallet"], name="funding_reference_per_wallet"
            ),
            models.UniqueConstraint(
                fields=["provider_reference"],
                condition=Q(mode=Mode.LIVE),
                name="funding_live_reference_unique",
            ),
            models.CheckConstraint(condition=Q(mode__in=Mode.values), name="funding_mode_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.provider_reference}: {self.amount} {self.currency}"
