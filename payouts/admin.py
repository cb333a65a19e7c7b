"""Back office for finance staff: payouts are read-only; state changes go through services.

* a list that fits a laptop screen (1400 px): created, reference, merchant, status, amount, fee,
  beneficiary, completed; the rest is on the change page. Filters: status, mode, merchant, bank,
  created and completed date (Lagos days, with a from/to range). Search: internal reference,
  account number, NIP session id, provider reference (exact), account name;
* the change page shows the payout's attempts (each send to a provider) and those providers'
  health, its ledger entries, provider answers, resolution proposals and resolutions, and only
  the buttons the user may use;
* routing rules and provider health have their own pages (``payouts.admin_routing``);
* actions: requery selected (``payouts.requery_payout``), export CSV (``payouts.export_payouts``:
  Lagos times with their offset, references and account numbers kept as text for Excel),
  propose a resolution (``payouts.propose_resolution``);
* manual resolution (``payouts.admin_resolution``) takes two people: one proposes the outcome
  of an ambiguous payout with an internal reason and evidence, a different person with
  ``payouts.approve_resolution`` approves (the payout settles) or rejects it. The reason and
  evidence are never shown to the merchant;
* bulk upload (an extension, ``payouts.admin_bulk``): a CSV of payouts checked as a dry run
  and proposed by one person, approved (submitted through the same service as
  ``POST …/payouts/bulk``) or rejected by another.

Every action and decision writes an audit record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, cast

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from audit.backoffice import (
    BackOfficeAdminMixin,
    CsvText,
    one_selected_page,
    selection_export,
)
from audit.services import audit_record
from core.admin import (
    LocalDateRangeFilter,
    ReadOnlyAdminMixin,
    bank_account_cell,
    merchant_column,
    money_cell,
    money_column,
    status_badge,
    time_column,
)
from core.dates import local_isoformat, local_text
from core.money import format_amount
from merchants.models import Mode
from payouts.admin_bulk import bulk_upload_view, may_upload
from payouts.admin_resolution import (
    PayoutResolutionInline,
    PayoutResolutionProposalInline,
    ResolutionPagesMixin,
    open_proposal,
)
from payouts.admin_routing import PayoutAttemptInline, provider_health_table
from payouts.models import (
    FINAL_STATUSES,
    Payout,
    PayoutStatus,
    ProviderTransferEventRecord,
    SandboxTransfer,
)
from payouts.selectors import provider_health_list
from payouts.services import (
    payout_requery,
    payout_return_check,
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
    "nip_session_id",
    "created_at",
    "completed_at",
    "returned_at",
    "return_reason",
)


class ReturnedFilter(admin.SimpleListFilter):
    """Successful payouts the beneficiary's bank sent back (``returned_at``), or not."""

    title = "returned by the bank"
    parameter_name = "returned"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Returned"), ("no", "Not returned")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Payout]) -> QuerySet[Payout]:
        if self.value() in ("yes", "no"):
            return queryset.filter(returned_at__isnull=self.value() == "no")
        return queryset


class AttentionFilter(admin.SimpleListFilter):
    """Payouts finance must look at: held for suspected fraud, or unresolved past the requery
    window (escalated), while they are not final."""

    title = "needs finance"
    parameter_name = "attention"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("held", "Held for suspected fraud"), ("escalated", "Unresolved past 24 h")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Payout]) -> QuerySet[Payout]:
        if self.value() == "held":
            return queryset.filter(status=PayoutStatus.AMBIGUOUS, fraud_flagged_at__isnull=False)
        if self.value() == "escalated":
            return queryset.filter(
                status__in=(PayoutStatus.DISPATCHED, PayoutStatus.AMBIGUOUS),
                requery_escalated_at__isnull=False,
            )
        return queryset


class BankFilter(admin.SimpleListFilter):
    title = "bank"
    parameter_name = "bank_code"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(bank.bank_code, bank.name) for bank in Bank.objects.order_by("name")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Payout]) -> QuerySet[Payout]:
        if self.value():
            return queryset.filter(bank_code=self.value())
        return queryset


