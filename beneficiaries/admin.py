"""Back office for saved beneficiaries: read-only (merchants save and delete them through the
API)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.safestring import SafeString

from audit.backoffice import BackOfficeAdminMixin
from beneficiaries.models import Beneficiary
from core.admin import (
    LocalDateRangeFilter,
    ReadOnlyAdminMixin,
    bank_account_cell,
    merchant_column,
    time_column,
)


class DeletedFilter(admin.SimpleListFilter):
    title = "deleted"
    parameter_name = "deleted"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("no", "Saved"), ("yes", "Deleted")]

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[Beneficiary]
    ) -> QuerySet[Beneficiary]:
        if self.value() == "no":
            return queryset.filter(deleted_at__isnull=True)
        if self.value() == "yes":
            return queryset.filter(deleted_at__isnull=False)
        return queryset


@admin.register(Beneficiary)
class BeneficiaryAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = (
        "created_display",
        "merchant_display",
        "mode",
        "nickname",
        "account_display",
        "deleted_display",
    )
    list_filter = (
        "mode",
        DeletedFilter,
        ("merchant", admin.RelatedOnlyFieldListFilter),
        ("created_at", LocalDateRangeFilter),
    )
    search_fields = ("=account_number", "account_name", "nickname")
    search_help_text = "Account number (exact), account name or nickname."
    list_select_related = ("merchant",)
    list_per_page = 50
    ordering = ("-created_at", "-id")
    fields = (
        "merchant",
        "mode",
        "nickname",
        "account_number",
        "account_name",
        "bank_code",
        "bank_name",
        "bank_id",
        "created_at",
        "deleted_at",
    )
    readonly_fields = fields

    created_display = time_column("created_at", "created")

    merchant_display = merchant_column()

    @admin.display(description="account", ordering="account_name")
    def account_display(self, obj: Beneficiary) -> SafeString:
        """``ACCOUNT NAME · Bank · 0123456789`` in one cell."""
        return bank_account_cell(obj.account_name, obj.bank_name, obj.account_number)

    deleted_display = time_column("deleted_at", "deleted")
