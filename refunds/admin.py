"""Back office for refunds: the list and the detail are read-only (a refund changes only
through ``refunds.services``); finance refunds a paid collection from the "Refund a collection"
page, with the finance approver's permission (``payouts.approve_resolution``, the one the back
office asks for every money decision), audited (``refunds.refund.create``).

Seeing refunds needs ``refunds.view_refund`` or the collections' view permission
(``collections_app.view_collectiontransaction``), which every finance role holds."""

from __future__ import annotations

import secrets
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.safestring import SafeString

from audit.backoffice import BackOfficeAdminMixin, read_only_page_context
from audit.services import audit_record
from collections_app.models import CollectionTransaction
from core.admin import ReadOnlyAdminMixin, local_time_cell, money_cell, status_badge
from core.exceptions import ApplicationError
from core.money import AmountError, parse_amount
from refunds.models import Refund
from refunds.services import refund_create, refund_summary

REFUND_PERMISSION = "payouts.approve_resolution"
VIEW_PERMISSIONS = ("refunds.view_refund", "collections_app.view_collectiontransaction")


class RefundCollectionForm(forms.Form):
    transaction_reference = forms.CharField(
        label="Transaction reference", max_length=40, strip=True
    )
    amount = forms.CharField(
        label="Amount",
        required=False,
        strip=True,
        help_text="Blank: all that is left to refund. At most two decimals, e.g. 2500.00.",
    )
    reason = forms.CharField(
        label="Reason",
        max_length=255,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text="Why, and on whose request (sent to the provider, kept in the audit trail).",
    )
    # One form, one refund: submitting the same page twice replays the first refund.
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=100)

    def clean_amount(self) -> Any:
        value = self.cleaned_data["amount"]
        if not value:
            return None
        try:
            return parse_amount(value)
        except AmountError as error:
            raise forms.ValidationError(str(error)) from error


@admin.register(Refund)
class RefundAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    change_form_template = "admin/backoffice/change_form.html"
    change_list_template = "admin/backoffice/change_list.html"
    list_display = (
        "created_display",
        "refund_id",
        "transaction_display",
        "merchant",
        "mode",
        "amount_display",
        "status_display",
    )
    list_display_links = ("refund_id",)
    list_filter = ("status", "mode")
    search_fields = ("=refund_id", "=collection__reference", "=provider_reference")
    search_help_text = "Refund id, transaction reference or provider reference (exact)."
    list_select_related = ("merchant", "collection")
    exclude = ("request_fingerprint",)

    @admin.display(description="created", ordering="created_at")
    def created_display(self, obj: Refund) -> SafeString | str:
        return local_time_cell(obj.created_at)

    @admin.display(description="transaction")
    def transaction_display(self, obj: Refund) -> str:
        return obj.collection.reference

    @admin.display(description="amount", ordering="amount")
    def amount_display(self, obj: Refund) -> SafeString | str:
        return money_cell(obj.amount, obj.currency)

    @admin.display(description="status", ordering="status")
    def status_display(self, obj: Refund) -> SafeString:
        return status_badge(obj.status)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return any(self.user_has(request, permission) for permission in VIEW_PERMISSIONS)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.has_view_permission(request)

    def has_refund_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, REFUND_PERMISSION)

    def get_urls(self) -> list[URLPattern]:
        custom = [
            path(
                "refund-collection/",
                self.admin_site.admin_view(self.refund_collection_view),
                name="refunds_refund_collection",
            )
        ]
        return custom + super().get_urls()

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        buttons = []
        if self.has_refund_permission(request):
            buttons.append(("Refund a collection", reverse("admin:refunds_refund_collection")))
        return super().changelist_view(
            request, {**(extra_context or {}), "backoffice_buttons": buttons}
        )

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        return super().change_view(
            request, object_id, form_url, read_only_page_context(extra_context)
        )

    def refund_collection_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_refund_permission(request):
            raise PermissionDenied("You may not refund collections.")
        if request.method == "POST":
            form = RefundCollectionForm(request.POST)
            if form.is_valid():
                refund = self._refund(request, form)
                if refund is not None:
                    return HttpResponseRedirect(
                        reverse("admin:refunds_refund_change", args=[refund.pk])
                    )
        else:
            form = RefundCollectionForm(
                initial={
                    "transaction_reference": request.GET.get("reference", "")[:40],
                    "idempotency_key": f"admin-{secrets.token_hex(12)}",
                }
            )
        context = {
            **self.admin_site.each_context(request),
            "title": "Refund a collection",
            "opts": self.model._meta,
            "form": form,
        }
        return TemplateResponse(request, "admin/refunds/refund/refund_collection.html", context)

    def _refund(self, request: HttpRequest, form: RefundCollectionForm) -> Refund | None:
        data = form.cleaned_data
        collection = (
            CollectionTransaction.objects.filter(reference=data["transaction_reference"])
            .select_related("merchant")
            .first()
        )
        if collection is None:
            self.message_user(request, "Transaction not found", level=messages.ERROR)
            return None
        try:
            result = refund_create(
                merchant=collection.merchant,
                mode=collection.mode,
                transaction_reference=collection.reference,
                amount=data["amount"],
                reason=data["reason"],
                idempotency_key=data["idempotency_key"],
                initiated_by=f"staff:{request.user.get_username()}",
            )
        except ApplicationError as error:
            self.message_user(request, error.message, level=messages.ERROR)
            return None
        refund = result.refund
        if not result.duplicate:
            audit_record(
                actor=request.user,
                action=self.audit_action("create"),
                obj=refund,
                after={**refund_summary(refund), "transaction_reference": collection.reference},
                reason=data["reason"],
                request=request,
            )
        self.message_user(
            request,
            f"Refund {refund.refund_id} of {refund.amount} accepted for {collection.reference}; "
            "the provider's answer follows.",
            level=messages.SUCCESS,
        )
        return refund
