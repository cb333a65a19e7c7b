"""The payment catalogue of a merchant (per mode): businesses, categories, sub-categories,
payment items, and the split configuration that shares collected money with subaccounts.

Split design: a ``Subaccount`` (``account_code``) is a bank account that receives part of a
collection. A ``TransactionSplit`` (``transaction_split_code``) lists ``TransactionSplitShare``
rows, one per subaccount. ``split_type`` says how every share of the split is read:

* ``percentage``: the share is a percent of the transaction amount (0 < share <= 100, the shares
  of one split total at most 100); each subaccount's amount is rounded down to the kobo;
* ``flat``: the share is a fixed amount in naira; their total must not exceed the transaction
  amount at initialization.

Whatever the shares do not cover stays with the merchant. The transaction fee is never split.
A payment item may name a split; ``subaccounts`` sent at initialization override it.
"""

from __future__ import annotations

import secrets
import string
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from core.fields import FixedPointField, MoneyField
from core.models import TimeStampedModel, staff_user_field
from core.money import CURRENCY_NGN
from merchants.models import Merchant, Mode
from payment_items.validators import validate_form_data

_CODE_ALPHABET = string.ascii_lowercase + string.digits


def _random_code(prefix: str, length: int = 12) -> str:
    return prefix + "".join(secrets.choice(_CODE_ALPHABET) for _ in range(length))


def subaccount_code_generate() -> str:
    return _random_code("ACCT_")


def transaction_split_code_generate() -> str:
    return _random_code("SPL_")


class CatalogueStatus(models.IntegerChoices):
    INACTIVE = 0, "Inactive"
    ACTIVE = 1, "Active"


class SplitType(models.TextChoices):
    PERCENTAGE = "percentage", "Percentage of the transaction amount"
    FLAT = "flat", "Fixed amount"


class MerchantScoped(models.Model):
    """Owned by one merchant in one mode; the key's mode decides what a request can see."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="+")
    mode = models.CharField(max_length=4, choices=Mode.choices, default=Mode.TEST)

    class Meta:
        abstract = True

    def scope_errors(self, field: str, other: MerchantScoped | None) -> dict[str, str]:
        if other is None or self.merchant_id is None:
            return {}
        if other.merchant_id != self.merchant_id or other.mode != self.mode:
            return {field: "must belong to the same merchant and mode"}
        return {}


class SoftDeletable(models.Model):
    is_deleted = models.BooleanField(default=False)
    delete_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.is_deleted and self.delete_at is None:
            self.delete_at = timezone.now()
        elif not self.is_deleted:
            self.delete_at = None
        super().save(*args, **kwargs)


class Business(MerchantScoped, TimeStampedModel):
    """The merchant's business that payment items belong to (``core_service_business_id``)."""

    business_name = models.CharField(max_length=200)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "businesses"

    def __str__(self) -> str:
        return f"{self.business_name} ({self.mode})"


class CatalogueGroup(SoftDeletable, TimeStampedModel):
    """The fields categories and sub-categories share (``category_details`` of a payment item)."""

    name = models.CharField(max_length=150)
    status = models.IntegerField(choices=CatalogueStatus.choices, default=CatalogueStatus.ACTIVE)
    created_by = staff_user_field(
        related_name="+",
        optional=True,
        on_delete=models.SET_NULL,
        help_text="Back-office user who created it",
    )

    class Meta:
        abstract = True


class Category(MerchantScoped, CatalogueGroup):
    class Meta:
        ordering = ["id"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return f"{self.name} ({self.mode})"


class SubCategory(CatalogueGroup):
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="sub_categories")
    business_registration_type_id = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "sub-categories"

    def __str__(self) -> str:
        return f"{self.category.name} / {self.name}"


class Subaccount(MerchantScoped, TimeStampedModel):
    """A bank account that receives a share of collections, addressed by ``account_code``."""

    account_code = models.CharField(
        max_length=30, unique=True, default=subaccount_code_generate, editable=False
    )
    bank = models.ForeignKey("wallets.Bank", on_delete=models.PROTECT, related_name="+")
    account_number = models.CharField(
        max_length=10,
        validators=[RegexValidator(r"^[0-9]{10}\Z", "Account number must be 10 digits.")],
    )
    account_name = models.CharField(max_length=150)
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.account_code} — {self.account_name} ({self.mode})"


