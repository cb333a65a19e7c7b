"""Saved beneficiaries: a bank account a merchant saves once (name resolved by name enquiry at
save) and pays by id (Paystack's transfer recipients, Flutterwave's beneficiaries).

Deleting is soft (``deleted_at``): a deleted beneficiary is gone from the API and can be saved
again, and the payouts made to it keep their own copy of the account.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from merchants.models import Mode


class Beneficiary(models.Model):
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.CASCADE, related_name="beneficiaries"
    )
    mode = models.CharField(max_length=4, choices=Mode.choices)
    account_number = models.CharField(max_length=10)
    account_name = models.CharField(
        max_length=200, help_text="As resolved by name enquiry when saved (display only)"
    )
    bank_code = models.CharField(max_length=10)
    bank_name = models.CharField(max_length=150)
    bank_id = models.IntegerField(help_text="wallets.Bank primary key")
    nickname = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "beneficiaries"
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "mode", "bank_code", "account_number"],
                condition=Q(deleted_at__isnull=True),
                name="beneficiary_one_saved_account",
            )
        ]
        indexes = [
            models.Index(
                fields=["merchant", "mode", "-created_at", "-id"],
                condition=Q(deleted_at__isnull=True),
                name="beneficiary_saved_newest_idx",
            )
        ]

    def __str__(self) -> str:
        return f"{self.account_name} · {self.bank_name} · {self.account_number}"

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None
