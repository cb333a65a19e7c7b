"""Back office for wallets: balances and ledger are read-only; fee schedules and banks are
editable (and audited).

A wallet's status changes only through the "Activate"/"Deactivate" actions: they need
``wallets.change_wallet_status`` and a typed reason, run ``wallet_status_set`` and write an audit
record per wallet."""

from __future__ import annotations

import operator
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups

from audit.backoffice import (
    BackOfficeAdminMixin,
    action_confirmation,
    confirmation_form,
    page_context,
)
from audit.services import audit_record
from core.admin import (
    LocalDateRangeFilter,
    ReadOnlyAdminMixin,
    money_cell,
    money_column,
    name_cell,
    status_column,
    time_column,
)
from core.dates import local_today, local_zone_label
from core.exceptions import ApplicationError
from core.money import format_amount_display
from wallets.fee_tiers import fee_tiers_validate
from wallets.models import (
    Bank,
    FeeSchedule,
    FeeTier,
    FundingTransfer,
    LedgerEntry,
    Wallet,
    WalletStatus,
)
from wallets.services import wallet_status_set
from wallets.statements import (
    StatementBalances,
    StatementMovements,
    StatementMovementTotal,
    StatementRangeError,
    WalletStatement,
    statement_range_validate,
    wallet_statement,
    wallet_statement_csv_response,
)


