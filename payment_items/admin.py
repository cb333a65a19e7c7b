"""Back office for the catalogue and the split configuration.

``form_data`` is edited as JSON and validated (``payment_items.validators``); cross-merchant or
cross-mode links are refused by the models' ``clean()``. Deleting is soft: the "Mark as deleted"
action (which needs the change permission of the model) sets ``is_deleted`` and ``delete_at``.
Every add, change and soft delete writes an audit record.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from audit.backoffice import BackOfficeAdminMixin
from audit.services import audit_record
from payment_items.models import (
    Business,
    Category,
    PaymentItem,
    SplitType,
    Subaccount,
    SubCategory,
    TransactionSplit,
    TransactionSplitShare,
)


@admin.action(description="Mark as deleted", permissions=["change"])
def mark_deleted(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    marked = 0
    for row in queryset.filter(is_deleted=False).order_by("pk"):
        with transaction.atomic():
            row.is_deleted = True
            row.save()
            audit_record(
                actor=request.user,
                action=f"{row._meta.label_lower}.mark_deleted",
                obj=row,
                before={"is_deleted": False},
                after={"is_deleted": True, "delete_at": row.delete_at},
                request=request,
            )
        marked += 1
    modeladmin.message_user(request, f"{marked} row(s) marked as deleted.", level=messages.SUCCESS)


class CreatedByAdminMixin:
    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change and obj.created_by_id is None and request.user.is_authenticated:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)  # type: ignore[misc]


@admin.register(Business)
class BusinessAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("id", "business_name", "merchant", "mode", "created_at")
    list_filter = ("mode",)
    search_fields = ("business_name", "merchant__name")
    autocomplete_fields = ("merchant",)


class SubCategoryInline(admin.TabularInline):
    model = SubCategory
    extra = 0
    fields = ("name", "status", "business_registration_type_id", "is_deleted")


@admin.register(Category)
class CategoryAdmin(CreatedByAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("id", "name", "merchant", "mode", "status", "is_deleted", "created_at")
    list_filter = ("mode", "status", "is_deleted")
    search_fields = ("name", "merchant__name")
    autocomplete_fields = ("merchant",)
    readonly_fields = ("created_by", "delete_at", "created_at", "updated_at")
    inlines = [SubCategoryInline]
    actions = [mark_deleted]

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        for instance in formset.save(commit=False):
            if instance.created_by_id is None and request.user.is_authenticated:
                instance.created_by = request.user
            instance.save()
        for obj in formset.deleted_objects:
            obj.delete()


@admin.register(SubCategory)
class SubCategoryAdmin(CreatedByAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("id", "name", "category", "status", "business_registration_type_id")
    list_filter = ("status", "is_deleted", "category__mode")
    search_fields = ("name", "category__name")
    readonly_fields = ("created_by", "delete_at", "created_at", "updated_at")
    actions = [mark_deleted]


class PaymentItemAdminForm(forms.ModelForm):
    form_data = forms.JSONField(
        required=False,
        initial=list,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 80}),
        help_text=(
            'A JSON array of {"name", "type", "value", "options", "required"}, for example '
            + json.dumps(
                [
                    {
                        "name": "student_id",
                        "type": "input",
                        "value": "",
                        "options": [],
                        "required": True,
                    }
                ]
            )
        ),
    )

    class Meta:
        model = PaymentItem
        fields = (
            "merchant",
            "mode",
            "business",
            "name",
            "description",
            "amount",
            "form_data",
            "is_enumerated_data",
            "transaction_split",
            "category",
            "sub_category",
            "status",
            "is_deleted",
            "allow_quick_print",
            "can_edit_item",
            "show_on_agent_app",
        )

    def clean_form_data(self) -> Any:
        value = self.cleaned_data.get("form_data")
        return [] if value is None else value

    def clean_amount(self) -> Decimal:
        amount = self.cleaned_data["amount"]
        if amount is not None and amount < 0:
            raise ValidationError("Amount must not be negative (0 means variable amount).")
        return amount


@admin.register(PaymentItem)
class PaymentItemAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    form = PaymentItemAdminForm
    list_display = (
        "id",
        "name",
        "merchant",
        "mode",
        "amount",
        "status",
        "is_deleted",
        "category",
        "transaction_split",
    )
    list_filter = ("mode", "status", "is_deleted", "allow_quick_print", "show_on_agent_app")
    search_fields = ("name", "merchant__name", "business__business_name")
    autocomplete_fields = ("merchant",)
    raw_id_fields = ("business", "category", "sub_category", "transaction_split")
    readonly_fields = ("delete_at", "created_at", "updated_at")
    actions = [mark_deleted]


@admin.register(Subaccount)
class SubaccountAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("account_code", "account_name", "bank", "account_number", "merchant", "mode")
    list_filter = ("mode", "is_active")
    search_fields = ("account_code", "account_name", "account_number", "merchant__name")
    autocomplete_fields = ("merchant",)
    readonly_fields = ("account_code", "created_at", "updated_at")


class TransactionSplitShareFormSet(forms.BaseInlineFormSet):
    def clean(self) -> None:
        super().clean()
        split: TransactionSplit = self.instance
        total = Decimal("0")
        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if not data or data.get("DELETE") or data.get("share") is None:
                continue
            total += data["share"]
        if split.split_type == SplitType.PERCENTAGE and total > Decimal("100"):
            raise ValidationError(f"Percentage shares total {total}%, more than 100%.")


class TransactionSplitShareInline(admin.TabularInline):
    model = TransactionSplitShare
    formset = TransactionSplitShareFormSet
    extra = 1
    raw_id_fields = ("subaccount",)


@admin.register(TransactionSplit)
class TransactionSplitAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("transaction_split_code", "name", "split_type", "merchant", "mode")
    list_filter = ("mode", "split_type", "is_active")
    search_fields = ("transaction_split_code", "name", "merchant__name")
    autocomplete_fields = ("merchant",)
    readonly_fields = ("transaction_split_code", "created_at", "updated_at")
    inlines = [TransactionSplitShareInline]
