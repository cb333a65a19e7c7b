"""Back office for collections. Transactions are read-only here: their status changes only
through the services (confirmation, expiry). Their events and deliveries are in ``webhooks``.
Seeing them needs the model's view permission, like every back-office page; changes to the fee
schedule and customers are audited."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from audit.backoffice import BackOfficeAdminMixin
from collections_app.models import (
    CollectionFeeSchedule,
    CollectionTransaction,
    Customer,
    TransactionAttempt,
    TransactionSplitEntry,
)
from core.admin import ReadOnlyAdminMixin


@admin.register(CollectionFeeSchedule)
class CollectionFeeScheduleAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = (
        "name",
        "percentage_rate",
        "flat_fee",
        "flat_fee_waiver_below",
        "fee_cap",
        "is_active",
        "updated_at",
    )
    list_filter = ("is_active",)


@admin.register(Customer)
class CustomerAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("customer_tag", "email", "first_name", "last_name", "merchant", "mode")
    list_filter = ("mode",)
    search_fields = ("customer_tag", "email", "phone_number", "last_name")
    readonly_fields = ("merchant", "mode", "customer_tag", "created_at", "updated_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


class TransactionSplitEntryInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = TransactionSplitEntry
    extra = 0
    fields = ("subaccount", "share")
    readonly_fields = fields


class TransactionAttemptInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = TransactionAttempt
    extra = 0
    fields = (
        "created_at",
        "outcome",
        "source",
        "applied",
        "status_before",
        "gateway_used",
        "gateway_reference",
        "note",
        "meta",
    )
    readonly_fields = fields


@admin.register(CollectionTransaction)
class CollectionTransactionAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = (
        "reference",
        "client_reference",
        "merchant",
        "mode",
        "channel",
        "amount",
        "transaction_fee",
        "payment_status",
        "created_at",
    )
    list_filter = ("mode", "payment_status", "channel")
    search_fields = ("reference", "client_reference", "customer__email", "gateway_reference")
    date_hierarchy = "created_at"
    list_select_related = ("merchant",)
    exclude = ("request_fingerprint",)
    inlines = [TransactionSplitEntryInline, TransactionAttemptInline]


@admin.register(TransactionAttempt)
class TransactionAttemptAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("transaction", "outcome", "source", "applied", "status_before", "created_at")
    list_filter = ("applied", "outcome", "source")
    search_fields = ("transaction__reference", "gateway_reference")
    list_select_related = ("transaction",)