def _csv_row(payout: Payout) -> tuple[Any, ...]:
    return (
        payout.pk,
        CsvText(payout.internal_reference),
        payout.merchant_id,
        payout.merchant.name,
        payout.mode,
        payout.status,
        payout.currency,
        format_amount(payout.amount),
        format_amount(payout.fee_amount),
        format_amount(payout.total_debit_amount),
        CsvText(payout.bank_code),
        payout.bank_name,
        CsvText(payout.account_number),
        payout.account_name,
        payout.narration,
        payout.error_message,
        payout.provider_name,
        CsvText(payout.provider_reference or ""),
        CsvText(payout.nip_session_id or ""),
        local_isoformat(payout.created_at),
        local_isoformat(payout.completed_at),
        local_isoformat(payout.returned_at),
        payout.return_reason,
    )


@admin.register(Payout)
class PayoutAdmin(ResolutionPagesMixin, ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    change_form_template = "admin/backoffice/change_form.html"
    change_list_template = "admin/backoffice/change_list.html"
    # Fits 1400 px with the navigation and filter sidebars open (tests/payouts/
    # test_admin_browser.py); mode, total, bank code and provider fields are on the change page.
    list_display = (
        "created_display",
        "internal_reference",
        "merchant_display",
        "status_display",
        "amount_display",
        "fee_display",
        "beneficiary",
        "completed_display",
    )
    list_display_links = ("internal_reference",)
    list_filter = (
        "status",
        ReturnedFilter,
        AttentionFilter,
        "mode",
        ("merchant", admin.RelatedOnlyFieldListFilter),
        BankFilter,
        ("created_at", LocalDateRangeFilter),
        ("completed_at", LocalDateRangeFilter),
    )
    search_fields = (
        "=internal_reference",
        "=account_number",
        "=nip_session_id",
        "=provider_reference",
        "account_name",
    )
    search_help_text = (
        "Internal reference, account number, NIP session id or provider reference (exact), "
        "or account name."
    )
    list_select_related = ("merchant",)
    list_per_page = 50
    show_full_result_count = False
    actions = (
        "requery_selected",
        "check_returns_selected",
        "export_csv",
        "propose_resolution_selected",
    )
    inlines = (PayoutAttemptInline, PayoutResolutionProposalInline, PayoutResolutionInline)
    fieldsets = (
        (
            None,
            {
                "fields": (
                    "internal_reference",
                    "status",
                    "resolution_state",
                    "merchant",
                    "mode",
                    "wallet",
                    "idempotency_key",
                    "batch",
                    "error_message",
                )
            },
        ),
        (
            "Money",
            {"fields": ("currency", "amount_display", "fee_display", "total_display")},
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
                    "provider_health_display",
                    "provider_reference",
                    "nip_session_id",
                    "dispatch_attempts",
                    "dispatch_claimed_at",
                    "dispatched_at",
                    "ambiguous_since",
                    "requery_count",
                    "next_requery_at",
                    "requery_escalated_at",
                    "provider_responses_pretty",
                )
            },
        ),
        ("Held for suspected fraud", {"fields": ("fraud_flagged_at", "fraud_nip_code")}),
        ("Returned by the bank", {"fields": ("returned_at", "return_reason")}),
        (
            "The merchant's controls",
            {
                "fields": (
                    "approval_status",
                    "created_by_key",
                    "approved_by_key",
                    "approved_at",
                    "scheduled_for",
                )
            },
        ),
        ("Timestamps", {"fields": ("created_at", "updated_at", "completed_at")}),
    )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        names: list[str] = []
        for _title, options in self.fieldsets:
            names.extend(cast(Sequence[str], options["fields"]))  # flat field lists here
        return names

    def save_model(self, request: HttpRequest, obj: Payout, form: Any, change: bool) -> None:
        """Never writes: a stale admin copy must not overwrite the worker's state changes.
        Payouts change only through services (requery, resolution)."""

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Proposals and resolutions are created by the resolution services only."""

    # --- Permissions of the actions and buttons ---------------------------------------------

    def has_requery_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "payouts.requery_payout")

    def has_export_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "payouts.export_payouts")

    def has_propose_resolution_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "payouts.propose_resolution")

    def has_approve_resolution_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "payouts.approve_resolution")

    def has_bulk_preview_permission(self, request: HttpRequest) -> bool:
        """Finance staff who act on payouts may check and propose a file (``admin_bulk``)."""
        return may_upload(request)

    def list_buttons(self, request: HttpRequest) -> list[tuple[str, str]]:
        if self.has_bulk_preview_permission(request):
            return [("Upload a bulk payout (CSV)…", reverse("admin:payouts_payout_bulk"))]
        return []

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        # The payouts of one bulk payout: the link the bulk upload leads to.
        if lookup == "batch__id__exact":
            return True
        return super().lookup_allowed(lookup, value, request)

    def detail_buttons(self, request: HttpRequest, object_id: str) -> list[tuple[str, str]]:
        payout = Payout.objects.filter(pk=object_id).first() if object_id.isdigit() else None
        return self.resolution_buttons(request, payout) if payout else []

    # --- List cells and read-only displays --------------------------------------------------

    created_display = time_column("created_at", "created")

    completed_display = time_column("completed_at", "completed")

    merchant_display = merchant_column(live_mode=Mode.LIVE)

    @admin.display(description="status", ordering="status")
    def status_display(self, obj: Payout) -> SafeString:
        badge = status_badge(obj.status, obj.get_status_display())
        if obj.returned_at is None:
            return badge
        # Successful, then sent back by the beneficiary's bank: the money is back in the wallet.
        return format_html(
            '{} <span class="status-badge status-returned" title="{}">Returned</span>',
            badge,
            obj.return_reason or "returned by the bank",
        )

    amount_display = money_column("amount", "amount")

    fee_display = money_column("fee_amount", "fee")

    total_display = money_column("total_debit_amount", "total debit")

    @admin.display(description="beneficiary", ordering="account_name")
    def beneficiary(self, obj: Payout) -> SafeString:
        """``ACCOUNT NAME · Bank · 0123456789`` in one cell."""
        return bank_account_cell(obj.account_name, obj.bank_name, obj.account_number)

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
                    local_text(entry.created_at),
                    entry.entry_type,
                    money_cell(entry.amount),
                    money_cell(entry.fee_amount),
                    money_cell(entry.available_delta),
                    money_cell(entry.reserved_delta),
                    entry.reference,
                )
                for entry in entries
            ),
        )
        return format_html(
            '<table class="ledger-entries"><thead><tr><th>id</th><th>at</th><th>type</th>'
            '<th class="money-head">amount</th><th class="money-head">fee</th>'
            '<th class="money-head">available Δ</th><th class="money-head">reserved Δ</th>'
            "<th>reference</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )

    @admin.display(description="provider health")
    def provider_health_display(self, obj: Payout) -> SafeString | str:
        """The health of the providers this payout's attempts went to."""
        names = set(obj.attempts.values_list("provider_name", flat=True)) | {obj.provider_name}
        return provider_health_table(
            [item for item in provider_health_list() if item.provider_name in names]
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
    def resolution_state(self, obj: Payout) -> str:
        if obj.status != PayoutStatus.AMBIGUOUS:
            return "only ambiguous payouts can be resolved manually"
        proposal = open_proposal(obj)
        if proposal is None:
            return "no proposal yet"
        return (
            f"{proposal.proposed_by} proposed {proposal.proposed_status} on "
            f"{local_text(proposal.proposed_at)}; "
            "awaiting a different finance approver"
        )

    # --- Actions ----------------------------------------------------------------------------

    @admin.action(
        description="Check selected successful payouts for a return by the bank",
        permissions=["requery"],
    )
    def check_returns_selected(self, request: HttpRequest, queryset: QuerySet[Payout]) -> None:
        returned = 0
        checked = 0
        candidates = queryset.filter(status=PayoutStatus.SUCCESSFUL, returned_at__isnull=True)
        for payout in candidates.order_by("id")[:REQUERY_ACTION_LIMIT]:
            checked += 1
            with transaction.atomic():
                result = payout_return_check(payout=payout)
                if result is not None and result.applied:
                    returned += 1
                    audit_record(
                        actor=request.user,
                        action=self.audit_action("return_check"),
                        obj=payout,
                        before={"returned_at": None},
                        after={"returned_at": result.payout.returned_at},
                        request=request,
                    )
        self.message_user(
            request,
            f"Checked {checked} successful payout(s) with the provider: {returned} returned by "
            "the bank (principal credited back).",
            level=messages.INFO,
        )

    @admin.action(description="Requery selected payouts with the provider", permissions=["requery"])
    def requery_selected(self, request: HttpRequest, queryset: QuerySet[Payout]) -> None:
        counts: dict[str, int] = {}
        skipped = 0
        for payout in queryset.order_by("id")[:REQUERY_ACTION_LIMIT]:
            if payout.status in FINAL_STATUSES:
                skipped += 1
                continue
            before = payout.status
            with transaction.atomic():
                status = payout_requery(payout=payout).status
                audit_record(
                    actor=request.user,
                    action=self.audit_action("requery"),
                    obj=payout,
                    before={"status": before},
                    after={"status": status},
                    request=request,
                )
            counts[status] = counts.get(status, 0) + 1
        summary = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
        self.message_user(
            request,
            f"Requeried {sum(counts.values())} payout(s)"
            f"{': ' + summary if summary else ''}; {skipped} already final, skipped.",
            level=messages.INFO,
        )

    @admin.action(description="Export selected payouts as CSV", permissions=["export"])
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Payout]) -> HttpResponse:
        return selection_export(
            request,
            action=self.audit_action("export"),
            model=Payout,
            records=list(queryset.select_related("merchant").order_by("-created_at", "-id")),
            filename_stem="payouts",
            header=CSV_COLUMNS,
            row=_csv_row,
        )

    @admin.action(
        description="Propose a resolution of an ambiguous payout…",
        permissions=["propose_resolution"],
    )
    def propose_resolution_selected(
        self, request: HttpRequest, queryset: QuerySet[Payout]
    ) -> HttpResponseRedirect | None:
        return one_selected_page(
            self,
            request,
            queryset,
            fits=lambda payout: payout.status == PayoutStatus.AMBIGUOUS,
            refusal="Select exactly one ambiguous payout to propose a resolution for.",
            url_name="admin:payouts_payout_propose_resolution",
        )

    # --- Proposal and review pages ----------------------------------------------------------

    def backoffice_pages(self) -> list[tuple[str, Callable[..., HttpResponse], str]]:
        return [
            (
                "<int:payout_id>/propose-resolution/",
                self.propose_resolution_view,
                "payouts_payout_propose_resolution",
            ),
            (
                "resolution-proposals/<int:proposal_id>/review/",
                self.review_resolution_view,
                "payouts_payout_review_resolution",
            ),
            ("bulk-upload/", self.bulk_upload_view, "payouts_payout_bulk"),
        ]

    # --- Bulk upload (extension): payouts/admin_bulk.py ---------------------------------------

    def bulk_upload_view(self, request: HttpRequest) -> HttpResponse:
        return bulk_upload_view(self, request)


@admin.register(SandboxTransfer)
class SandboxTransferAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    """What the test-mode provider holds (read-only)."""

    list_display = (
        "provider_name",
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


@admin.register(ProviderTransferEventRecord)
class ProviderTransferEventRecordAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    """Providers' transfer events (webhooks) as received and what applying them did
    (read-only); ``conflict`` ones are finance's to work."""

    list_display = ("received_at", "provider", "kind", "reference", "result", "payout")
    list_filter = ("result", "provider", "kind")
    search_fields = ("=reference", "=event_id", "=payout__internal_reference")
    list_select_related = ("payout",)
    readonly_fields = (
        "received_at",
        "provider",
        "event_id",
        "kind",
        "reference",
        "session_id",
        "message",
        "result",
        "payout",
        "payload",
    )
