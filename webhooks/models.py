"""Events (what a merchant's server is told, about collection transactions and payouts alike)
and their signed webhook deliveries: one attempt chain per event and URL, every attempt kept."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from merchants.models import Merchant, Mode


class EventType(models.TextChoices):
    TRANSACTION_PAID = "transaction.paid", "transaction.paid"
    TRANSACTION_FAILED = "transaction.failed", "transaction.failed"
    TRANSACTION_CANCELLED = "transaction.cancelled", "transaction.cancelled"
    TRANSACTION_EXPIRED = "transaction.expired", "transaction.expired"
    PAYOUT_SUCCESSFUL = "payout.successful", "payout.successful"
    PAYOUT_FAILED = "payout.failed", "payout.failed"
    WALLET_BALANCE_LOW = "wallet.balance_low", "wallet.balance_low"
    PAYOUT_RETURNED = "payout.returned", "payout.returned"
    REFUND_PENDING = "refund.pending", "refund.pending"
    REFUND_PROCESSED = "refund.processed", "refund.processed"
    REFUND_FAILED = "refund.failed", "refund.failed"
    SETTLEMENT_COMPLETED = "settlement.completed", "settlement.completed"
    SETTLEMENT_ACCOUNT_CHANGED = "settlement_account.changed", "settlement_account.changed"


class Event(models.Model):
    """Something the merchant is told about: ``body`` holds the exact JSON bytes (UTF-8) that
    every delivery of this event sends, serialized once when the event is recorded."""

    event_id = models.CharField(max_length=40, unique=True, editable=False)
    event_type = models.CharField(max_length=30, choices=EventType.choices)
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="+")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    transaction = models.ForeignKey(
        "collections_app.CollectionTransaction",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="events",
    )
    payout = models.ForeignKey(
        "payouts.Payout",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="events",
    )
    reference = models.CharField(
        max_length=40, db_index=True, help_text="Transaction reference or payout reference"
    )
    body = models.TextField(editable=False)
    created_at = models.DateTimeField(default=timezone.now, db_index=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        permissions = [("resend_event", "Can resend an event's webhook deliveries")]
        constraints = [
            models.UniqueConstraint(
                fields=["transaction", "event_type"],
                condition=models.Q(transaction__isnull=False),
                name="one_event_per_transaction_and_type",
            ),
            models.UniqueConstraint(
                fields=["payout", "event_type"],
                condition=models.Q(payout__isnull=False),
                name="one_event_per_payout_and_type",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} {self.event_type} ({self.reference})"

    @property
    def body_bytes(self) -> bytes:
        return self.body.encode("utf-8")


class DeliveryTarget(models.TextChoices):
    CALLBACK_URL = "callback_url", "Transaction callback URL"
    WEBHOOK_URL = "webhook_url", "Merchant webhook URL"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # an attempt is due at next_attempt_at
    SUCCEEDED = "succeeded", "Succeeded"  # a 2xx answer was received
    FAILED = "failed", "Failed"  # retry window exhausted


class WebhookDelivery(models.Model):
    """One attempt chain: one event to one URL, retried with backoff until a 2xx answer or
    until ``give_up_at``. A resend starts a new chain for the same event (same bytes)."""

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    target = models.CharField(max_length=20, choices=DeliveryTarget.choices)
    url = models.CharField(max_length=2000)
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempt_count = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # Set while an attempt is being sent (the claim's end); in flight while it is in the future.
    claimed_until = models.DateTimeField(null=True, blank=True, editable=False)
    give_up_at = models.DateTimeField()
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=255, blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)
    resend_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="resends"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="webhook_delivery_due_idx"),
            models.Index(
                fields=["claimed_until"],
                condition=models.Q(claimed_until__isnull=False),
                name="webhook_delivery_claimed_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event.event_id} → {self.url} ({self.status})"


class WebhookDeliveryAttempt(models.Model):
    """One POST (or one refusal to POST, when the URL fails the SSRF check at send time)."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempts")
    attempt_number = models.PositiveIntegerField()
    url = models.CharField(max_length=2000)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    response_excerpt = models.CharField(max_length=500, blank=True, default="")
    error = models.CharField(max_length=255, blank=True, default="")
    succeeded = models.BooleanField(default=False)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["delivery", "attempt_number"], name="one_row_per_delivery_attempt"
            )
        ]

    def __str__(self) -> str:
        outcome = self.status_code or self.error or "-"
        return f"attempt {self.attempt_number} → {self.url} ({outcome})"
