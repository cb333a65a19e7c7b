"""The reconciliation back office's forms and list filters (``reconciliation.admin`` uses them):
the statement upload, proposing a resolution from a line, and the voided / state / kind
filters."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from merchants.models import Mode
from payouts.services import RESOLUTION_REASON_MIN_LENGTH
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
    reason = forms.CharField(
        label="Internal reason",
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        min_length=RESOLUTION_REASON_MIN_LENGTH,
        strip=True,
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

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[ReconciliationItem]
    ) -> QuerySet[ReconciliationItem]:
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
