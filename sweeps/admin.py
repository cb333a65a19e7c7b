"""Back office for sweeps: read-only. Merchants set their schedules and settlement accounts
through the API; account numbers are shown masked to their last four digits."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from audit.backoffice import BackOfficeAdminMixin
from core.admin import (
    LocalDateRangeFilter,
    ReadOnlyAdminMixin,
    bank_account_cell,
    merchant_column,
    money_column,
    status_badge,
    time_column,
)
from sweeps.models import SettlementAccount, Sweep, SweepSchedule, account_number_masked


@admin.register(SettlementAccount)
class SettlementAccountAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = (
        "created_display",
        "merchant_display",
        "mode",
        "account_display",
        "effective_display",
        "state_display",
    )
    list_filter = ("mode", ("merchant", admin.RelatedOnlyFieldListFilter))
    search_fields = ("account_name", "merchant__name")
    search_help_text = "Account name or merchant name."
    list_select_related = ("merchant", "bank")
    list_per_page = 50
    ordering = ("-id",)
    fields = (
        "merchant",
        "mode",
        "bank",
        "masked_account_number",
        "account_name",
        "effective_at",
        "superseded_at",
        "name_enquiry_reference",
        "created_at",
    )
    readonly_fields = fields

    created_display = time_column("created_at", "created")

    merchant_display = merchant_column()

    @admin.display(description="account number")
    def masked_account_number(self, obj: SettlementAccount) -> str:
        return account_number_masked(obj.account_number)

    @admin.display(description="account", ordering="account_name")
    def account_display(self, obj: SettlementAccount) -> SafeString:
        return bank_account_cell(
            obj.account_name, obj.bank.name, account_number_masked(obj.account_number)
        )

    effective_display = time_column("effective_at", "effective")

    @admin.display(description="state")
    def state_display(self, obj: SettlementAccount) -> SafeString:
        now = timezone.now()
        if obj.in_effect_at(now):
            return status_badge("successful", "in effect")
        if obj.superseded_at is not None and obj.superseded_at <= now:
            return status_badge("cancelled", "replaced")
        return status_badge("pending", "cooling off")


@admin.register(SweepSchedule)
class SweepScheduleAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("wallet", "schedule", "weekday", "time", "keep_display", "updated_display")
    list_filter = ("schedule", "wallet__mode")
    search_fields = ("wallet__merchant__name",)
    search_help_text = "Merchant name."
    list_select_related = ("wallet__merchant",)
    list_per_page = 50
    ordering = ("-updated_at",)
    fields = ("wallet", "schedule", "time", "weekday", "amount_to_keep", "created_at", "updated_at")
    readonly_fields = fields

    keep_display = money_column("amount_to_keep", "amount to keep")
    updated_display = time_column("updated_at", "updated")


@admin.register(Sweep)
class SweepAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("sweep_date", "wallet", "trigger", "amount_display", "payout_link")
    list_filter = ("trigger", "wallet__mode", ("created_at", LocalDateRangeFilter))
    search_fields = ("wallet__merchant__name", "=payout__internal_reference")
    search_help_text = "Merchant name or payout reference (exact)."
    list_select_related = ("wallet__merchant", "payout")
    list_per_page = 50
    ordering = ("-sweep_date", "-id")
    fields = (
        "wallet",
        "sweep_date",
        "trigger",
        "settlement_account",
        "amount",
        "amount_to_keep",
        "payout_link",
        "created_at",
    )
    readonly_fields = fields

    amount_display = money_column("amount", "amount")

    @admin.display(description="payout")
    def payout_link(self, obj: Sweep) -> SafeString:
        url = reverse("admin:payouts_payout_change", args=[obj.payout_id])
        return format_html(
            '<a href="{}">{}</a> {}',
            url,
            obj.payout.internal_reference,
            status_badge(obj.payout.status),
        )
