"""Back office for finance staff: payouts are read-only; state changes go through services.

* list with filters (status, mode, merchant, bank, date) and search (internal reference, account
  number, account name);
* the change page shows the payout's ledger entries, provider answers and resolutions;
* actions: requery selected, export CSV, resolve an ambiguous payout (a form asking for the
  outcome and a written reason; needs the ``payouts.resolve_payout`` permission).
"""

from __future__ import annotations

import csv
import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from core.admin import ReadOnlyAdminMixin
from core.exceptions import ApplicationError
from core.money import format_amount
from payouts.models import (
    FINAL_STATUSES,
    Payout,
    PayoutResolution,
    PayoutStatus,
    ResolutionStatus,
    SandboxTransfer,
)
from payouts.services import (
    RESOLUTION_REASON_MIN_LENGTH,
    payout_requery,
    payout_resolve_manually,
)
from wallets.models import Bank, LedgerEntry

REQUERY_ACTION_LIMIT = 200
CSV_COLUMNS = (
    "id",
    "internal_reference",
    "merchant_id",
    "merchant_name",
    "mode",
    "status",
    "currency",
    "amount",
    "fee_amount",
    "total_debit_amount",
    "bank_code",
    "bank_name",
    "account_number",
    "account_name",
    "narration",
    "error_message",
    "provider_name",
    "provider_reference",
    "created_at",
    "completed_at",
)


def csv_safe(value: Any) -> str:
    """Spreadsheet-safe text: a leading formula character is neutralised."""
    text = "" if value is None else str(value)
    if text and text[0] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


class BankFilter(admin.SimpleListFilter):
    title = "bank"
    parameter_name = "bank_code"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(bank.bank_code, bank.name) for bank in Bank.objects.order_by("name")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Payout]) -> QuerySet[Payout]:
        if self.value():
            return queryset.filter(bank_code=self.value())
        return queryset


class PayoutResolutionInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = PayoutResolution
    allow_delete = True
    extra = 0
    can_delete = False
    fields = ("created_at", "resolved_by", "from_status", "to_status", "reason")
    readonly_fields = fields
    verbose_name_plural = "manual resolutions (audit log)"


class PayoutResolveForm(forms.Form):
    to_status = forms.ChoiceField(
        label="Resolve as",
        choices=ResolutionStatus.choices,
        widget=forms.RadioSelect,
        help_text="successful captures the reserved funds; failed returns them to the merchant",
    )
    reason = forms.CharField(
        label="Reason",
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        min_length=RESOLUTION_REASON_MIN_LENGTH,
        strip=True,
        help_text="What was checked and with whom (kept in the audit log).",
    )


