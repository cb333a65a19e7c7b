"""What passes between a payout and its providers: every send (``PayoutAttempt``, at most one
of a payout that can still succeed), the routing rules that choose a provider
(``PayoutRoute``), each provider's circuit breaker (``PayoutProviderCircuit``), a merchant's
switch of a sandbox provider (``SandboxProviderSwitch``), the provider transfer events received
(``ProviderTransferEventRecord``) and the sandbox's own transfers (``SandboxTransfer``).
Imported by ``payouts.models``, where the rest of the service reads them."""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from core.fields import MoneyField
from core.models import TimeStampedModel
from merchants.models import Mode


class AttemptOutcome(models.TextChoices):
    """Where one send of a payout to one provider stands: ``in_flight`` until an answer is
    applied, then the provider's answer (``payouts.providers.base.TransferOutcome``)."""

    IN_FLIGHT = "in_flight", "In flight"
    PENDING = "pending", "Pending"
    UNKNOWN = "unknown", "Unknown"
    SUCCESSFUL = "successful", "Successful"
    FAILED = "failed", "Failed"
    REJECTED = "rejected", "Rejected"
    NOT_SENT = "not_sent", "Not sent"


# An attempt in one of these may still move (or has moved) the money: a payout has at most one.
COULD_SUCCEED_OUTCOMES: tuple[str, ...] = (
    AttemptOutcome.IN_FLIGHT,
    AttemptOutcome.PENDING,
    AttemptOutcome.UNKNOWN,
    AttemptOutcome.SUCCESSFUL,
)
# An attempt in one of these certainly moved no money: the payout may go to another provider.
NO_MONEY_MOVED_OUTCOMES: tuple[str, ...] = (AttemptOutcome.NOT_SENT, AttemptOutcome.REJECTED)


class PayoutAttempt(models.Model):
    """One send of a payout to one provider, under a reference no other attempt ever uses.

    Attempt 1 carries the payout's ``internal_reference``; attempt ``n`` carries
    ``<internal_reference>-<n>``. A new attempt is made only when every earlier one certainly
    moved no money (``NO_MONEY_MOVED_OUTCOMES``); the database refuses a second attempt that
    could still succeed (``payout_attempt_one_could_succeed``)."""

    payout = models.ForeignKey("payouts.Payout", on_delete=models.PROTECT, related_name="attempts")
    number = models.PositiveIntegerField()
    provider_name = models.CharField(max_length=30)
    reference = models.CharField(max_length=50, unique=True)
    outcome = models.CharField(
        max_length=12, choices=AttemptOutcome.choices, default=AttemptOutcome.IN_FLIGHT
    )
    provider_reference = models.CharField(max_length=100, blank=True, default="")
    session_id = models.CharField(max_length=64, blank=True, default="")
    message = models.CharField(max_length=255, blank=True, default="")
    provider_responses = models.JSONField(
        default=list, blank=True, help_text="Raw exchanges of this attempt, oldest first (audit)"
    )
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["payout_id", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["payout", "number"], name="payout_attempt_unique_number"
            ),
            models.UniqueConstraint(
                fields=["payout"],
                condition=Q(outcome__in=COULD_SUCCEED_OUTCOMES),
                name="payout_attempt_one_could_succeed",
            ),
            models.CheckConstraint(
                condition=Q(outcome__in=AttemptOutcome.values), name="payout_attempt_outcome_valid"
            ),
            models.CheckConstraint(condition=Q(number__gte=1), name="payout_attempt_number_gte_1"),
        ]
        indexes = [
            # Provider health reads a provider's recent attempts.
            models.Index(fields=["provider_name", "created_at"], name="payout_attempt_health_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.reference} via {self.provider_name} ({self.outcome})"

    @property
    def could_succeed(self) -> bool:
        return self.outcome in COULD_SUCCEED_OUTCOMES


class PayoutRoute(TimeStampedModel):
    """A routing rule: payouts of ``mode`` to ``bank_code`` (empty: any bank) whose amount is
    within [``min_amount``, ``max_amount``] (empty: unbounded) may go to ``provider_name``.

    The service chooses, never the merchant: the matching active rules of the lowest
    ``priority`` come first, weighted among themselves (``payouts.services.routing``)."""

    mode = models.CharField(max_length=4, choices=Mode.choices)
    bank_code = models.CharField(
        max_length=10, blank=True, default="", help_text="Empty: payouts to any bank"
    )
    min_amount = MoneyField(null=True, blank=True, help_text="Empty: no lower bound")
    max_amount = MoneyField(null=True, blank=True, help_text="Empty: no upper bound")
    provider_name = models.CharField(max_length=30)
    weight = models.PositiveIntegerField(
        default=1, help_text="Share of payouts among matching rules of the same priority"
    )
    priority = models.PositiveIntegerField(default=100, help_text="Lower is tried first")
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["mode", "priority", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(weight__gte=1), name="payout_route_weight_gte_1"),
            models.CheckConstraint(
                condition=Q(min_amount__isnull=True)
                | Q(max_amount__isnull=True)
                | Q(min_amount__lte=F("max_amount")),
                name="payout_route_band_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.mode} {self.bank_code or 'any bank'} → {self.provider_name}"


class CircuitState(models.TextChoices):
    CLOSED = "closed", "Closed"
    OPEN = "open", "Open"
    HALF_OPEN = "half_open", "Half-open"


class PayoutProviderCircuit(models.Model):
    """One payout provider's circuit breaker (``payouts.services.circuits``): ``open`` while its
    recent attempts fail too often, then ``half_open`` for one probe after the cool-down."""

    provider_name = models.CharField(max_length=30, unique=True)
    state = models.CharField(
        max_length=10, choices=CircuitState.choices, default=CircuitState.CLOSED
    )
    opened_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(
        null=True, blank=True, help_text="Attempts before this do not count towards opening"
    )
    probe_started_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["provider_name"]
        verbose_name = "payout provider health"
        verbose_name_plural = "payout provider health"

    def __str__(self) -> str:
        return f"{self.provider_name}: {self.state}"


class SandboxSwitchState(models.TextChoices):
    UP = "up", "Up"
    DOWN = "down", "Down"
    SLOW = "slow", "Slow"


class SandboxProviderSwitch(models.Model):
    """A merchant's test-mode switch of one sandbox provider: ``down`` (every send is refused
    before it connects: not sent) or ``slow`` (answers late). Only that merchant's payouts see
    it; no row is ``up``."""

    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.CASCADE, related_name="sandbox_provider_switches"
    )
    provider_name = models.CharField(max_length=30)
    state = models.CharField(max_length=4, choices=SandboxSwitchState.choices)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "provider_name"], name="sandbox_switch_unique_provider"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider_name} {self.state} for merchant {self.merchant_id}"


