"""Payouts: a transfer from a merchant wallet to a beneficiary bank account.

A payout is created ``reserved`` (its total debit moved from available to reserved balance in the
same transaction) and then moves through the state machine in ``payouts.state_machine``. The
provider's raw answers are kept for audit. An ambiguous payout that finance staff settle by hand
goes through two people: one proposes the outcome (``PayoutResolutionProposal``), another
approves or rejects it; an approved proposal settles the payout and is recorded in
``PayoutResolution``. A bulk payout uploaded in the back office goes through two people too
(``PayoutBatchProposal``).

Every send to a provider is a ``PayoutAttempt`` with a reference of its own; at most one attempt
of a payout can still succeed (a partial unique index). ``PayoutRoute`` rows choose the provider
of a new attempt, and ``PayoutProviderCircuit`` is each provider's circuit breaker
(``payouts.services.routing``, ``payouts.services.circuits``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from core.fields import MoneyField
from core.models import staff_user_field
from core.money import CURRENCY_NGN
from merchants.models import Mode

ZERO = Decimal("0.00")


class PayoutStatus(models.TextChoices):
    RESERVED = "reserved", "Reserved"
    PROCESSING = "processing", "Processing"
    DISPATCHED = "dispatched", "Dispatched"
    AMBIGUOUS = "ambiguous", "Ambiguous"
    SUCCESSFUL = "successful", "Successful"
    FAILED = "failed", "Failed"


PENDING_STATUSES: tuple[str, ...] = (
    PayoutStatus.RESERVED,
    PayoutStatus.PROCESSING,
    PayoutStatus.DISPATCHED,
    PayoutStatus.AMBIGUOUS,
)
FINAL_STATUSES: tuple[str, ...] = (PayoutStatus.SUCCESSFUL, PayoutStatus.FAILED)


class PayoutApprovalStatus(models.TextChoices):
    """Whether a payout waits for a second key's approval (``payouts.services.controls``): a
    payout of at least the wallet's ``approval_threshold`` is created ``pending``; another key
    approves it, the merchant cancels it, or it expires (``PAYOUT_APPROVAL_EXPIRES_AFTER``)."""

    NOT_REQUIRED = "not_required", "Not required"
    PENDING = "pending", "Pending"
    APPROVED = "approved", "Approved"
    EXPIRED = "expired", "Expired"
    CANCELLED = "cancelled", "Cancelled"


# A payout is held (never claimed by dispatch) while its approval is pending or its scheduled
# time has not come: ``payout_dispatchable_q`` is the one reading of that rule.
RELEASED_APPROVAL_STATUSES: tuple[str, ...] = (
    PayoutApprovalStatus.NOT_REQUIRED,
    PayoutApprovalStatus.APPROVED,
)


def payout_dispatchable_q(*, now: datetime, since: timedelta = timedelta(0)) -> Q:
    """The payouts dispatch may take (whatever their status): approval not needed or given, and
    no scheduled time or one that has come. With ``since``, they must have been free to go for
    that long (approved and due ``since`` ago or earlier): what the stuck sweeper counts from."""
    cutoff = now - since
    return (
        Q(approval_status__in=RELEASED_APPROVAL_STATUSES)
        & (Q(approved_at__isnull=True) | Q(approved_at__lte=cutoff))
        & (Q(scheduled_for__isnull=True) | Q(scheduled_for__lte=cutoff))
    )


def payout_is_held(payout: Payout, *, now: datetime) -> bool:
    """``payout_dispatchable_q`` for one payout in memory: still ``reserved`` and waiting for
    something the merchant controls (its approval, or its scheduled time)."""
    if payout.status != PayoutStatus.RESERVED:
        return False
    if payout.approval_status == PayoutApprovalStatus.PENDING:
        return True
    return payout.scheduled_for is not None and payout.scheduled_for > now


class Payout(models.Model):
    # Indexed by the composite list indexes below (wallet first), not on its own.
    wallet = models.ForeignKey(
        "wallets.Wallet", on_delete=models.PROTECT, related_name="payouts", db_index=False
    )
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="payouts"
    )
    mode = models.CharField(max_length=4, choices=Mode.choices)
    internal_reference = models.CharField(max_length=40, unique=True)
    idempotency_key = models.CharField(max_length=175)
    request_fingerprint = models.CharField(
        max_length=64, help_text="SHA-256 of the normalised request parameters"
    )

    # Beneficiary, as resolved by name enquiry at creation.
    account_number = models.CharField(max_length=10)
    account_name = models.CharField(max_length=200)
    bank_code = models.CharField(max_length=10)
    bank_name = models.CharField(max_length=150)
    bank_id = models.IntegerField(help_text="wallets.Bank primary key")

    currency = models.CharField(max_length=3, default=CURRENCY_NGN)
    amount = MoneyField()
    fee_amount = MoneyField(default=ZERO)
    total_debit_amount = MoneyField()
    status = models.CharField(
        max_length=12, choices=PayoutStatus.choices, default=PayoutStatus.RESERVED
    )
    narration = models.CharField(max_length=255, null=True, blank=True)
    error_message = models.CharField(max_length=255, null=True, blank=True)

    # Provider side.
    provider_name = models.CharField(max_length=30)
    provider_reference = models.CharField(max_length=100, blank=True, default="")
    nip_session_id = models.CharField(
        max_length=64,
        blank=True,
        default="",
        verbose_name="NIP session id",
        help_text="The interbank (NIP) session id of the transfer, as the provider reports it",
    )
    provider_responses = models.JSONField(
        default=list, blank=True, help_text="Raw provider answers, oldest first (audit)"
    )

    # Dispatch and requery bookkeeping.
    dispatch_attempts = models.PositiveIntegerField(default=0)
    dispatch_claimed_at = models.DateTimeField(null=True, blank=True)
    verify_before_send = models.BooleanField(
        default=False,
        help_text="An earlier attempt may have sent the transfer: ask the provider first",
    )
    dispatched_at = models.DateTimeField(null=True, blank=True)
    ambiguous_since = models.DateTimeField(null=True, blank=True)
    next_requery_at = models.DateTimeField(null=True, blank=True)
    requery_count = models.PositiveIntegerField(default=0)

    # A successful payout the beneficiary's bank sent back later: it stays ``successful`` (final
    # in "3.1 Payout status" of docs/spec.md) and gains these; the principal is back in the
    # available balance.
    returned_at = models.DateTimeField(null=True, blank=True)
    return_reason = models.CharField(max_length=255, blank=True, default="")

    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Extension: the bulk request that created it (last, so a single create's INSERT keeps its
    # column order). Indexed by ``payout_batch_idx`` below, for batched payouts only.
    batch = models.ForeignKey(
        "PayoutBatch",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="payouts",
        db_index=False,
    )

    # Extension: the merchant's own controls (``payouts.services.controls``). The key that
    # created it (an API create; null for the service's own payouts), its approval, and when it
    # is to be sent (null: at once). Held payouts stay ``reserved`` until released.
    created_by_key = models.ForeignKey(
        "merchants.SecretKey",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
        help_text="The API key that created it; it may not approve it",
    )
    approval_status = models.CharField(
        max_length=12,
        choices=PayoutApprovalStatus.choices,
        default=PayoutApprovalStatus.NOT_REQUIRED,
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    approved_by_key = models.ForeignKey(
        "merchants.SecretKey",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
    )
    scheduled_for = models.DateTimeField(
        null=True, blank=True, help_text="Not dispatched before this instant"
    )

    # Extension: the provider or the beneficiary's bank held the transfer for suspected fraud
    # (NIP 34, 35, 63). The payout stays ``ambiguous`` with its reservation untouched until a
    # provider answers success (captured) or finance resolves it with two people.
    fraud_flagged_at = models.DateTimeField(null=True, blank=True)
    fraud_nip_code = models.CharField(
        max_length=4, blank=True, default="", help_text="The NIP code that flagged it"
    )
    # Extension: when the payout went unresolved past PAYOUT_REQUERY_ESCALATE_AFTER (logged once).
    requery_escalated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        permissions = [
            ("requery_payout", "Can requery a payout with the provider"),
            ("export_payouts", "Can export payouts as CSV"),
            ("propose_resolution", "Can propose a manual resolution of an ambiguous payout"),
            ("approve_resolution", "Can approve or reject a proposed payout resolution"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["wallet", "idempotency_key"], name="payout_unique_idempotency_key"
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="payout_amount_gt_0"),
            models.CheckConstraint(condition=Q(fee_amount__gte=0), name="payout_fee_gte_0"),
            models.CheckConstraint(
                condition=Q(total_debit_amount=F("amount") + F("fee_amount")),
                name="payout_total_is_amount_plus_fee",
            ),
            models.CheckConstraint(
                condition=Q(status__in=PayoutStatus.values), name="payout_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(returned_at__isnull=True) | Q(status=PayoutStatus.SUCCESSFUL),
                name="payout_only_successful_returned",
            ),
            models.CheckConstraint(
                condition=Q(approval_status__in=PayoutApprovalStatus.values),
                name="payout_approval_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(approved_at__isnull=True)
                | Q(approval_status=PayoutApprovalStatus.APPROVED),
                name="payout_approved_at_only_approved",
            ),
        ]
        indexes = [
            models.Index(fields=["wallet", "-created_at", "-id"], name="payout_wallet_newest_idx"),
            models.Index(
                fields=["wallet", "status", "-created_at", "-id"], name="payout_wallet_status_idx"
            ),
            models.Index(fields=["wallet", "account_number"], name="payout_wallet_account_idx"),
            # Sweepers: pending payouts only, so the index stays small.
            models.Index(
                fields=["status", "created_at"],
                name="payout_pending_created_idx",
                condition=Q(status__in=["reserved", "processing"]),
            ),
            # Statement matching looks payouts up by the provider's references.
            models.Index(
                fields=["provider_reference"],
                name="payout_provider_reference_idx",
                condition=~Q(provider_reference=""),
            ),
            models.Index(
                fields=["nip_session_id"],
                name="payout_nip_session_idx",
                condition=~Q(nip_session_id=""),
            ),
            models.Index(
                fields=["next_requery_at"],
                name="payout_requery_due_idx",
                condition=Q(status__in=["dispatched", "ambiguous"]),
            ),
            # The finance dashboard's fraud-flagged payouts, never settled automatically.
            models.Index(
                fields=["fraud_flagged_at"],
                name="payout_fraud_flagged_idx",
                condition=Q(fraud_flagged_at__isnull=False, status="ambiguous"),
            ),
            # The payouts of one bulk request (list by batch_id, the batch's status counts).
            models.Index(
                fields=["batch", "-created_at", "-id"],
                name="payout_batch_idx",
                condition=Q(batch__isnull=False),
            ),
            # The approval expiry sweeper: pending approvals only.
            models.Index(
                fields=["created_at"],
                name="payout_approval_pending_idx",
                condition=Q(approval_status="pending"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.internal_reference} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES


class PayoutDailyCount(models.Model):
    """How many of one wallet's payouts created on one day are in one status: what the payout
    list's exact ``total`` is summed from (``payouts.selectors.payout_list_total``), so a page
    of a wallet with millions of payouts never counts them one by one.

    Kept by database triggers on ``payouts_payout`` (migration ``0007``), in the statement that
    inserts, deletes or changes the status of payouts, whoever issues it: services,
    ``bulk_update``, admin, raw SQL; so a count commits or rolls back with the change it
    counts. They append a ``PayoutCountChange`` rather than add to these rows, so no two
    writers ever wait for one another over a count; ``payout_counts_fold`` (beat, every
    ``PAYOUT_COUNTS_FOLD_SECONDS``) folds the changes in, and a total reads both in one
    statement. ``day`` is the payout's
    creation day in Lagos time, UTC+01:00 (``payouts.selectors.count_day``).
    ``manage.py payout_counts`` checks, folds and rebuilds them.
    """

    wallet = models.ForeignKey(
        "wallets.Wallet", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    status = models.CharField(max_length=12, choices=PayoutStatus.choices)
    day = models.DateField()
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            # The fold's upsert target; it also serves every sum (wallet first).
            models.UniqueConstraint(
                fields=["wallet", "status", "day"], name="payout_daily_count_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"wallet {self.wallet_id} {self.day} {self.status}: {self.count}"


class PayoutCountChange(models.Model):
    """A change to one ``PayoutDailyCount`` not folded in yet (PostgreSQL only): appended by
    the triggers, one row per (wallet, status, day) a statement changed, never updated, so
    writers take no lock on a count. ``delta`` may be negative."""

    # No foreign key constraint: the triggers write these rows inside every payout statement
    # and the payout row already holds its wallet's.
    wallet = models.ForeignKey(
        "wallets.Wallet",
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    status = models.CharField(max_length=12, choices=PayoutStatus.choices)
    day = models.DateField()
    delta = models.BigIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["wallet", "status", "day"], name="payout_count_change_idx"),
        ]

    def __str__(self) -> str:
        return f"wallet {self.wallet_id} {self.day} {self.status}: {self.delta:+d}"


class PayoutBatchStatus(models.TextChoices):
    """How a bulk request ended: every item accepted (or a replay of an earlier payout), some,
    or none."""

    ACCEPTED = "accepted", "Accepted"
    PARTIALLY_ACCEPTED = "partially_accepted", "Partially accepted"
    REJECTED = "rejected", "Rejected"


class PayoutBatchItemResult(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    DUPLICATE = "duplicate", "Duplicate"
    REJECTED = "rejected", "Rejected"


class PayoutBatch(models.Model):
    """One bulk payout request (an extension beside docs/spec.md's routes).

    Each accepted item is an ordinary ``Payout`` pointing here, reserved and dispatched exactly
    as a single create's. ``batch_reference`` is the request's idempotency key, unique per
    wallet; ``request_fingerprint`` decides replay or conflict, and ``item_results`` keeps what
    is needed to answer a replay again (per item, in request order: the idempotency key, the
    result, the payout's id, the error). Counts and totals are those of this request: totals
    cover the payouts it created (``accepted``), not the earlier ones it replayed
    (``duplicates``).
    """

    wallet = models.ForeignKey(
        "wallets.Wallet", on_delete=models.PROTECT, related_name="payout_batches", db_index=False
    )
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="payout_batches"
    )
    mode = models.CharField(max_length=4, choices=Mode.choices)
    batch_reference = models.CharField(max_length=100)
    request_fingerprint = models.CharField(
        max_length=64, help_text="SHA-256 of the normalised request"
    )
    atomic = models.BooleanField(default=False)
    currency = models.CharField(max_length=3, default=CURRENCY_NGN)
    status = models.CharField(max_length=18, choices=PayoutBatchStatus.choices)
    total_items = models.PositiveIntegerField()
    accepted_count = models.PositiveIntegerField(default=0)
    duplicate_count = models.PositiveIntegerField(default=0)
    rejected_count = models.PositiveIntegerField(default=0)
    total_amount = MoneyField(default=ZERO)
    total_fee_amount = MoneyField(default=ZERO)
    total_debit_amount = MoneyField(default=ZERO)
    item_results = models.JSONField(
        default=list, blank=True, help_text="Per item, in request order: what was answered"
    )
    created_by = staff_user_field(
        related_name="payout_batches",
        optional=True,
        help_text="The staff user who submitted it in the back office; empty for the API",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["wallet", "batch_reference"], name="payout_batch_unique_reference"
            ),
            models.CheckConstraint(
                condition=Q(status__in=PayoutBatchStatus.values), name="payout_batch_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(
                    total_items=F("accepted_count") + F("duplicate_count") + F("rejected_count")
                ),
                name="payout_batch_counts_add_up",
            ),
            models.CheckConstraint(
                condition=Q(total_debit_amount=F("total_amount") + F("total_fee_amount")),
                name="payout_batch_total_is_amount_plus_fee",
            ),
        ]

    def __str__(self) -> str:
        return f"batch {self.batch_reference} ({self.status}, {self.total_items} items)"


class ResolutionStatus(models.TextChoices):
    SUCCESSFUL = PayoutStatus.SUCCESSFUL.value, PayoutStatus.SUCCESSFUL.label
    FAILED = PayoutStatus.FAILED.value, PayoutStatus.FAILED.label


class PayoutResolution(models.Model):
    """Audit record of a manual resolution of an ambiguous payout by finance staff."""

    payout = models.ForeignKey(Payout, on_delete=models.PROTECT, related_name="resolutions")
    from_status = models.CharField(max_length=12, choices=PayoutStatus.choices)
    to_status = models.CharField(max_length=12, choices=ResolutionStatus.choices)
    reason = models.TextField()
    resolved_by = staff_user_field(related_name="payout_resolutions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(reason=""), name="payout_resolution_reason_required"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.payout.internal_reference}: {self.from_status} → {self.to_status}"


class ResolutionDecision(models.TextChoices):
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class TwoPersonProposal(models.Model):
    """What every proposal that waits for a second person records of its decision.

    A concrete proposal adds ``proposed_by`` and ``decided_by`` (``staff_user_field``: each model
    names its own reverse relations) and lists ``decision_constraints`` in its ``Meta``. An open
    proposal has no decision yet; a decided one has the decision, who decided (never the proposer)
    and when, all three or none.
    """

    decision = models.CharField(
        max_length=10, choices=ResolutionDecision.choices, blank=True, default=""
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True, default="")

    class Meta:
        abstract = True

    @property
    def is_open(self) -> bool:
        return self.decision == ""


def decision_constraints(prefix: str) -> list[models.BaseConstraint]:
    """A ``TwoPersonProposal``'s decision is complete and made by another user than proposed it."""
    return [
        models.CheckConstraint(
            condition=(
                Q(decision="", decided_by__isnull=True, decided_at__isnull=True)
                | Q(
                    decision__in=ResolutionDecision.values,
                    decided_by__isnull=False,
                    decided_at__isnull=False,
                )
            ),
            name=f"{prefix}_decision_complete",
        ),
        models.CheckConstraint(
            condition=~Q(decided_by=F("proposed_by")),
            name=f"{prefix}_decided_by_another_user",
        ),
    ]


class PayoutResolutionProposal(TwoPersonProposal):
    """A proposed manual resolution of an ambiguous payout, waiting for a second person.

    ``reason`` and the evidence are internal: the merchant is never shown them. The payout
    settles only when another user approves (``payouts.services.payout_resolution_approve``).
    An open proposal has no decision yet; a payout has at most one open proposal.
    """

    payout = models.ForeignKey(
        Payout, on_delete=models.PROTECT, related_name="resolution_proposals"
    )
    proposed_status = models.CharField(max_length=12, choices=ResolutionStatus.choices)
    reason = models.TextField(help_text="Internal: what was checked and with whom")
    provider_reference = models.CharField(
        max_length=100, blank=True, default="", help_text="Evidence: the provider's reference"
    )
    nip_session_id = models.CharField(
        max_length=64, blank=True, default="", help_text="Evidence: the NIP session id"
    )
    proposed_by = staff_user_field(related_name="payout_resolution_proposals")
    proposed_at = models.DateTimeField(default=timezone.now)
    decided_by = staff_user_field(related_name="payout_resolution_decisions", optional=True)

    class Meta:
        ordering = ["-proposed_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["payout"],
                condition=Q(decision=""),
                name="one_open_resolution_proposal_per_payout",
            ),
            models.CheckConstraint(
                condition=~Q(reason=""), name="resolution_proposal_reason_required"
            ),
            models.CheckConstraint(
                condition=Q(proposed_status__in=ResolutionStatus.values),
                name="resolution_proposal_status_valid",
            ),
            *decision_constraints("resolution_proposal"),
        ]

    def __str__(self) -> str:
        return f"{self.payout.internal_reference}: proposed {self.proposed_status}"


class PayoutBatchProposal(TwoPersonProposal):
    """A bulk payout uploaded in the back office, waiting for a second person.

    The uploader's checked file becomes this proposal: the merchant and mode, the file's rows
    exactly as uploaded (``rows``, what is submitted) and what the dry run showed of each
    (``preview``: result, account name, bank, amount, fee, total debit, message), the totals of
    the valid rows, and ``fingerprint`` (SHA-256 of merchant, mode, all-or-nothing, batch
    reference and rows: the same file is one open proposal, and an approval submits only rows
    that still match it). Nothing is reserved until a different user approves
    (``payouts.services.bulk_proposals.payout_batch_proposal_approve``), which submits the rows
    through ``payout_batch_create`` and links the resulting ``batch``.
    """

    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="payout_batch_proposals"
    )
    mode = models.CharField(max_length=4, choices=Mode.choices)
    atomic = models.BooleanField(default=False)
    batch_reference = models.CharField(max_length=100)
    file_name = models.CharField(max_length=255, blank=True, default="")
    file_sha256 = models.CharField(max_length=64, blank=True, default="")
    rows = models.JSONField(help_text="The file's rows as uploaded: what approval submits")
    preview = models.JSONField(help_text="Per row, what the uploader's dry run showed")
    payout_count = models.PositiveIntegerField(help_text="Valid rows in the dry run")
    total_amount = MoneyField(default=ZERO)
    total_fee_amount = MoneyField(default=ZERO)
    total_debit_amount = MoneyField(default=ZERO)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of what is submitted")
    proposed_by = staff_user_field(related_name="payout_batch_proposals")
    created_at = models.DateTimeField(default=timezone.now)
    decided_by = staff_user_field(related_name="payout_batch_decisions", optional=True)
    batch = models.ForeignKey(
        PayoutBatch,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="proposals",
        help_text="The bulk payout its approval submitted (or replayed)",
    )

    class Meta:
        verbose_name = "bulk payout proposal"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["fingerprint"],
                condition=Q(decision=""),
                name="one_open_batch_proposal_per_fingerprint",
            ),
            *decision_constraints("batch_proposal"),
            models.CheckConstraint(
                condition=Q(total_debit_amount=F("total_amount") + F("total_fee_amount")),
                name="batch_proposal_total_is_amount_plus_fee",
            ),
        ]

    def __str__(self) -> str:
        return (
            f"bulk payout proposal #{self.pk}: {self.payout_count} payout(s) from "
            f"{self.merchant} ({self.mode})"
        )


# The models of what passes between a payout and its providers live in
# ``payouts.provider_models``; they are read from here like every model of the app.
from payouts.provider_models import (  # noqa: E402, F401
    COULD_SUCCEED_OUTCOMES,
    NO_MONEY_MOVED_OUTCOMES,
    AttemptOutcome,
    CircuitState,
    PayoutAttempt,
    PayoutProviderCircuit,
    PayoutRoute,
    ProviderTransferEventRecord,
    ProviderTransferEventResult,
    SandboxProviderSwitch,
    SandboxSwitchState,
    SandboxTransfer,
)
