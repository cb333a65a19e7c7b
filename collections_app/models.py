"""Customers, collection transactions, their split entries and confirmation attempts, and the
collection fee schedule."""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models.functions import Lower

from core.fields import FixedPointField, MoneyField
from core.models import TimeStampedModel
from core.money import CURRENCY_NGN
from merchants.models import Merchant, Mode


class PaymentStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    PAID = "paid", "Paid"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    EXPIRED = "expired", "Expired"


FINAL_STATUSES: tuple[str, ...] = (
    PaymentStatus.PAID,
    PaymentStatus.FAILED,
    PaymentStatus.CANCELLED,
    PaymentStatus.EXPIRED,
)


class Channel(models.TextChoices):
    BANK = "bank", "Bank"
    CARD = "card", "Card"
    BANK_TRANSFER = "bank-transfer", "Bank transfer"


class PaymentType(models.TextChoices):
    """What the transaction pays for; every collection here is for a payment item."""

    PAYMENT_ITEM = "payment_item", "Payment item"


class ConfirmationSource(models.TextChoices):
    """Where a confirmation came from."""

    TEST_HELPER = "test_helper", "Test helper"
    CHECKOUT = "checkout", "Hosted checkout"
    PROVIDER_WEBHOOK = "provider_webhook", "Provider webhook"
    PROVIDER_VERIFY = "provider_verify", "Provider verification"
    ADMIN = "admin", "Back office"


