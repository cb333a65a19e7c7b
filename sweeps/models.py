"""Sweeps to the merchant's own bank: the settlement account (with its cooling-off period), the
sweep schedule of each wallet, and one record per sweep made.

A settlement account is never edited. Setting a new one inserts a row that takes effect at
``effective_at`` (now + ``SWEEP_ACCOUNT_COOLING_OFF_HOURS``) and marks the row it replaces with
``superseded_at``; so at any instant ``t`` the account in effect is the row with
``effective_at <= t`` and no ``superseded_at`` at or before ``t``, and the rows are the history
of every account a merchant set (a pending account replaced before it took effect has
``superseded_at < effective_at``: it was never in effect).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.db import models
from django.db.models import Q

from core.fields import MoneyField
from core.models import TimeStampedModel
from merchants.models import Merchant, Mode

ZERO = Decimal("0.00")


def account_number_masked(account_number: str) -> str:
    """``******6789``: what events, audit records and the back office show of an account."""
    return "*" * max(len(account_number) - 4, 0) + account_number[-4:]


class SettlementAccount(models.Model):
    """A bank account of the merchant's own, resolved by name enquiry, that sweeps pay into
    from ``effective_at`` on (one merchant, one mode)."""

    merchant = models.ForeignKey(
        Merchant, on_delete=models.PROTECT, related_name="settlement_accounts"
    )
    mode = models.CharField(max_length=4, choices=Mode.choices)
    bank = models.ForeignKey("wallets.Bank", on_delete=models.PROTECT, related_name="+")
    account_number = models.CharField(max_length=10)
    account_name = models.CharField(
        max_length=200, help_text="As resolved by name enquiry when the account was set"
    )
    effective_at = models.DateTimeField(
        help_text="Sweeps pay into this account from this instant (the cooling-off period's end)"
    )
    superseded_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="From this instant a later account replaced it (before effective_at: it "
        "never took effect)",
    )
    name_enquiry_reference = models.CharField(max_length=40, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(
                fields=["merchant", "mode", "-effective_at"],
                condition=Q(superseded_at__isnull=True),
                name="settlement_account_open_idx",
            )
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(account_number__regex=r"^[0-9]{10}$"),
                name="settlement_account_number_10_digits",
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.account_name} · {self.bank.name} · {account_number_masked(self.account_number)}"
        )

    def in_effect_at(self, at: datetime) -> bool:
        return self.effective_at <= at and (self.superseded_at is None or self.superseded_at > at)


class SweepScheduleKind(models.TextChoices):
    DAILY = "daily", "Daily"
    WEEKLY = "weekly", "Weekly"
    MANUAL = "manual", "Manual"


class Weekday(models.TextChoices):
    """In ``date.weekday()`` order: Monday is 0."""

    MONDAY = "monday", "Monday"
    TUESDAY = "tuesday", "Tuesday"
    WEDNESDAY = "wednesday", "Wednesday"
    THURSDAY = "thursday", "Thursday"
    FRIDAY = "friday", "Friday"
    SATURDAY = "saturday", "Saturday"
    SUNDAY = "sunday", "Sunday"

    @classmethod
    def of_index(cls, index: int) -> Weekday:
        return list(cls)[index]


class SweepSchedule(TimeStampedModel):
    """When a wallet's balance above ``amount_to_keep`` is swept to the settlement account:
    ``daily`` at ``time`` (Lagos), ``weekly`` on ``weekday`` at ``time``, or only when the
    merchant asks (``manual``)."""

    wallet = models.OneToOneField(
        "wallets.Wallet", on_delete=models.PROTECT, related_name="sweep_schedule"
    )
    schedule = models.CharField(max_length=6, choices=SweepScheduleKind.choices)
    time = models.TimeField(null=True, blank=True, help_text="Africa/Lagos clock time")
    weekday = models.CharField(max_length=9, choices=Weekday.choices, null=True, blank=True)
    amount_to_keep = MoneyField(default=ZERO)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(amount_to_keep__gte=0), name="sweep_amount_to_keep_gte_0"
            ),
            models.CheckConstraint(
                condition=Q(schedule="manual")
                | (Q(schedule="daily") & Q(time__isnull=False) & Q(weekday__isnull=True))
                | (Q(schedule="weekly") & Q(time__isnull=False) & Q(weekday__isnull=False)),
                name="sweep_schedule_fields_match_kind",
            ),
        ]

    def __str__(self) -> str:
        if self.schedule == SweepScheduleKind.MANUAL:
            return f"wallet {self.wallet_id}: manual"
        day = f" {self.weekday}" if self.weekday else ""
        return f"wallet {self.wallet_id}: {self.schedule}{day} at {self.time:%H:%M}"


class SweepTrigger(models.TextChoices):
    SCHEDULE = "schedule", "Schedule"
    MANUAL = "manual", "Manual"


class Sweep(models.Model):
    """One sweep: the ordinary payout that took the wallet's balance above the amount kept to
    the settlement account on one Lagos day. At most one per wallet per day, whatever runs it."""

    wallet = models.ForeignKey("wallets.Wallet", on_delete=models.PROTECT, related_name="sweeps")
    sweep_date = models.DateField(help_text="Africa/Lagos day")
    trigger = models.CharField(max_length=8, choices=SweepTrigger.choices)
    settlement_account = models.ForeignKey(
        SettlementAccount, on_delete=models.PROTECT, related_name="sweeps"
    )
    amount = MoneyField(help_text="The payout's amount (its fee comes on top)")
    amount_to_keep = MoneyField(help_text="The amount kept in the wallet when it was made")
    payout = models.OneToOneField("payouts.Payout", on_delete=models.PROTECT, related_name="sweep")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-sweep_date", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["wallet", "sweep_date"], name="one_sweep_per_wallet_day"
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="sweep_amount_gt_0"),
        ]

    def __str__(self) -> str:
        return f"sweep of wallet {self.wallet_id} on {self.sweep_date}: {self.amount}"
