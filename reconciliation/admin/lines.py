"""Back office for reconciliation lines (``ReconciliationItem``): every line of every statement,
and every payout of ours a statement lacks, filterable by run, category and state. Actions: clear
with a note (``reconciliation.clear_exception``), re-check against our current records (same),
and propose a resolution of an ambiguous payout from the line that proves its outcome
(``payouts.propose_resolution``; a different user approves on the payout's review page).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from django.contrib import admin, messages
from django.contrib.auth.models import User  # request.user here: the admin site admits staff only
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from audit.backoffice import (
    BackOfficeAdminMixin,
    ReasonForm,
    action_confirmation,
    confirmation_form,
    one_selected_page,
    page_context,
    service_run,
)
from core.admin import ReadOnlyAdminMixin, money_cell, money_column
from core.dates import local_text
from reconciliation.admin.forms import (
    ExceptionsOnlyFilter,
    ProposeFromLineForm,
    StateFilter,
    item_labels_by_reference,
)
from reconciliation.models import (
    ReconciliationItem,
)
from reconciliation.selectors import (
    CATEGORY_RANK,
    ExceptionState,
    item_list,
)
from reconciliation.services import (
    proposable_status,
    proposal_reason_default,
    reconciliation_item_propose_resolution,
    reconciliation_items_clear,
    reconciliation_items_recheck,
)


@admin.register(ReconciliationItem)
class ReconciliationItemAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    change_form_template = "admin/backoffice/change_form.html"
    # Fits 1400 px with both sidebars open (tests/reconciliation/test_clerk_browser.py): amount
    # and status of each side share a cell; the detail is the category's tooltip and on the page.
    list_display = (
        "line_display",
        "category_badge",
        "state_display",
        "statement_reference_display",
        "statement_side",
        "our_side",
    )
    list_display_links = ("line_display",)
    # Actionable categories first (CATEGORY_PRIORITY): mismatches before "ours, not on the
    # statement"; then by import and line.
    ordering = (CATEGORY_RANK.asc(), "-run", "line_number", "id")
    list_filter = (
        StateFilter,
        ExceptionsOnlyFilter,
        "category",
        "statement_status",
        "run__mode",
        ("run", admin.RelatedOnlyFieldListFilter),
    )
    search_fields = (
        "=statement_reference",
        "=statement_provider_reference",
        "=statement_session_id",
        "=payout__internal_reference",
    )
    search_help_text = "Reference, transfer code, NIP session id or payout reference (exact)."
    list_per_page = 100
    show_full_result_count = False
    actions = ("clear_selected", "recheck_selected", "propose_resolution_selected")
    fieldsets = (
        (None, {"fields": ("run", "line_number", "category", "state_display", "detail")}),
        (
            "The statement line",
            {
                "fields": (
                    "statement_reference",
                    "statement_provider_reference",
                    "statement_session_id",
                    "statement_amount_display",
                    "statement_status",
                    "statement_status_raw",
                    "statement_at_display",
                    "statement_account_number",
                    "statement_bank",
                    "raw_table",
                )
            },
        ),
        (
            "Our payout",
            {
                "fields": (
                    "payout_link",
                    "matched_by",
                    "our_amount_display",
                    "our_status",
                    "payout_now",
                )
            },
        ),
        (
            "Working the exception",
            {"fields": ("cleared_at", "cleared_by", "clear_note", "proposal_display")},
        ),
    )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        names: list[str] = []
        for _title, options in self.fieldsets:
            names.extend(cast(Sequence[str], options["fields"]))  # flat field lists here
        return names

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReconciliationItem]:
        return item_list()

    # --- permissions ----------------------------------------------------------------------

    def has_clear_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "reconciliation.clear_exception")

    def has_propose_resolution_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "payouts.propose_resolution")

    # --- displays -------------------------------------------------------------------------

    @admin.display(description="line", ordering="line_number")
    def line_display(self, obj: ReconciliationItem) -> str:
        return f"#{obj.run_id}:{obj.line_number}" if obj.line_number else f"#{obj.run_id}: —"

    @admin.display(description="category", ordering=CATEGORY_RANK)
    def category_badge(self, obj: ReconciliationItem) -> str:
        return format_html(
            '<span class="status-badge recon-{}" title="{}">{}</span>',
            obj.category,
            obj.detail,
            obj.get_category_display(),
        )

    @admin.display(description="state")
    def state_display(self, obj: ReconciliationItem) -> str:
        state = getattr(obj, "state", None) or ExceptionState.OPEN
        return ExceptionState(state).label

    @admin.display(description="reference · payout")
    def statement_reference_display(self, obj: ReconciliationItem) -> str:
        """The line's reference, linked to the matched payout (ours, for a missing one)."""
        shown = (
            obj.statement_reference
            or obj.statement_provider_reference
            or obj.statement_session_id
            or (obj.payout.internal_reference if obj.payout else "—")
        )
        if obj.payout_id is None:
            return shown
        url = reverse("admin:payouts_payout_change", args=[obj.payout_id])
        return format_html('<a href="{}" title="the payout">{}</a>', url, shown)

    @admin.display(description="payout")
    def payout_link(self, obj: ReconciliationItem) -> str:
        if obj.payout_id is None:
            return "—"
        url = reverse("admin:payouts_payout_change", args=[obj.payout_id])
        label = obj.payout.internal_reference if obj.payout else obj.payout_id
        return format_html('<a href="{}">{}</a>', url, label)

    statement_amount_display = money_column("statement_amount", "statement amount")

    our_amount_display = money_column("our_amount", "our amount")

    @admin.display(description="statement", ordering="statement_amount")
    def statement_side(self, obj: ReconciliationItem) -> str:
        if obj.statement_amount is None and not obj.statement_status:
            return "—"
        return format_html(
            "{} <small>{}</small>", money_cell(obj.statement_amount), obj.statement_status or "—"
        )

    @admin.display(description="ours", ordering="our_amount")
    def our_side(self, obj: ReconciliationItem) -> str:
        if obj.payout_id is None:
            return "—"
        return format_html("{} <small>{}</small>", money_cell(obj.our_amount), obj.our_status)

    @admin.display(description="statement time")
    def statement_at_display(self, obj: ReconciliationItem) -> str:
        return local_text(obj.statement_at)

    @admin.display(description="the line as read")
    def raw_table(self, obj: ReconciliationItem) -> str:
        if not obj.raw:
            return "— (not on the statement)"
        rows = format_html_join(
            "", "<tr><th>{}</th><td>{}</td></tr>", ((key, value) for key, value in obj.raw.items())
        )
        return format_html('<table data-testid="raw-line"><tbody>{}</tbody></table>', rows)

    @admin.display(description="payout now")
    def payout_now(self, obj: ReconciliationItem) -> str:
        if obj.payout is None:
            return "—"
        payout = obj.payout
        return format_html(
            "{} · {} · session {}",
            payout.status,
            money_cell(payout.amount),
            payout.nip_session_id or "—",
        )

    @admin.display(description="proposed resolution")
    def proposal_display(self, obj: ReconciliationItem) -> str:
        proposal = obj.resolution_proposal
        if proposal is None:
            return "—"
        url = reverse("admin:payouts_payoutresolutionproposal_change", args=[proposal.pk])
        decision = proposal.get_decision_display() if proposal.decision else "waiting for approval"
        return format_html(
            '<a href="{}">{} proposed by {}: {}</a>',
            url,
            proposal.proposed_status,
            proposal.proposed_by,
            decision,
        )

    # --- buttons on the line's page --------------------------------------------------------

    def line_buttons(self, request: HttpRequest, item: ReconciliationItem) -> list[tuple[str, str]]:
        buttons: list[tuple[str, str]] = []
        unresolved = getattr(item, "state", "") == ExceptionState.OPEN
        if (
            unresolved
            and proposable_status(item) is not None
            and self.has_propose_resolution_permission(request)
        ):
            buttons.append(
                (
                    "Propose a resolution from this line…",
                    reverse("admin:reconciliation_item_propose_resolution", args=[item.pk]),
                )
            )
        if unresolved and self.has_clear_permission(request):
            buttons.append(
                ("Clear with a note…", reverse("admin:reconciliation_item_clear", args=[item.pk]))
            )
        if (
            item.resolution_proposal is not None
            and item.resolution_proposal.is_open
            and item.resolution_proposal.proposed_by_id != request.user.pk
            and self.user_has(request, "payouts.approve_resolution")
        ):
            buttons.append(
                (
                    "Review the proposed resolution…",
                    reverse(
                        "admin:payouts_payout_review_resolution",
                        args=[item.resolution_proposal.pk],
                    ),
                )
            )
        return buttons

    def detail_buttons(self, request: HttpRequest, object_id: str) -> list[tuple[str, str]]:
        item = item_list().filter(pk=object_id).first() if object_id.isdigit() else None
        return self.line_buttons(request, item) if item else []

    # --- actions --------------------------------------------------------------------------

    @admin.action(description="Clear selected exceptions with a note…", permissions=["clear"])
    def clear_selected(
        self, request: HttpRequest, queryset: QuerySet[ReconciliationItem]
    ) -> HttpResponse | None:
        form = confirmation_form(request)
        if not form.is_bound or not form.is_valid():
            items = list(queryset.select_related("run", "payout").order_by("run_id", "line_number"))
            return action_confirmation(
                request,
                model_admin=self,
                queryset=queryset,
                labels=item_labels_by_reference(items),
                action_name="clear_selected",
                title="Clear exceptions",
                intro="The open exceptions below will be cleared with your note (matched lines, "
                "cleared ones and those with a proposal waiting are left as they are).",
                submit_label="Clear with this note",
                form=form,
            )
        cleared = reconciliation_items_clear(
            item_ids=list(queryset.values_list("pk", flat=True)),
            note=form.cleaned_data["reason"],
            cleared_by=cast(User, request.user),
            request=request,
        )
        self.message_user(request, f"{cleared} exception(s) cleared.", level=messages.SUCCESS)
        return None

    @admin.action(
        description="Re-check selected against our current records", permissions=["clear"]
    )
    def recheck_selected(
        self, request: HttpRequest, queryset: QuerySet[ReconciliationItem]
    ) -> None:
        cleared = reconciliation_items_recheck(
            item_ids=list(queryset.values_list("pk", flat=True)),
            checked_by=cast(User, request.user),
            request=request,
        )
        self.message_user(
            request,
            f"{cleared} exception(s) now agree with our records and were cleared.",
            level=messages.INFO,
        )

    @admin.action(
        description="Propose a resolution from the selected line…",
        permissions=["propose_resolution"],
    )
    def propose_resolution_selected(
        self, request: HttpRequest, queryset: QuerySet[ReconciliationItem]
    ) -> HttpResponseRedirect | None:
        return one_selected_page(
            self,
            request,
            queryset,
            fits=lambda item: proposable_status(item) is not None,
            refusal="Select exactly one line whose payout is ambiguous and whose statement status "
            "is final, with the same amount.",
            url_name="admin:reconciliation_item_propose_resolution",
        )

    # --- pages ----------------------------------------------------------------------------

    def backoffice_pages(self) -> list[tuple[str, Callable[..., HttpResponse], str]]:
        return [
            (
                "<int:item_id>/propose-resolution/",
                self.propose_resolution_view,
                "reconciliation_item_propose_resolution",
            ),
            ("<int:item_id>/clear/", self.clear_view, "reconciliation_item_clear"),
        ]

    def _item_page(self, request: HttpRequest, item_id: int, title: str) -> dict[str, Any]:
        item = get_object_or_404(item_list(), pk=item_id)
        return {
            **page_context(self, request, title),
            "item": item,
            "change_url": reverse("admin:reconciliation_reconciliationitem_change", args=[item.pk]),
            "raw_table": self.raw_table(item),
            "statement_amount": money_cell(item.statement_amount),
            "our_amount": money_cell(item.payout.amount) if item.payout else "—",
        }

    def propose_resolution_view(self, request: HttpRequest, item_id: int) -> HttpResponse:
        if not self.has_propose_resolution_permission(request):
            raise PermissionDenied("You may not propose payout resolutions.")
        context = self._item_page(request, item_id, "Propose a resolution from a statement line")
        item: ReconciliationItem = context["item"]
        proposed_status = proposable_status(item)
        if proposed_status is None or item.state != ExceptionState.OPEN:  # type: ignore[attr-defined]
            self.message_user(
                request,
                "This line cannot become a proposed resolution: its payout must be ambiguous, "
                "the amounts equal, the statement status final, and the exception open.",
                level=messages.ERROR,
            )
            return HttpResponseRedirect(context["change_url"])
        form = ProposeFromLineForm(
            request.POST or None, initial={"reason": proposal_reason_default(item)}
        )
        if request.method == "POST" and form.is_valid():
            proposed = service_run(
                self,
                request,
                lambda: reconciliation_item_propose_resolution(
                    item_id=item.pk,
                    reason=form.cleaned_data["reason"],
                    proposed_by=cast(User, request.user),
                    request=request,
                ),
            )
            if proposed is None:
                return HttpResponseRedirect(context["change_url"])
            self.message_user(
                request,
                f"Resolution of {item.payout.internal_reference if item.payout else ''} as "
                f"{proposed_status} proposed from the statement. Nothing moves until a different "
                "finance approver approves it.",
                level=messages.SUCCESS,
            )
            return HttpResponseRedirect(context["change_url"])
        context.update({"form": form, "proposed_status": proposed_status})
        return TemplateResponse(request, "admin/reconciliation/propose_from_line.html", context)

    def clear_view(self, request: HttpRequest, item_id: int) -> HttpResponse:
        if not self.has_clear_permission(request):
            raise PermissionDenied("You may not clear reconciliation exceptions.")
        context = self._item_page(request, item_id, "Clear a reconciliation exception")
        item: ReconciliationItem = context["item"]
        form = ReasonForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            cleared = service_run(
                self,
                request,
                lambda: reconciliation_items_clear(
                    item_ids=[item.pk],
                    note=form.cleaned_data["reason"],
                    cleared_by=cast(User, request.user),
                    request=request,
                ),
                refusal_denied=False,
            )
            if cleared is not None:
                self.message_user(
                    request,
                    "Exception cleared." if cleared else "Nothing to clear: not an open exception.",
                    level=messages.SUCCESS if cleared else messages.WARNING,
                )
            return HttpResponseRedirect(context["change_url"])
        context["form"] = form
        return TemplateResponse(request, "admin/reconciliation/clear_line.html", context)