class CollectionFeeSchedule(TimeStampedModel):
    """The collection fee: ``percentage_rate`` % of the amount plus ``flat_fee`` (waived when the
    amount is below ``flat_fee_waiver_below``), capped at ``fee_cap`` (no cap when empty). The
    result is rounded half-up to the kobo. One schedule is active at a time."""

    name = models.CharField(max_length=100)
    currency = models.CharField(max_length=3, default=CURRENCY_NGN)
    percentage_rate = FixedPointField(
        decimal_places=2, help_text="Percent of the amount, e.g. 1.50"
    )
    flat_fee = MoneyField(default=Decimal("0.00"))
    flat_fee_waiver_below = MoneyField(
        default=Decimal("0.00"),
        help_text="The flat fee is not charged when the amount is below this",
    )
    fee_cap = MoneyField(null=True, blank=True)
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_active"],
                condition=models.Q(is_active=True),
                name="one_active_collection_fee_schedule",
            ),
            models.CheckConstraint(
                condition=models.Q(percentage_rate__gte=0, percentage_rate__lte=100)
                & models.Q(flat_fee__gte=0)
                & models.Q(flat_fee_waiver_below__gte=0)
                & (models.Q(fee_cap__isnull=True) | models.Q(fee_cap__gte=0)),
                name="collection_fee_schedule_values_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({'active' if self.is_active else 'inactive'})"


class Customer(TimeStampedModel):
    """A payer of one merchant in one mode, identified by email (case-insensitive)."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="+")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    customer_tag = models.CharField(max_length=30, unique=True, editable=False)
    email = models.EmailField(max_length=254)
    phone_number = models.CharField(max_length=20)
    first_name = models.CharField(max_length=100)
    last_name = models.CharField(max_length=100)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                "merchant", "mode", Lower("email"), name="one_customer_per_email_per_mode"
            )
        ]

    def __str__(self) -> str:
        return f"{self.customer_tag} ({self.email})"


class CollectionTransaction(TimeStampedModel):
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="+")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    reference = models.CharField(max_length=40, unique=True, editable=False)
    client_reference = models.CharField(max_length=100)
    request_fingerprint = models.CharField(max_length=64, editable=False)
    payment_item = models.ForeignKey(
        "payment_items.PaymentItem", on_delete=models.PROTECT, related_name="transactions"
    )
    business = models.ForeignKey(
        "payment_items.Business", on_delete=models.PROTECT, related_name="transactions"
    )
    customer = models.ForeignKey(Customer, on_delete=models.PROTECT, related_name="transactions")
    channel = models.CharField(max_length=20, choices=Channel.choices)
    payment_type = models.CharField(
        max_length=20, choices=PaymentType.choices, default=PaymentType.PAYMENT_ITEM
    )
    currency = models.CharField(max_length=3, default=CURRENCY_NGN)
    amount = MoneyField()
    transaction_fee = MoneyField()
    amount_to_be_paid = MoneyField()
    amount_paid = MoneyField(default=Decimal("0.00"))
    # Refunds not failed (pending or processed), kept under the transaction's row lock so the
    # sum of refunds never exceeds ``amount_paid``.
    amount_refunded = MoneyField(default=Decimal("0.00"))
    # The settlement that paid the merchant its share (null while unsettled).
    settlement = models.ForeignKey(
        "settlements.Settlement",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="transactions",
    )
    payment_status = models.CharField(
        max_length=10, choices=PaymentStatus.choices, default=PaymentStatus.PENDING
    )
    callback_url = models.CharField(max_length=2000)
    authorization_url = models.CharField(max_length=2000, null=True, blank=True)
    transaction_split_code = models.CharField(max_length=30, blank=True, default="")
    virtual_account_number = models.CharField(max_length=10, null=True, blank=True)
    virtual_account_name = models.CharField(max_length=150, null=True, blank=True)
    virtual_bank_name = models.CharField(max_length=150, null=True, blank=True)
    gateway_reference = models.CharField(max_length=100, null=True, blank=True)
    gateway_used = models.CharField(max_length=50, null=True, blank=True)
    no_of_attempts = models.PositiveIntegerField(default=0)
    meta_data = models.JSONField(null=True, blank=True)
    provider_responses = models.JSONField(
        default=list, blank=True, help_text="Raw provider exchanges (live mode), kept for audit"
    )
    initiation_time = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)
    paid_at = models.DateTimeField(null=True, blank=True)
    status_changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "mode", "client_reference"],
                name="one_transaction_per_client_reference",
            ),
            models.UniqueConstraint(
                fields=["virtual_account_number"],
                condition=models.Q(virtual_account_number__isnull=False),
                name="unique_virtual_account_number",
            ),
            models.CheckConstraint(
                condition=models.Q(amount__gt=0)
                & models.Q(transaction_fee__gte=0)
                & models.Q(amount_to_be_paid__gte=0)
                & models.Q(amount_paid__gte=0),
                name="collection_transaction_amounts_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(amount_refunded__gte=0)
                & models.Q(amount_refunded__lte=models.F("amount_paid")),
                name="collection_refunds_within_amount_paid",
            ),
            models.CheckConstraint(
                condition=~models.Q(payment_status="paid") | models.Q(paid_at__isnull=False),
                name="paid_transaction_has_paid_at",
            ),
        ]
        indexes = [
            models.Index(fields=["payment_status", "expires_at"]),
            # The settlement run: a merchant's paid, unsettled transactions of one mode.
            models.Index(
                fields=["merchant", "mode", "paid_at"],
                condition=models.Q(payment_status="paid", settlement__isnull=True),
                name="collection_unsettled_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reference} ({self.payment_status})"

    @property
    def is_final(self) -> bool:
        return self.payment_status in FINAL_STATUSES


class TransactionSplitEntry(models.Model):
    """A subaccount's share of one transaction, fixed at initialization (from the item's split
    configuration or the request's ``subaccounts`` override)."""

    transaction = models.ForeignKey(
        CollectionTransaction, on_delete=models.CASCADE, related_name="split_entries"
    )
    subaccount = models.ForeignKey(
        "payment_items.Subaccount", on_delete=models.PROTECT, related_name="+"
    )
    share = MoneyField()

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "transaction split entries"
        constraints = [
            models.CheckConstraint(condition=models.Q(share__gt=0), name="split_entry_positive")
        ]

    def __str__(self) -> str:
        return f"{self.transaction_id}: {self.share}"


class TransactionAttempt(models.Model):
    """Every confirmation received for a transaction, applied or not (a late confirmation for
    a transaction already final is kept here and never changes it)."""

    transaction = models.ForeignKey(
        CollectionTransaction, on_delete=models.CASCADE, related_name="attempts"
    )
    outcome = models.CharField(max_length=10, choices=PaymentStatus.choices)
    source = models.CharField(max_length=20, choices=ConfirmationSource.choices)
    gateway_reference = models.CharField(max_length=100, null=True, blank=True)
    gateway_used = models.CharField(max_length=50, null=True, blank=True)
    amount_paid = MoneyField(null=True, blank=True)
    status_before = models.CharField(max_length=10, choices=PaymentStatus.choices)
    applied = models.BooleanField()
    note = models.CharField(max_length=255, blank=True, default="")
    meta = models.JSONField(
        null=True,
        blank=True,
        help_text="What the source reported besides the outcome, e.g. a card's brand and last "
        "four digits (never the card number or CVV)",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.transaction_id} {self.outcome} ({'applied' if self.applied else 'ignored'})"
