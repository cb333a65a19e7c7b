"""Refunds of paid collections.

A refund takes its money from where the merchant's share of the collection is: from what the
next settlement would pay the merchant (``deducted_from_settlement``, counted by the settlement
that runs next as ``refunds_deducted``) and, for what that does not cover or when the collection
is settled already, from the merchant's wallet (``debited_from_wallet``, one ``refund`` ledger
entry). A failed refund puts each part back where it came from.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import Q

from core.fields import MoneyField
from core.models import TimeStampedModel
from core.money import CURRENCY_NGN
from merchants.models import Merchant, Mode

ZERO = Decimal("0.00")


class RefundStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    PROCESSED = "processed", "Processed"
    FAILED = "failed", "Failed"


class Refund(TimeStampedModel):
    refund_id = models.CharField(max_length=40, unique=True, editable=False)
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="+")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    collection = models.ForeignKey(
        "collections_app.CollectionTransaction", on_delete=models.PROTECT, related_name="refunds"
    )
    currency = models.CharField(max_length=3, default=CURRENCY_NGN)
    amount = MoneyField()
    # The part of our collection fee returned to the merchant with this refund (zero unless
    # COLLECTION_REFUND_RETURNS_FEE is on).
    fee_returned = MoneyField(default=ZERO)
    deducted_from_settlement = MoneyField(default=ZERO)
    debited_from_wallet = MoneyField(default=ZERO)
    reason = models.CharField(max_length=255, blank=True, default="")
    idempotency_key = models.CharField(max_length=100)
    request_fingerprint = models.CharField(max_length=64, editable=False)
    status = models.CharField(
        max_length=10, choices=RefundStatus.choices, default=RefundStatus.PENDING
    )
    # The settlement that deducted ``deducted_from_settlement`` (null until one runs).
    settlement = models.ForeignKey(
        "settlements.Settlement",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="refunds",
    )
    provider_name = models.CharField(max_length=30, blank=True, default="")
    provider_reference = models.CharField(max_length=100, blank=True, default="")
    provider_responses = models.JSONField(default=list, blank=True)
    failure_reason = models.CharField(max_length=255, blank=True, default="")
    # Sending: when a request may first have reached the provider (null: never sent), when the
    # refund is next due to be sent or asked about (the sweeper's clock, also the send claim's
    # lease), and how many checks it has had (the backoff's exponent).
    sent_at = models.DateTimeField(null=True, blank=True)
    next_check_at = models.DateTimeField(null=True, blank=True)
    check_count = models.PositiveIntegerField(default=0)
    # Who asked: the API (a merchant's key) or the back office (a staff user).
    initiated_by = models.CharField(max_length=150, blank=True, default="")
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["merchant", "mode", "-id"], name="refund_newest_idx"),
            models.Index(fields=["status", "updated_at"], name="refund_status_idx"),
            models.Index(
                fields=["next_check_at"],
                condition=Q(status="pending"),
                name="refund_pending_due_idx",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "mode", "idempotency_key"],
                name="one_refund_per_idempotency_key",
            ),
            models.CheckConstraint(
                condition=Q(amount__gt=0)
                & Q(fee_returned__gte=0)
                & Q(deducted_from_settlement__gte=0)
                & Q(debited_from_wallet__gte=0),
                name="refund_amounts_valid",
            ),
            models.CheckConstraint(
                condition=Q(
                    amount=models.F("deducted_from_settlement")
                    + models.F("debited_from_wallet")
                    + models.F("fee_returned")
                ),
                name="refund_sources_add_up",
            ),
            models.CheckConstraint(
                condition=Q(status__in=RefundStatus.values), name="refund_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.refund_id} {self.amount} ({self.status})"