class ProviderTransferEventResult(models.TextChoices):
    """What applying a provider's transfer event did (``payouts.services.provider_events``)."""

    APPLIED = "applied", "Applied"
    DUPLICATE = "duplicate", "Duplicate"
    UNKNOWN_REFERENCE = "unknown_reference", "Unknown reference"
    STALE = "stale", "Stale"
    CONFLICT = "conflict", "Conflict: for finance"


class ProviderTransferEventRecord(models.Model):
    """A provider's transfer event (a Paystack ``transfer.success``/``failed``/``reversed``
    webhook), kept once per provider event id: a redelivery finds it here and changes nothing.
    Stored in the transaction that applies it, with what applying it did; unknown references
    and events that contradict a final payout (``conflict``: finance looks at them) are kept
    too."""

    provider = models.CharField(max_length=30)
    event_id = models.CharField(max_length=120)
    kind = models.CharField(max_length=20)
    reference = models.CharField(max_length=100, blank=True, default="")
    session_id = models.CharField(max_length=64, blank=True, default="")
    message = models.CharField(max_length=255, blank=True, default="")
    payload = models.JSONField(default=dict, blank=True, help_text="The event as received")
    result = models.CharField(max_length=20, choices=ProviderTransferEventResult.choices)
    payout = models.ForeignKey(
        "payouts.Payout",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="provider_events",
    )
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-received_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "event_id"], name="provider_transfer_event_unique"
            ),
            models.CheckConstraint(
                condition=Q(result__in=ProviderTransferEventResult.values),
                name="provider_transfer_event_result_valid",
            ),
        ]
        indexes = [
            models.Index(
                fields=["received_at"],
                name="provider_event_conflict_idx",
                condition=Q(result="conflict"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.kind} {self.reference} ({self.result})"


class SandboxTransfer(TimeStampedModel):
    """A sandbox provider's own record of transfers it accepted, keyed by our reference.

    It makes the sandbox idempotent (a second initiate with one reference is the same transfer)
    and lets magic accounts change their answer across requeries in any process.
    """

    provider_name = models.CharField(max_length=30, default="sandbox")
    reference = models.CharField(max_length=50)
    account_number = models.CharField(max_length=10)
    amount = MoneyField()
    outcome = models.CharField(max_length=12)
    transfer_code = models.CharField(max_length=40, unique=True)
    initiate_count = models.PositiveIntegerField(default=1)
    query_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["provider_name", "reference"], name="sandbox_transfer_unique_reference"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider_name} {self.transfer_code} ({self.reference})"
