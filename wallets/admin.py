"""Back office for wallets: balances and ledger are read-only; status changes go through the
service; fee schedules and banks are editable."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from core.admin import ReadOnlyAdminMixin
from core.exceptions import ApplicationError
from wallets.models import (
    Bank,
    FeeSchedule,
    FeeTier,
    FundingTransfer,
    LedgerEntry,
    Wallet,
    WalletStatus,
)
from wallets.services import fee_tiers_validate, wallet_status_set


@admin.register(Wallet)
class WalletAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Wallets are created with their merchant and never deleted; only the status changes."""

    allow_change = True
    list_display = (
        "id",
        "merchant",
        "mode",
        "status",
        "currency",
        "available_balance",
        "reserved_balance",
        "static_account_number",
        "static_bank_name",
    )
    list_filter = ("mode", "status")
    search_fields = ("merchant__name", "static_account_number", "static_account_name")
    list_select_related = ("merchant",)
    fields = (
        "merchant",
        "mode",
        "currency",
        "status",
        "available_balance",
        "reserved_balance",
        "static_account_number",
        "static_bank_name",
        "static_account_name",
        "ledger_link",
        "created_at",
        "updated_at",
    )
    readonly_fields = tuple(name for name in fields if name != "status")
    actions = ("activate_wallets", "deactivate_wallets")

    @admin.display(description="ledger")
    def ledger_link(self, obj: Wallet) -> str:
        url = reverse("admin:wallets_ledgerentry_changelist") + f"?wallet__id__exact={obj.pk}"
        return format_html('<a href="{}">View ledger entries</a>', url)

    def save_model(self, request: HttpRequest, obj: Wallet, form: ModelForm, change: bool) -> None:
        # Only the status is editable, and it changes through the service under the row lock.
        wallet_status_set(wallet_id=obj.pk, status=form.cleaned_data["status"])

    def _set_status(self, request: HttpRequest, queryset: QuerySet[Wallet], status: str) -> None:
        for wallet_id in queryset.values_list("pk", flat=True):
            wallet_status_set(wallet_id=wallet_id, status=status)
        self.message_user(request, f"{queryset.count()} wallet(s) set to {status}.")

    @admin.action(description="Activate selected wallets")
    def activate_wallets(self, request: HttpRequest, queryset: QuerySet[Wallet]) -> None:
        self._set_status(request, queryset, WalletStatus.ACTIVE)

    @admin.action(description="Deactivate selected wallets")
    def deactivate_wallets(self, request: HttpRequest, queryset: QuerySet[Wallet]) -> None:
        self._set_status(request, queryset, WalletStatus.INACTIVE)


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "id",
        "created_at",
        "wallet",
        "entry_type",
        "amount",
        "fee_amount",
        "available_delta",
        "reserved_delta",
        "available_balance_after",
        "reserved_balance_after",
        "reference",
        "payout_id",
    )
    list_filter = ("entry_type", "wallet__mode", ("created_at", admin.DateFieldListFilter))
    search_fields = ("=reference",)
    date_hierarchy = "created_at"
    list_select_related = ("wallet__merchant",)
    show_full_result_count = False

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return [field.name for field in LedgerEntry._meta.fields]


@admin.register(FundingTransfer)
class FundingTransferAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "provider_reference",
        "wallet",
        "amount",
        "currency",
        "source",
        "sender_account_name",
        "created_at",
    )
    list_filter = ("source", "wallet__mode")
    search_fields = ("=provider_reference", "receiving_account_number")
    list_select_related = ("wallet__merchant",)

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return [field.name for field in FundingTransfer._meta.fields]


class FeeTierFormSet(BaseInlineFormSet):
    """The tiers kept by the form (not marked for deletion) must pass ``fee_tiers_validate``."""

    def clean(self) -> None:
        super().clean()
        tiers: list[tuple[Decimal, Decimal | None]] = []
        for form in self.forms:
            data: dict[str, Any] = getattr(form, "cleaned_data", {}) or {}
            if not data or data.get("DELETE"):
                continue
            tiers.append((data["min_amount"], data.get("max_amount")))
        try:
            fee_tiers_validate(tiers=tiers)
        except ApplicationError as error:
            raise ValidationError(error.message) from error


class FeeTierInline(admin.TabularInline):
    model = FeeTier
    formset = FeeTierFormSet
    extra = 0
    fields = ("min_amount", "max_amount", "fee_amount")


@admin.register(FeeSchedule)
class FeeScheduleAdmin(admin.ModelAdmin):
    list_display = ("name", "currency", "effective_from", "tier_summary", "created_at")
    list_filter = ("currency",)
    inlines = (FeeTierInline,)
    ordering = ("-effective_from",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[FeeSchedule]:
        return super().get_queryset(request).prefetch_related("tiers")

    @admin.display(description="tiers")
    def tier_summary(self, obj: FeeSchedule) -> str:
        return "; ".join(str(tier) for tier in obj.tiers.all())

    def save_model(
        self, request: HttpRequest, obj: FeeSchedule, form: ModelForm, change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        self.message_user(
            request,
            "Quotes and payouts use the schedule with the latest effective date that has "
            "started; add a new schedule rather than editing one already in use.",
            level=messages.INFO,
        )


@admin.register(Bank)
class BankAdmin(admin.ModelAdmin):
    list_display = ("name", "bank_code", "institution_code", "is_active", "updated_at")
    list_editable = ("is_active",)
    list_filter = ("is_active",)
    search_fields = ("name", "bank_code", "institution_code")
    ordering = ("name",)
