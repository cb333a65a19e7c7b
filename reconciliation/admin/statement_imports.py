"""Back office for statement imports (``ReconciliationRun``): the list of imports, each with its
counts per category and per state; "Import a statement…" (``reconciliation.import_statement``)
uploads a file, which is parsed, matched and stored as one run (the same file again opens the
first); its mode is the one the file's references name unless chosen. "Void selected imports…"
(same permission, a written reason) takes an import made by mistake out of the queue and the
dashboard, so the file can be imported again. The finance dashboard's page is routed here
(``reconciliation.dashboard_views``).
"""

from __future__ import annotations

from collections.abc import Callable
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
    page_context,
    service_run,
)
from core.admin import ReadOnlyAdminMixin
from core.dates import local_zone_label
from core.exceptions import ApplicationError
from reconciliation.admin.forms import (
    VOID_INTRO,
    StatementUploadForm,
    VoidedFilter,
)
from reconciliation.dashboard_views import finance_dashboard_view
from reconciliation.formats import FORMATS
from reconciliation.models import (
    MatchCategory,
    ReconciliationRun,
)
from reconciliation.selectors import (
    UNRESOLVED_STATES,
    ExceptionState,
    run_state_counts,
)
from reconciliation.services import (
    statement_import,
    statement_import_void,
)


def _items_url(**params: Any) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return reverse("admin:reconciliation_reconciliationitem_changelist") + f"?{query}"