class TransactionSplit(MerchantScoped, TimeStampedModel):
    """A named split configuration: shares of a collection to subaccounts (see module doc)."""

    transaction_split_code = models.CharField(
        max_length=30, unique=True, default=transaction_split_code_generate, editable=False
    )
    name = models.CharField(max_length=150)
    split_type = models.CharField(
        max_length=10, choices=SplitType.choices, default=SplitType.PERCENTAGE
    )
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.transaction_split_code} — {self.name} ({self.mode})"


class TransactionSplitShare(models.Model):
    split = models.ForeignKey(TransactionSplit, on_delete=models.CASCADE, related_name="shares")
    subaccount = models.ForeignKey(Subaccount, on_delete=models.PROTECT, related_name="+")
    share = FixedPointField(
        decimal_places=2,
        help_text="A percent (0-100) for percentage splits, an amount in naira for flat splits",
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["split", "subaccount"], name="one_share_per_subaccount_per_split"
            ),
            models.CheckConstraint(
                condition=models.Q(share__gt=0), name="transaction_split_share_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subaccount_id}: {self.share}"

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.share is not None and self.share <= 0:
            errors["share"] = "must be greater than zero"
        split = self.split if self.split_id else None
        if split is not None:
            if (
                self.share is not None
                and split.split_type == SplitType.PERCENTAGE
                and self.share > Decimal("100")
            ):
                errors["share"] = "a percentage share must be at most 100"
            if self.subaccount_id:
                errors.update(split.scope_errors("subaccount", self.subaccount))
        if errors:
            raise ValidationError(errors)


class PaymentItem(MerchantScoped, SoftDeletable, TimeStampedModel):
    """Something a customer pays for. ``amount`` 0 marks a variable-amount item."""

    business = models.ForeignKey(Business, on_delete=models.PROTECT, related_name="payment_items")
    name = models.CharField(max_length=200)
    description = models.TextField(null=True, blank=True)
    amount = MoneyField(
        default=Decimal("0.00"),
        help_text="Fixed price; 0 means the payer chooses the amount",
    )
    currency = models.CharField(max_length=3, default=CURRENCY_NGN, editable=False)
    form_data = models.JSONField(default=list, blank=True, validators=[validate_form_data])
    is_enumerated_data = models.BooleanField(default=False)
    transaction_split = models.ForeignKey(
        TransactionSplit,
        to_field="transaction_split_code",
        db_column="transaction_split_code",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="payment_items",
    )
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="payment_items")
    sub_category = models.ForeignKey(
        SubCategory, on_delete=models.PROTECT, related_name="payment_items"
    )
    status = models.IntegerField(choices=CatalogueStatus.choices, default=CatalogueStatus.ACTIVE)
    allow_quick_print = models.BooleanField(default=False)
    can_edit_item = models.BooleanField(default=True)
    show_on_agent_app = models.BooleanField(default=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(amount__gte=0), name="payment_item_amount_not_negative"
            )
        ]
        indexes = [models.Index(fields=["merchant", "mode", "status", "is_deleted"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.mode})"

    @property
    def transaction_split_code(self) -> str:
        return self.transaction_split_id or ""

    @property
    def is_variable_amount(self) -> bool:
        return self.amount == 0

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.amount is not None and self.amount < 0:
            errors["amount"] = "must not be negative"
        if self.business_id:
            errors.update(self.scope_errors("business", self.business))
        if self.category_id:
            errors.update(self.scope_errors("category", self.category))
        if self.transaction_split_id:
            errors.update(self.scope_errors("transaction_split", self.transaction_split))
        if (
            self.sub_category_id
            and self.category_id
            and self.sub_category.category_id != self.category_id
        ):
            errors["sub_category"] = "must belong to the chosen category"
        if errors:
            raise ValidationError(errors)
