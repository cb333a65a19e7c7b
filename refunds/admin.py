"""Back office for refunds: the list and the detail are read-only (a refund changes only
through ``refunds.services``); finance refunds a paid collection from the "Refund a collection"
page, with the finance approver's permission (``payouts.approve_resolution``, the one the back
office asks for every money decision), audited (``refunds.refund.create``).

Seeing refunds needs ``refunds.view_refund`` or the collections' view permission
(``collections_app.view_collectiontransaction``), which every finance role holds."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import SafeString

from audit.backoffice import ServiceRecordsAdmin, page_context, service_run
from audit.services import audit_record
from collections_app.models import CollectionTransaction
from core.admin import money_column, status_badge, time_column
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
class RefundAdmin(ServiceRecordsAdmin):
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

    created_display = time_column("created_at", "created")

    @admin.display(description="transaction")
    def transaction_display(self, obj: Refund) -> str:
        return obj.collection.reference

    amount_display = money_column("amount", "amount")

    @admin.display(description="status", ordering="status")
    def status_display(self, obj: Refund) -> SafeString:
        return status_badge(obj.status)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return any(self.user_has(request, permission) for permission in VIEW_PERMISSIONS)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.has_view_permission(request)

    def has_refund_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, REFUND_PERMISSION)

    def backoffice_pages(self) -> list[tuple[str, Callable[..., HttpResponse], str]]:
        return [("refund-collection/", self.refund_collection_view, "refunds_refund_collection")]

    def list_buttons(self, request: HttpRequest) -> list[tuple[str, str]]:
        if not self.has_refund_permission(request):
            return []
        return [("Refund a collection", reverse("admin:refunds_refund_collection"))]

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
        context = {**page_context(self, request, "Refund a collection"), "form": form}
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
        result = service_run(
            self,
            request,
            lambda: refund_create(
                merchant=collection.merchant,
                mode=collection.mode,
                transaction_reference=collection.reference,
                amount=data["amount"],
                reason=data["reason"],
                idempotency_key=data["idempotency_key"],
                initiated_by=f"staff:{request.user.get_username()}",
            ),
            refusal_denied=False,
        )
        if result is None:
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
