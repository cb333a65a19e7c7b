"""The reconciliation back office's forms, list filters and confirmation texts
(``reconciliation.admin`` uses them): the statement upload, proposing a resolution from a line,
the voided / state / kind filters, and how a confirmation page names the lines it acts on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from merchants.models import Mode
from payouts.admin_resolution import resolution_reason_field
from reconciliation.formats import FORMATS
from reconciliation.models import (
    MatchCategory,
    ReconciliationItem,
    ReconciliationRun,
    StatementFormat,
)
from reconciliation.selectors import UNRESOLVED_STATES, ExceptionState

UPLOAD_MAX_BYTES = 20 * 1024 * 1024
MODE_FROM_FILE = ""

if TYPE_CHECKING:
    from reconciliation.selectors import ItemsWithState


class StatementUploadForm(forms.Form):
    statement_file = forms.FileField(
        label="Statement file", help_text="A CSV file as the provider or bank exports it"
    )
    statement_format = forms.ChoiceField(
        label="Format",
        choices=StatementFormat.choices,
        help_text=" ".join(f"{spec.description}" for spec in FORMATS.values()),
    )
    mode = forms.ChoiceField(
        label="Mode",
        choices=[(MODE_FROM_FILE, "From the file's references"), *Mode.choices],
        initial=MODE_FROM_FILE,
        required=False,
        help_text="Whose payouts the statement is matched against. From the file: the mode of "
        "the payouts its references name; if they name none of ours, or both modes, choose.",
    )
    period_start = forms.DateField(
        label="Period from",
        required=False,
        help_text="Optional: the first day the statement covers (Lagos). Default: its first line's",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    period_end = forms.DateField(
        label="Period to",
        required=False,
        help_text="Optional: the last day the statement covers (Lagos). Default: its last line's",
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    def clean_statement_file(self) -> Any:
        upload = self.cleaned_data["statement_file"]
        if upload.size > UPLOAD_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is larger than {UPLOAD_MAX_BYTES // (1024 * 1024)} MB; split it."
            )
        return upload

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        start, end = cleaned.get("period_start"), cleaned.get("period_end")
        if (start is None) != (end is None):
            raise forms.ValidationError("Give both period days, or neither.")
        if start is not None and end is not None and end < start:
            self.add_error("period_end", "must not be earlier than the first day")
        return cleaned


class ProposeFromLineForm(forms.Form):
    reason = resolution_reason_field(
        help_text="Prefilled from the statement line; add what else you checked. The merchant "
        "never sees it.",
    )
    checked = forms.BooleanField(
        label="I have checked that this statement line is the transfer of this payout",
        required=True,
    )


class VoidedFilter(admin.SimpleListFilter):
    title = "voided"
    parameter_name = "voided"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("no", "In force"), ("yes", "Voided")]

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[ReconciliationRun]
    ) -> QuerySet[ReconciliationRun]:
        if self.value() in ("yes", "no"):
            return queryset.filter(voided_at__isnull=self.value() == "no")
        return queryset


class StateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("unresolved", "Unresolved (open or proposed)"), *ExceptionState.choices]

    def queryset(self, request: HttpRequest, queryset: ItemsWithState) -> ItemsWithState:
        value = self.value()
        if value == "unresolved":
            return queryset.filter(state__in=UNRESOLVED_STATES)
        if value in ExceptionState.values:
            return queryset.filter(state=value)
        return queryset


class ExceptionsOnlyFilter(admin.SimpleListFilter):
    title = "kind"
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("exceptions", "Exceptions only")]

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[ReconciliationItem]
    ) -> QuerySet[ReconciliationItem]:
        if self.value() == "exceptions":
            return queryset.exclude(category=MatchCategory.MATCHED)
        return queryset


VOID_INTRO = (
    "The imports below will be voided: their lines leave the exceptions queue and the "
    "dashboard, and the same file can then be imported again (in the right mode). The imports "
    "and their lines stay, marked voided."
)


def item_labels_by_reference(items: list[ReconciliationItem]) -> list[str]:
    """One line per payout reference (the statement's reference for a line not ours), with the
    lines it covers: ``po_… — line 3: Amount mismatch; line 7: On the statement twice``."""
    lines_by_reference: dict[str, list[str]] = {}
    for item in items:
        reference = (
            (item.payout.internal_reference if item.payout else "")
            or item.statement_reference
            or item.statement_provider_reference
            or item.statement_session_id
            or f"#{item.pk}"
        )
        where = f"line {item.line_number}" if item.line_number else "not on the statement"
        lines_by_reference.setdefault(reference, []).append(
            f"import #{item.run_id} {where}: {item.get_category_display()}"
        )
    return [f"{reference} — {'; '.join(lines)}" for reference, lines in lines_by_reference.items()]