@admin.register(Payout)
class PayoutAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    allow_change = True  # the change page hosts the requery and resolution actions
    list_display = (
        "internal_reference",
        "merchant",
        "mode",
        "status",
        "amount",
        "fee_amount",
        "total_debit_amount",
        "bank_name",
        "account_number",
        "account_name",
        "created_at",
        "completed_at",
    )
    list_filter = (
        "status",
        "mode",
        ("merchant", admin.RelatedOnlyFieldListFilter),
        BankFilter,
        ("created_at", admin.DateFieldListFilter),
    )
    search_fields = ("=internal_reference", "=account_number", "account_name")
    search_help_text = "Internal reference or account number (exact), or account name."
    list_select_related = ("merchant",)
    list_per_page = 50
    show_full_result_count = False
    ordering = ("-created_at", "-id")
    actions = ("requery_selected", "export_csv", "resolve_selected")
    inlines = (PayoutResolutionInline,)
    fieldsets = (
        (
            None,
            {
                "fields": (
                    "internal_reference",
                    "status",
                    "resolve_link",
                    "merchant",
                    "mode",
                    "wallet",
                    "idempotency_key",
                    "error_message",
                )
            },
        ),
        (
            "Money",
            {"fields": ("currency", "amount", "fee_amount", "total_debit_amount")},
        ),
        (
            "Beneficiary",
            {"fields": ("account_number", "account_name", "bank_code", "bank_name", "narration")},
        ),
        ("Ledger entries", {"fields": ("ledger_entries_table",)}),
        (
            "Provider",
            {
                "fields": (
                    "provider_name",
                    "provider_reference",
                    "dispatch_attempts",
                    "dispatch_claimed_at",
                    "dispatched_at",
                    "ambiguous_since",
                    "requery_count",
                    "next_requery_at",
                    "provider_responses_pretty",
                )
            },
        ),
        ("Timestamps", {"fields": ("created_at", "updated_at", "completed_at")}),
    )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        names: list[str] = []
        for _title, options in self.fieldsets:
            names.extend(options["fields"])
        return names

    def save_model(self, request: HttpRequest, obj: Payout, form: Any, change: bool) -> None:
        """Never writes: a stale admin copy must not overwrite the worker's state changes.
        Payouts change only through services (requery, resolution)."""

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Resolutions are created by the resolution service only."""

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra_context = {
            **(extra_context or {}),
            "show_save": False,
            "show_save_and_continue": False,
            "show_save_and_add_another": False,
            "show_delete": False,
        }
        return super().change_view(request, object_id, form_url, extra_context)

    # --- Read-only displays -----------------------------------------------------------------

    @admin.display(description="ledger entries")
    def ledger_entries_table(self, obj: Payout) -> str:
        entries = LedgerEntry.objects.filter(payout_id=obj.pk).order_by("id")
        if not entries:
            return "—"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td>{}</td><td>{}</td></tr>",
            (
                (
                    entry.pk,
                    timezone.localtime(entry.created_at).strftime("%Y-%m-%d %H:%M:%S"),
                    entry.entry_type,
                    format_amount(entry.amount),
                    format_amount(entry.fee_amount),
                    format_amount(entry.available_delta),
                    format_amount(entry.reserved_delta),
                    entry.reference,
                )
                for entry in entries
            ),
        )
        return format_html(
            "<table><thead><tr><th>id</th><th>at</th><th>type</th><th>amount</th><th>fee</th>"
            "<th>available Δ</th><th>reserved Δ</th><th>reference</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )

    @admin.display(description="provider responses")
    def provider_responses_pretty(self, obj: Payout) -> str:
        if not obj.provider_responses:
            return "—"
        return format_html(
            '<pre style="white-space: pre-wrap">{}</pre>',
            json.dumps(obj.provider_responses, indent=2, default=str),
        )

    @admin.display(description="manual resolution")
    def resolve_link(self, obj: Payout) -> str:
        if obj.status != PayoutStatus.AMBIGUOUS:
            return "only ambiguous payouts can be resolved manually"
        url = reverse("admin:payouts_payout_resolve", args=[obj.pk])
        return format_html('<a class="button" href="{}">Resolve this payout…</a>', url)

    # --- Actions ----------------------------------------------------------------------------

    @admin.action(description="Requery selected payouts with the provider")
    def requery_selected(self, request: HttpRequest, queryset: QuerySet[Payout]) -> None:
        counts: dict[str, int] = {}
        skipped = 0
        for payout in queryset.order_by("id")[:REQUERY_ACTION_LIMIT]:
            if payout.status in FINAL_STATUSES:
                skipped += 1
                continue
            status = payout_requery(payout=payout).status
            counts[status] = counts.get(status, 0) + 1
        summary = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
        self.message_user(
            request,
            f"Requeried {sum(counts.values())} payout(s)"
            f"{': ' + summary if summary else ''}; {skipped} already final, skipped.",
            level=messages.INFO,
        )

    @admin.action(description="Export selected payouts as CSV")
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Payout]) -> HttpResponse:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response["Content-Disposition"] = f'attachment; filename="payouts-{stamp}.csv"'
        writer = csv.writer(response)
        writer.writerow(CSV_COLUMNS)
        for payout in queryset.select_related("merchant").order_by("-created_at", "-id"):
            writer.writerow(
                [
                    csv_safe(value)
                    for value in (
                        payout.pk,
                        payout.internal_reference,
                        payout.merchant_id,
                        payout.merchant.name,
                        payout.mode,
                        payout.status,
                        payout.currency,
                        format_amount(payout.amount),
                        format_amount(payout.fee_amount),
                        format_amount(payout.total_debit_amount),
                        payout.bank_code,
                        payout.bank_name,
                        payout.account_number,
                        payout.account_name,
                        payout.narration,
                        payout.error_message,
                        payout.provider_name,
                        payout.provider_reference,
                        payout.created_at.isoformat(),
                        payout.completed_at.isoformat() if payout.completed_at else "",
                    )
                ]
            )
        return response

    @admin.action(description="Resolve an ambiguous payout manually…")
    def resolve_selected(
        self, request: HttpRequest, queryset: QuerySet[Payout]
    ) -> HttpResponseRedirect | None:
        payouts = list(queryset[:2])
        if len(payouts) != 1 or payouts[0].status != PayoutStatus.AMBIGUOUS:
            self.message_user(
                request,
                "Select exactly one ambiguous payout to resolve.",
                level=messages.ERROR,
            )
            return None
        return HttpResponseRedirect(reverse("admin:payouts_payout_resolve", args=[payouts[0].pk]))

    # --- Resolution view --------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        urls = super().get_urls()
        custom = [
            path(
                "<int:payout_id>/resolve/",
                self.admin_site.admin_view(self.resolve_view),
                name="payouts_payout_resolve",
            )
        ]
        return custom + urls

    def resolve_view(self, request: HttpRequest, payout_id: int) -> HttpResponse:
        if not request.user.has_perm("payouts.resolve_payout"):
            raise PermissionDenied
        payout = get_object_or_404(Payout.objects.select_related("merchant"), pk=payout_id)
        change_url = reverse("admin:payouts_payout_change", args=[payout.pk])
        if payout.status != PayoutStatus.AMBIGUOUS:
            self.message_user(
                request,
                f"Payout {payout.internal_reference} is {payout.status}; only ambiguous payouts "
                "can be resolved manually.",
                level=messages.ERROR,
            )
            return HttpResponseRedirect(change_url)
        form = PayoutResolveForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                resolution = payout_resolve_manually(
                    payout_id=payout.pk,
                    to_status=form.cleaned_data["to_status"],
                    reason=form.cleaned_data["reason"],
                    resolved_by=request.user,
                )
            except ApplicationError as error:
                self.message_user(request, error.message, level=messages.ERROR)
                return HttpResponseRedirect(change_url)
            self.message_user(
                request,
                f"Payout {payout.internal_reference} resolved as {resolution.to_status}.",
                level=messages.SUCCESS,
            )
            return HttpResponseRedirect(change_url)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Resolve payout {payout.internal_reference}",
            "opts": self.model._meta,
            "payout": payout,
            "form": form,
            "change_url": change_url,
            "ledger_entries_table": self.ledger_entries_table(payout),
        }
        return TemplateResponse(request, "admin/payouts/payout/resolve.html", context)


@admin.register(PayoutResolution)
class PayoutResolutionAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The audit log of manual resolutions: read-only."""

    list_display = ("payout", "from_status", "to_status", "resolved_by", "created_at")
    list_filter = ("to_status",)
    search_fields = ("=payout__internal_reference", "reason")
    list_select_related = ("payout", "resolved_by")
    readonly_fields = ("payout", "from_status", "to_status", "reason", "resolved_by", "created_at")


@admin.register(SandboxTransfer)
class SandboxTransferAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """What the test-mode provider holds (read-only)."""

    list_display = (
        "reference",
        "transfer_code",
        "account_number",
        "amount",
        "outcome",
        "initiate_count",
        "query_count",
        "created_at",
    )
    search_fields = ("=reference", "=transfer_code", "=account_number")
    readonly_fields = list_display