@admin.register(ReconciliationRun)
class ReconciliationRunAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    change_form_template = "admin/backoffice/change_form.html"
    change_list_template = "admin/backoffice/change_list.html"
    list_display = (
        "id",
        "created_at",
        "file_name",
        "statement_format",
        "mode",
        "period",
        "line_count",
        "matched_count",
        "exceptions_link",
        "imported_by_display",
    )
    list_filter = (
        VoidedFilter,
        "statement_format",
        "mode",
        ("period_start", admin.DateFieldListFilter),
    )
    actions = ("void_selected",)
    search_fields = ("file_name", "=file_sha256")
    list_select_related = ("imported_by",)
    fields = (
        "file_name",
        "statement_format",
        "mode",
        "period",
        "file_sha256",
        "line_count",
        "counts_table",
        "imported_by_display",
        "imported_via",
        "duration_ms",
        "created_at",
        "voided_at",
        "voided_by",
        "void_reason",
    )
    readonly_fields = fields

    # --- permissions ----------------------------------------------------------------------

    def has_import_statement_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "reconciliation.import_statement")

    # --- displays -------------------------------------------------------------------------

    @admin.display(description="period (Lagos)", ordering="period_start")
    def period(self, obj: ReconciliationRun) -> str:
        if obj.period_start == obj.period_end:
            return f"{obj.period_start:%Y-%m-%d}"
        return f"{obj.period_start:%Y-%m-%d} – {obj.period_end:%Y-%m-%d}"

    @admin.display(description="matched")
    def matched_count(self, obj: ReconciliationRun) -> int:
        return int(obj.category_counts.get(MatchCategory.MATCHED, 0))

    @admin.display(description="exceptions")
    def exceptions_link(self, obj: ReconciliationRun) -> str:
        if obj.voided_at is not None:
            return format_html(
                '<span class="badge" data-testid="run-voided" title="{}">Voided</span>',
                obj.void_reason,
            )
        return format_html(
            '<a href="{}">{} exception(s)</a>',
            _items_url(run__id__exact=obj.pk, state="unresolved"),
            obj.exception_count,
        )

    @admin.display(description="imported by")
    def imported_by_display(self, obj: ReconciliationRun) -> str:
        return str(obj.imported_by) if obj.imported_by_id else f"({obj.imported_via})"

    @admin.display(description="lines by category and state")
    def counts_table(self, obj: ReconciliationRun) -> str:
        categories = format_html_join(
            "",
            '<tr><td>{}</td><td><a href="{}">{}</a></td></tr>',
            (
                (
                    label,
                    _items_url(run__id__exact=obj.pk, category__exact=value),
                    obj.category_counts.get(value, 0),
                )
                for value, label in MatchCategory.choices
            ),
        )
        states = run_state_counts(run=obj)
        state_rows = format_html_join(
            "",
            '<tr><td>{}</td><td><a href="{}">{}</a></td></tr>',
            (
                (label, _items_url(run__id__exact=obj.pk, state=value), states.get(value, 0))
                for value, label in ExceptionState.choices
            ),
        )
        unresolved = sum(states.get(state, 0) for state in UNRESOLVED_STATES)
        verdict = (
            "Every line is matched or explained."
            if unresolved == 0
            else f"{unresolved} exception(s) still to work."
        )
        return format_html(
            '<p data-testid="run-verdict"><strong>{}</strong></p>'
            '<table data-testid="run-counts"><thead><tr><th>category</th><th>lines</th></tr>'
            "</thead><tbody>{}</tbody></table>"
            "<table><thead><tr><th>state</th><th>lines</th></tr></thead><tbody>{}</tbody></table>",
            verdict,
            categories,
            state_rows,
        )

    # --- actions --------------------------------------------------------------------------

    @admin.action(
        description="Void selected imports (imported by mistake)…",
        permissions=["import_statement"],
    )
    def void_selected(
        self, request: HttpRequest, queryset: QuerySet[ReconciliationRun]
    ) -> HttpResponse | None:
        form = confirmation_form(request)
        if not form.is_bound or not form.is_valid():
            return action_confirmation(
                request,
                model_admin=self,
                queryset=queryset,
                action_name="void_selected",
                title="Void statement imports",
                intro=VOID_INTRO,
                submit_label="Void with this reason",
                form=form,
            )
        voided = 0
        for run in queryset.order_by("pk"):
            if self._void(request, run, form, shown=f"#{run.pk}: {{}}".format) is not None:
                voided += 1
        if voided:
            self.message_user(
                request,
                f"{voided} import(s) voided; the same file can be imported again.",
                level=messages.SUCCESS,
            )
        return None

    # --- pages ----------------------------------------------------------------------------

    def list_buttons(self, request: HttpRequest) -> list[tuple[str, str]]:
        return [
            *(
                [("Import a statement…", reverse("admin:reconciliation_import_statement"))]
                if self.has_import_statement_permission(request)
                else []
            ),
            ("Finance dashboard", reverse("admin:reconciliation_dashboard")),
        ]

    def backoffice_pages(self) -> list[tuple[str, Callable[..., HttpResponse], str]]:
        return [
            ("dashboard/", self.dashboard_view, "reconciliation_dashboard"),
            ("import/", self.import_view, "reconciliation_import_statement"),
            ("<int:run_id>/void/", self.void_view, "reconciliation_run_void"),
        ]

    def _void(
        self,
        request: HttpRequest,
        run: ReconciliationRun,
        form: ReasonForm,
        *,
        shown: Callable[[str], str] = str,
    ) -> ReconciliationRun | None:
        """Voids one import with the form's reason; an error is shown and answers ``None``."""
        return service_run(
            self,
            request,
            lambda: statement_import_void(
                run_id=run.pk,
                reason=form.cleaned_data["reason"],
                voided_by=cast(User, request.user),
                request=request,
            ),
            shown=shown,
            refusal_denied=False,
        )

    def void_view(self, request: HttpRequest, run_id: int) -> HttpResponse:
        """ "Void this import…" on the import's page: the reason, then the void (as the list's
        action does)."""
        if not self.has_import_statement_permission(request):
            raise PermissionDenied("You may not void statement imports.")
        run = get_object_or_404(ReconciliationRun, pk=run_id)
        change_url = reverse("admin:reconciliation_reconciliationrun_change", args=[run.pk])
        form = confirmation_form(request)
        if request.method == "POST" and form.is_bound and form.is_valid():
            if self._void(request, run, form) is not None:
                self.message_user(
                    request,
                    f"Import #{run.pk} voided; {run.file_name} can be imported again.",
                    level=messages.SUCCESS,
                )
            return HttpResponseRedirect(change_url)
        return action_confirmation(
            request,
            model_admin=self,
            queryset=ReconciliationRun.objects.filter(pk=run.pk),
            action_name="void_selected",
            title="Void this statement import",
            intro=VOID_INTRO,
            submit_label="Void with this reason",
            form=form,
        )

    def dashboard_view(self, request: HttpRequest) -> HttpResponse:
        return finance_dashboard_view(request, model_admin=self)

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_import_statement_permission(request):
            raise PermissionDenied("You may not import statements.")
        form = StatementUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["statement_file"]
            start, end = form.cleaned_data.get("period_start"), form.cleaned_data.get("period_end")
            try:
                result = statement_import(
                    content=upload.read(),
                    file_name=upload.name,
                    statement_format=form.cleaned_data["statement_format"],
                    mode=form.cleaned_data["mode"] or None,
                    imported_by=cast(User, request.user),
                    period=(start, end) if start and end else None,
                    request=request,
                )
            except ApplicationError as error:
                field, _, message = error.message.partition(": ")
                if field == "mode":
                    form.add_error("mode", message)
                else:
                    form.add_error(None, error.message)
            else:
                run = result.run
                if result.duplicate:
                    self.message_user(
                        request,
                        f"This file was already imported as #{run.pk} ({run.file_name}); "
                        "nothing was imported again.",
                        level=messages.WARNING,
                    )
                else:
                    self.message_user(
                        request,
                        f"Imported {run.line_count} line(s) from {run.file_name} as #{run.pk}: "
                        f"{run.category_counts.get(MatchCategory.MATCHED, 0)} matched, "
                        f"{run.exception_count} exception(s).",
                        level=messages.SUCCESS,
                    )
                return HttpResponseRedirect(
                    reverse("admin:reconciliation_reconciliationrun_change", args=[run.pk])
                )
        context = {
            **page_context(self, request, "Import a statement"),
            "form": form,
            "formats": list(FORMATS.values()),
            "zone_label": local_zone_label(),
        }
        return TemplateResponse(request, "admin/reconciliation/import_statement.html", context)

    def detail_buttons(self, request: HttpRequest, object_id: str) -> list[tuple[str, str]]:
        buttons = []
        if object_id.isdigit():
            buttons.append(
                (
                    "Work the exceptions",
                    _items_url(run__id__exact=object_id, state="unresolved"),
                )
            )
            if (
                self.has_import_statement_permission(request)
                and ReconciliationRun.objects.filter(pk=object_id, voided_at__isnull=True).exists()
            ):
                buttons.append(
                    (
                        "Void this import…",
                        reverse("admin:reconciliation_run_void", args=[object_id]),
                    )
                )
        return buttons