class WalletStatementForm(forms.Form):
    """The Lagos days of a wallet statement; the rules are ``statement_range_validate``'s."""

    from_date = forms.DateField(
        label="From", widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")
    )
    to_date = forms.DateField(
        label="To",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        help_text="Inclusive; empty means the same day. At most 92 days, not after today.",
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        first_day = cleaned.get("from_date")
        if first_day is None or "to_date" in self.errors:
            return cleaned
        cleaned["to_date"] = cleaned.get("to_date") or first_day
        try:
            statement_range_validate(first_day=first_day, last_day=cleaned["to_date"])
        except StatementRangeError as error:
            self.add_error(error.field_name, error.problem)
        return cleaned


@admin.register(Wallet)
class WalletAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    """Wallets are created with their merchant and never deleted; only the status changes, by
    the actions. The low-balance alert is the merchant's to set (``PUT …/merchant-wallet/alerts``)
    and shows here read-only."""

    list_display = (
        "id",
        "merchant",
        "mode",
        "status_display",
        "available_display",
        "reserved_display",
        "static_account",
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
        "low_balance_threshold",
        "low_balance_alerted",
        "static_account_number",
        "static_bank_name",
        "static_account_name",
        "ledger_link",
        "statement_link",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    actions = ("activate_wallets", "deactivate_wallets")

    @admin.display(description="ledger")
    def ledger_link(self, obj: Wallet) -> str:
        url = reverse("admin:wallets_ledgerentry_changelist") + f"?wallet__id__exact={obj.pk}"
        return format_html('<a href="{}">View ledger entries</a>', url)

    @admin.display(description="statement")
    def statement_link(self, obj: Wallet) -> str:
        url = reverse("admin:wallets_wallet_statement", args=[obj.pk])
        return format_html('<a href="{}">Daily settlement statement</a>', url)

    status_display = status_column("status", "status")

    available_display = money_column("available_balance", "available")

    reserved_display = money_column("reserved_balance", "reserved")

    @admin.display(description="static account", ordering="static_account_number")
    def static_account(self, obj: Wallet) -> SafeString:
        return format_html(
            '{} <span class="quiet">· {}</span>', obj.static_account_number, obj.static_bank_name
        )

    def has_view_statement_permission(self, request: HttpRequest) -> bool:
        """A statement is the ledger summed per day: finance reads it (``view_ledgerentry``);
        seeing a wallet (the security admin, who activates and deactivates wallets) is not
        enough."""
        return self.user_has(request, "wallets.view_ledgerentry")

    def get_fields(self, request: HttpRequest, obj: Wallet | None = None) -> _FieldGroups:
        fields = super().get_fields(request, obj)
        if self.has_view_statement_permission(request):
            return fields
        return [name for name in fields if name not in ("ledger_link", "statement_link")]

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

    # --- Daily settlement statement ------------------------------------------------------------

    def backoffice_pages(self) -> list[tuple[str, Callable[..., HttpResponse], str]]:
        return [
            ("<int:wallet_id>/statement/", self.statement_view, "wallets_wallet_statement"),
        ]

    def statement_view(self, request: HttpRequest, wallet_id: int) -> HttpResponse:
        """The wallet's statement per Lagos day (GET ``from_date``/``to_date``, default
        yesterday); POST downloads the same days as the API's CSV and is audited."""
        if not self.has_view_statement_permission(request):
            raise PermissionDenied("You may not view wallet statements.")
        wallet = get_object_or_404(Wallet.objects.select_related("merchant"), pk=wallet_id)
        yesterday = local_today() - timedelta(days=1)
        if request.method == "POST":
            data: Any = request.POST
        else:
            data = request.GET if "from_date" in request.GET else None
        form = WalletStatementForm(data, initial={"from_date": yesterday, "to_date": yesterday})
        statement: WalletStatement | None = None
        if not form.is_bound:
            statement = wallet_statement(wallet=wallet, first_day=yesterday, last_day=yesterday)
        elif form.is_valid():
            statement = wallet_statement(
                wallet=wallet,
                first_day=form.cleaned_data["from_date"],
                last_day=form.cleaned_data["to_date"],
            )
        if statement is not None and request.method == "POST":
            audit_record(
                actor=request.user,
                action=self.audit_action("statement_export"),
                obj=wallet,
                after={
                    "mode": wallet.mode,
                    "from_date": statement.first_day,
                    "to_date": statement.last_day,
                    "days": len(statement.days),
                },
                request=request,
            )
            return wallet_statement_csv_response(statement=statement)
        context = {
            **page_context(self, request, f"Statement of {wallet}"),
            "wallet": wallet,
            "form": form,
            "statement": statement,
            "rows": _statement_rows(statement) if statement is not None else [],
            "zone_label": local_zone_label(),
            "change_url": reverse("admin:wallets_wallet_change", args=[wallet.pk]),
        }
        return TemplateResponse(request, "admin/wallets/wallet/statement.html", context)


def _movement_cell(total: StatementMovementTotal, currency: str) -> SafeString:
    entries = "entry" if total.count == 1 else "entries"
    return format_html(
        '{}<span class="money zone-note">{} {}</span>',
        money_cell(total.amount, currency),
        total.count,
        entries,
    )


def _statement_row(
    label: str,
    opening: StatementBalances,
    totals: StatementMovements,
    closing: StatementBalances,
    currency: str,
) -> dict[str, Any]:
    return {
        "label": label,
        "cells": [
            money_cell(opening.available, currency),
            money_cell(opening.reserved, currency),
            money_cell(opening.total, currency),
            _movement_cell(totals.fundings, currency),
            _movement_cell(totals.payouts_reserved, currency),
            _movement_cell(totals.payouts_captured, currency),
            money_cell(totals.payouts_captured.fee_amount, currency),
            _movement_cell(totals.releases, currency),
            _movement_cell(totals.returns, currency),
            _movement_cell(totals.settlements, currency),
            _movement_cell(totals.refunds, currency),
            _movement_cell(totals.refund_reversals, currency),
            _movement_cell(totals.subaccount_shares, currency),
            money_cell(closing.available, currency),
            money_cell(closing.reserved, currency),
            money_cell(closing.total, currency),
        ],
    }


def _statement_rows(statement: WalletStatement) -> list[dict[str, Any]]:
    """The page's table: one row per Lagos day, then the totals (amounts as ``money_cell``)."""
    currency = statement.currency
    rows = [
        _statement_row(day.date.isoformat(), day.opening, day.totals, day.closing, currency)
        for day in statement.days
    ]
    rows.append(
        _statement_row("Total", statement.opening, statement.totals, statement.closing, currency)
    )
    return rows


def wallet_cell(wallet: Wallet) -> SafeString:
    """A wallet in a list, compactly: its merchant's name and a ``test``/``live`` tag."""
    return name_cell(wallet.merchant.name, wallet.mode)


_wallet_currency = operator.attrgetter("wallet.currency")


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    # Fits 1400 px (tests/payouts/test_admin_browser.py); id, reserved Δ, payout id and the
    # description are on the change page.
    list_display = (
        "created_display",
        "wallet_display",
        "entry_type",
        "amount_display",
        "fee_display",
        "available_delta_display",
        "available_after_display",
        "reserved_after_display",
        "reference",
    )
    list_filter = ("entry_type", "wallet__mode", ("created_at", LocalDateRangeFilter))
    search_fields = ("=reference",)
    date_hierarchy = "created_at"
    list_select_related = ("wallet__merchant",)
    show_full_result_count = False

    created_display = time_column("created_at", "created")

    @admin.display(description="wallet", ordering="wallet__merchant__name")
    def wallet_display(self, obj: LedgerEntry) -> SafeString:
        return wallet_cell(obj.wallet)

    amount_display = money_column("amount", "amount", currency=_wallet_currency)

    fee_display = money_column("fee_amount", "fee", currency=_wallet_currency)

    available_delta_display = money_column(
        "available_delta", "available Δ", currency=_wallet_currency
    )

    available_after_display = money_column(
        "available_balance_after", "available after", currency=_wallet_currency
    )

    reserved_after_display = money_column(
        "reserved_balance_after", "reserved after", currency=_wallet_currency
    )

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return [field.name for field in LedgerEntry._meta.fields]


@admin.register(FundingTransfer)
class FundingTransferAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = (
        "created_display",
        "provider_reference",
        "wallet_display",
        "amount_display",
        "source",
        "sender_account_name",
    )
    list_display_links = ("provider_reference",)
    list_filter = ("source", "wallet__mode", ("created_at", LocalDateRangeFilter))
    search_fields = ("=provider_reference", "receiving_account_number")
    list_select_related = ("wallet__merchant",)

    created_display = time_column("created_at", "created")

    @admin.display(description="wallet", ordering="wallet__merchant__name")
    def wallet_display(self, obj: FundingTransfer) -> SafeString:
        return wallet_cell(obj.wallet)

    amount_display = money_column("amount", "amount")

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

    @admin.display(description="tiers (amount: fee)")
    def tier_summary(self, obj: FeeSchedule) -> SafeString:
        """One line per tier: ``₦0.01 – ₦1,000.00: ₦5.00``, the last ``₦1,000.01 and above``."""
        return format_html_join(
            mark_safe("<br>"),
            "{}: {}",
            (
                (
                    f"{format_amount_display(tier.min_amount, obj.currency)} – "
                    f"{format_amount_display(tier.max_amount, obj.currency)}"
                    if tier.max_amount is not None
                    else f"{format_amount_display(tier.min_amount, obj.currency)} and above",
                    format_amount_display(tier.fee_amount, obj.currency),
                )
                for tier in obj.tiers.all()
            ),
        )

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
