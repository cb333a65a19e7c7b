"""Back office for wallets: balances and ledger are read-only; fee schedules and banks are
editable (and audited).

A wallet's status changes only through the "Activate"/"Deactivate" actions: they need
``wallets.change_wallet_status`` and a typed reason, run ``wallet_status_set`` and write an audit
record per wallet."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html

from audit.backoffice import BackOfficeAdminMixin, action_confirmation, confirmation_form
from audit.services import audit_record
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
class WalletAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    """Wallets are created with their merchant and never deleted; only the status changes, by
    the actions."""

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
    readonly_fields = fields
    actions = ("activate_wallets", "deactivate_wallets")

    @admin.display(description="ledger")
    def ledger_link(self, obj: Wallet) -> str:
        url = reverse("admin:wallets_ledgerentry_changelist") + f"?wallet__id__exact={obj.pk}"
        return format_html('<a href="{}">View ledger entries</a>', url)

    def has_change_wallet_status_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "wallets.change_wallet_status")

    def _set_status(
        self, request: HttpRequest, queryset: QuerySet[Wallet], *, status: str, action_name: str
    ) -> HttpResponse | None:
        form = confirmation_form(request)
        if not form.is_bound or not form.is_valid():
            verb = "Reactivate" if status == WalletStatus.ACTIVE else "Deactivate"
            effect = (
                "they accept payouts again"
                if status == WalletStatus.ACTIVE
                else "new payouts from them are refused; balances are untouched"
            )
            return action_confirmation(
                request,
                model_admin=self,
                queryset=queryset.select_related("merchant"),
                action_name=action_name,
                title=f"{verb} wallets",
                intro=f"The wallets below will be set to {status}: {effect}.",
                submit_label=f"{verb} wallets",
                form=form,
            )
        changed = 0
        for wallet in queryset.order_by("pk"):
            with transaction.atomic():
                updated = wallet_status_set(wallet_id=wallet.pk, status=status)
                audit_record(
                    actor=request.user,
                    action=self.audit_action("status_set"),
                    obj=updated,
                    before={"status": wallet.status},
                    after={"status": updated.status},
                    reason=form.cleaned_data["reason"],
                    request=request,
                )
            changed += wallet.status != updated.status
        self.message_user(request, f"{changed} wallet(s) set to {status}.", level=messages.SUCCESS)
        return None

    @admin.action(description="Reactivate selected wallets…", permissions=["change_wallet_status"])
    def activate_wallets(
        self, request: HttpRequest, queryset: QuerySet[Wallet]
    ) -> HttpResponse | None:
        return self._set_status(
            request, queryset, status=WalletStatus.ACTIVE, action_name="activate_wallets"
        )

    @admin.action(description="Deactivate selected wallets…", permissions=["change_wallet_status"])
    def deactivate_wallets(
        self, request: HttpRequest, queryset: QuerySet[Wallet]
    ) -> HttpResponse | None:
        return self._set_status(
            request, queryset, status=WalletStatus.INACTIVE, action_name="deactivate_wallets"
        )


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
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
class FundingTransferAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
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
class FeeScheduleAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
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
class BankAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("name", "bank_code", "institution_code", "is_active", "updated_at")
    list_editable = ("is_active",)
    list_filter = ("is_active",)
    search_fields = ("name", "bank_code", "institution_code")
    ordering = ("name",)
