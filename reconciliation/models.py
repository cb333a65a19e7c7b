"""Reconciliation: a provider's or bank's statement compared, line by line, with our payouts.

Each imported statement file is one ``ReconciliationRun`` (idempotent on the file's SHA-256).
Every statement line becomes a ``ReconciliationItem`` with its raw text and a category; so does
every payout of ours that the statement should list for its period but does not. Items that are
not ``matched`` are the exceptions finance works through: each is cleared with a note, or, where
the statement proves an ambiguous payout's outcome, turned into a proposed manual resolution
(``payouts.PayoutResolutionProposal``) that another person approves.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from core.fields import MoneyField
from core.models import staff_user_field
from merchants.models import Mode


class StatementFormat(models.TextChoices):
    PAYSTACK_TRANSFERS = "paystack_transfers", "Paystack transfers export (CSV)"
    NIP_SETTLEMENT = "nip_settlement", "NIP settlement report (CSV)"


class StatementStatus(models.TextChoices):
    """A statement line's status, normalised from the format's own words or codes."""

    SUCCESSFUL = "successful", "Successful"
    FAILED = "failed", "Failed"
    PENDING = "pending", "Pending"


class MatchCategory(models.TextChoices):
    MATCHED = "matched", "Matched"
    AMOUNT_MISMATCH = "amount_mismatch", "Amount mismatch"
    STATUS_MISMATCH = "status_mismatch", "Status mismatch"
    NOT_OURS = "not_ours", "On the statement, not ours"
    MISSING = "missing", "Ours, not on the statement"
    DUPLICATE = "duplicate", "On the statement twice"


EXCEPTION_CATEGORIES: tuple[str, ...] = tuple(
    category for category in MatchCategory.values if category != MatchCategory.MATCHED
)


class ReconciliationRun(models.Model):
    """One imported statement file and the outcome of matching it."""

    statement_format = models.CharField(max_length=30, choices=StatementFormat.choices)
    mode = models.CharField(max_length=4, choices=Mode.choices)
    file_name = models.CharField(max_length=255)
    # Unique among the runs not voided (constraint below): a voided file may be imported again.
    file_sha256 = models.CharField(max_length=64, db_index=True, editable=False)
    period_start = models.DateField(help_text="First statement day (Lagos)")
    period_end = models.DateField(help_text="Last statement day (Lagos)")
    line_count = models.PositiveIntegerField(default=0)
    category_counts = models.JSONField(default=dict, blank=True)
    imported_by = staff_user_field(
        related_name="+",
        optional=True,
        help_text="Empty when imported by the management command",
    )
    imported_via = models.CharField(max_length=20, default="admin")
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    # Voiding takes a run imported by mistake (the wrong mode, the wrong file) out of the
    # exceptions queue and the dashboard; its lines stay, for the record.
    voided_at = models.DateTimeField(null=True, blank=True)
    voided_by = staff_user_field(related_name="+", optional=True)
    void_reason = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "statement import"
        permissions = [
            ("import_statement", "Can import a provider or bank statement"),
            ("clear_exception", "Can clear a reconciliation exception with a note"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(period_end__gte=models.F("period_start")),
                name="reconciliation_run_period_ordered",
            ),
            models.UniqueConstraint(
                fields=["file_sha256"],
                condition=Q(voided_at__isnull=True),
                name="reconciliation_run_file_once_unless_voided",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.file_name} ({self.period_start}–{self.period_end})"

    @property
    def is_voided(self) -> bool:
        return self.voided_at is not None

    @property
    def exception_count(self) -> int:
        return sum(
            count
            for category, count in self.category_counts.items()
            if category != MatchCategory.MATCHED
        )


class ReconciliationItem(models.Model):
    """A statement line and what it matched, or a payout of ours the statement lacks.

    ``raw`` is the line exactly as read (header → cell); empty for ``missing`` items. The
    ``statement_*`` fields are the line's values after the format's mapping.
    """

    run = models.ForeignKey(ReconciliationRun, on_delete=models.PROTECT, related_name="items")
    line_number = models.PositiveIntegerField(null=True, blank=True)
    raw = models.JSONField(default=dict, blank=True)
    category = models.CharField(max_length=20, choices=MatchCategory.choices)
    detail = models.CharField(max_length=255, blank=True, default="")

    statement_reference = models.CharField(max_length=100, blank=True, default="")
    statement_provider_reference = models.CharField(max_length=100, blank=True, default="")
    statement_session_id = models.CharField(max_length=64, blank=True, default="")
    statement_amount = MoneyField(null=True, blank=True)
    statement_status = models.CharField(
        max_length=12, choices=StatementStatus.choices, blank=True, default=""
    )
    statement_status_raw = models.CharField(max_length=50, blank=True, default="")
    statement_at = models.DateTimeField(null=True, blank=True)
    statement_account_number = models.CharField(max_length=20, blank=True, default="")
    statement_bank = models.CharField(max_length=150, blank=True, default="")

    payout = models.ForeignKey(
        "payouts.Payout",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="reconciliation_items",
    )
    matched_by = models.CharField(max_length=20, blank=True, default="")
    # What our record said when the line was compared (the payout may change later).
    our_amount = MoneyField(null=True, blank=True)
    our_status = models.CharField(max_length=12, blank=True, default="")

    cleared_at = models.DateTimeField(null=True, blank=True)
    cleared_by = staff_user_field(related_name="+", optional=True)
    clear_note = models.TextField(blank=True, default="")
    resolution_proposal = models.ForeignKey(
        "payouts.PayoutResolutionProposal",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="reconciliation_items",
    )

    class Meta:
        ordering = ["run", "line_number", "id"]
        verbose_name = "reconciliation line"
        indexes = [
            models.Index(fields=["run", "category"], name="recon_item_run_category_idx"),
            models.Index(
                fields=["category", "cleared_at"],
                name="recon_item_open_idx",
                condition=~Q(category="matched"),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(category__in=MatchCategory.values),
                name="recon_item_category_valid",
            ),
            models.CheckConstraint(
                condition=Q(cleared_at__isnull=True)
                | (Q(cleared_by__isnull=False) & ~Q(clear_note="")),
                name="recon_item_cleared_with_note",
            ),
        ]

    def __str__(self) -> str:
        where = f"line {self.line_number}" if self.line_number else "not on the statement"
        return f"run #{self.run_id} {where}: {self.get_category_display()}"
