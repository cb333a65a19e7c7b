"""Back office for collections. Transactions are read-only here: their status changes only
through the services (confirmation, expiry). Their events and deliveries are in ``webhooks``.
Seeing them needs the model's view permission, like every back-office page; changes to the fee
schedule and customers are audited."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import urlencode

from audit.backoffice import BackOfficeAdminMixin, csv_response, page_context
from audit.services import audit_record
from collections_app.models import (
    CollectionFeeSchedule,
    CollectionTransaction,
    Customer,
    PaymentStatus,
    TransactionAttempt,
    TransactionSplitEntry,
)
from collections_app.reports import (
    MAX_REPORT_DAYS,
    CollectionSettlementReport,
    ReportRangeError,
    SettlementRow,
    SettlementTotals,
    SubaccountShare,
    collection_settlement_report,
)
from core.admin import (
    ReadOnlyAdminMixin,
    ReadOnlyTabularInline,
    merchant_column,
    money_cell,
    money_column,
    status_column,
    time_column,
)
from core.dates import local_today, local_zone_label
from core.money import CURRENCY_NGN, format_amount
from merchants.models import Merchant, Mode

# Refunding is a money decision: the finance approver's permission, as in ``refunds.admin``.
REFUND_PERMISSION = "payouts.approve_resolution"


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


class TransactionSplitEntryInline(ReadOnlyTabularInline):
    model = TransactionSplitEntry
    fields = ("subaccount", "share")
    readonly_fields = fields


class TransactionAttemptInline(ReadOnlyTabularInline):
    model = TransactionAttempt
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
    # Fits 1400 px; amount to be paid, amount paid and the gateway fields are on the change page.
    list_display = (
        "created_display",
        "reference",
        "client_reference",
        "merchant_display",
        "channel",
        "amount_display",
        "fee_display",
        "status_display",
    )
    list_display_links = ("reference",)
    list_filter = ("mode", "payment_status", "channel")
    search_fields = ("reference", "client_reference", "customer__email", "gateway_reference")
    date_hierarchy = "created_at"
    list_select_related = ("merchant",)
    exclude = ("request_fingerprint",)
    inlines = [TransactionSplitEntryInline, TransactionAttemptInline]

    created_display = time_column("created_at", "created")

    merchant_display = merchant_column(live_mode=Mode.LIVE)

    amount_display = money_column("amount", "amount")

    fee_display = money_column("transaction_fee", "fee")

    status_display = status_column("payment_status", "status")

    # --- Refund (the refunds back office: ``refunds.admin``) ---------------------------------

    change_form_template = "admin/backoffice/change_form.html"

    def detail_buttons(self, request: HttpRequest, object_id: str) -> list[tuple[str, str]]:
        """A paid transaction's page offers "Refund" to whoever may refund (the finance
        approver's permission), opening the refund page with its reference filled in."""
        collection = (
            CollectionTransaction.objects.filter(pk=object_id)
            .only("reference", "payment_status")
            .first()
            if object_id.isdigit()
            else None
        )
        if (
            collection is not None
            and collection.payment_status == PaymentStatus.PAID
            and self.user_has(request, REFUND_PERMISSION)
        ):
            query = urlencode({"reference": collection.reference})
            return [("Refund", f"{reverse('admin:refunds_refund_collection')}?{query}")]
        return []

    # --- Settlement report (see the section at the end of this module) ----------------------

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        context = dict(extra_context or {})
        if self.user_has(request, SETTLEMENT_REPORT_PERMISSION):
            context["settlement_report_url"] = reverse(
                "admin:collections_app_collectiontransaction_settlement_report"
            )
        return super().changelist_view(request, context)

    def backoffice_pages(self) -> list[tuple[str, Callable[..., HttpResponse], str]]:
        return [
            (
                "settlement-report/",
                self.settlement_report_view,
                "collections_app_collectiontransaction_settlement_report",
            ),
            (
                "settlement-report/csv/",
                self.settlement_report_export_view,
                "collections_app_collectiontransaction_settlement_report_export",
            ),
        ]

    def _settlement_report(
        self, request: HttpRequest, *, with_settlements: bool = False
    ) -> tuple[SettlementReportForm, CollectionSettlementReport | None]:
        """The form bound to the query string over the defaults, and the report it asks for
        (``None`` while the form has errors); the page's with the settlements and refunds."""
        if not self.user_has(request, SETTLEMENT_REPORT_PERMISSION):
            raise PermissionDenied("You may not see the collections settlement report.")
        form = SettlementReportForm(settlement_report_form_data(request))
        if not form.is_valid():
            return form, None
        merchant = form.cleaned_data["merchant"]
        try:
            report = collection_settlement_report(
                first_day=form.cleaned_data["first_day"],
                last_day=form.cleaned_data["last_day"],
                merchant_id=merchant.pk if merchant is not None else None,
                mode=form.cleaned_data["mode"],
                with_settlements=with_settlements,
            )
        except ReportRangeError as error:
            form.add_error(error.field if error.field in form.fields else None, error.reason)
            return form, None
        return form, report

    def settlement_report_view(self, request: HttpRequest) -> HttpResponse:
        form, report = self._settlement_report(request, with_settlements=True)
        context = {
            **page_context(self, request, "Collections settlement report"),
            "form": form,
            "report": report,
            "zone_label": local_zone_label(),
            "max_days": MAX_REPORT_DAYS,
        }
        if report is not None:
            context.update(settlement_report_display(report))
            context["export_url"] = (
                reverse("admin:collections_app_collectiontransaction_settlement_report_export")
                + "?"
                + urlencode(settlement_report_query(report))
            )
        return TemplateResponse(
            request, "admin/collections_app/collectiontransaction/settlement_report.html", context
        )

    def settlement_report_export_view(self, request: HttpRequest) -> HttpResponse:
        """The report as CSV (``SETTLEMENT_CSV_COLUMNS``); audited. With invalid parameters it
        sends the user back to the page, which shows the errors."""
        _form, report = self._settlement_report(request)
        if report is None:
            page = reverse("admin:collections_app_collectiontransaction_settlement_report")
            query = request.GET.urlencode()
            return HttpResponseRedirect(f"{page}?{query}" if query else page)
        audit_record(
            actor=request.user,
            action=self.audit_action("settlement_report_export"),
            obj=CollectionTransaction,
            after={
                **settlement_report_query(report),
                "rows": len(report.rows),
                "transaction_count": report.totals.transaction_count,
                "gross": report.totals.gross,
            },
            request=request,
        )
        return csv_response(
            filename_stem=(
                f"collection-settlement-{report.first_day.isoformat()}"
                f"-{report.last_day.isoformat()}"
            ),
            header=SETTLEMENT_CSV_COLUMNS,
            rows=settlement_report_csv_rows(report),
        )


@admin.register(TransactionAttempt)
class TransactionAttemptAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = ("transaction", "outcome", "source", "applied", "status_before", "created_at")
    list_filter = ("applied", "outcome", "source")
    search_fields = ("transaction__reference", "gateway_reference")
    list_select_related = ("transaction",)


# --- Settlement report ---------------------------------------------------------------------------
#
# Finance's view of where collected money goes (``collections_app.reports``): per Lagos day,
# merchant and mode, the paid transactions' gross, our fees, each subaccount's split shares and
# the merchant's net. The page needs ``collections_app.view_collectiontransaction``; its CSV
# download is audited (``collections_app.collectiontransaction.settlement_report_export``).
#
# The page also shows, per row, what was settled into the merchant's wallet and refunded that day
# beside the wallet statement's settlements and refunds (``with_settlements``), with a row of its
# own for a day that has settlements or refunds but no paid collection.
#
# The CSV has one row per day × merchant × mode with paid collections: every amount column
# (gross, fees, split shares, net) can be summed in a spreadsheet without double counting, and
# net + fees + split shares = gross on every line. The ``splits`` column spells out the
# subaccounts' shares of that row (``ACCT_code (account name): 1500.00; ...``); the page shows
# each subaccount's total over the whole range. Amounts are plain (``1234.50``), days are Lagos
# calendar days in ISO form (``2026-11-23``), merchant names are plain text. No totals line, so
# that a column sum is the total.

SETTLEMENT_REPORT_PERMISSION = "collections_app.view_collectiontransaction"
SETTLEMENT_CSV_COLUMNS = (
    "day",
    "merchant_id",
    "merchant_name",
    "mode",
    "currency",
    "transaction_count",
    "gross_collected",
    "fees",
    "split_shares",
    "net_to_merchant",
    "splits",
)


class SettlementReportForm(forms.Form):
    first_day = forms.DateField(
        label="From",
        input_formats=["%Y-%m-%d"],
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        help_text="Lagos day the payments were made, inclusive.",
    )
    last_day = forms.DateField(
        label="To",
        input_formats=["%Y-%m-%d"],
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        help_text=f"Inclusive; at most {MAX_REPORT_DAYS} days after From.",
    )
    merchant = forms.ModelChoiceField(
        queryset=Merchant.objects.order_by("name", "id"),
        required=False,
        empty_label="All merchants",
    )
    mode = forms.ChoiceField(choices=Mode.choices)


def settlement_report_form_data(request: HttpRequest) -> dict[str, str]:
    """The query string over the defaults: yesterday (Lagos), every merchant, live mode."""
    yesterday = (local_today() - timedelta(days=1)).isoformat()
    defaults = {"first_day": yesterday, "last_day": yesterday, "merchant": "", "mode": Mode.LIVE}
    return {name: request.GET.get(name, default) for name, default in defaults.items()}


def settlement_report_query(report: CollectionSettlementReport) -> dict[str, str]:
    """The report's parameters as the page's query string."""
    return {
        "first_day": report.first_day.isoformat(),
        "last_day": report.last_day.isoformat(),
        "merchant": "" if report.merchant_id is None else str(report.merchant_id),
        "mode": report.mode or "",
    }


def _shares_display(shares: tuple[SubaccountShare, ...]) -> list[dict[str, Any]]:
    return [
        {"code": share.account_code, "name": share.account_name, "amount": money_cell(share.amount)}
        for share in shares
    ]


def settlement_report_display(report: CollectionSettlementReport) -> dict[str, Any]:
    """The report's rows and totals with every amount as an admin money cell."""
    totals = report.totals
    return {
        "rows": [
            {
                "day": row.day,
                "merchant_id": row.merchant_id,
                "merchant_name": row.merchant_name,
                "mode": row.mode,
                "transaction_count": row.transaction_count,
                "gross": money_cell(row.gross),
                "fees": money_cell(row.fees),
                "shares": _shares_display(row.shares),
                "split_total": money_cell(row.split_total),
                "net": money_cell(row.net),
                **_settled_display(row),
            }
            for row in report.rows
        ],
        "totals": {
            "transaction_count": totals.transaction_count,
            "gross": money_cell(totals.gross),
            "fees": money_cell(totals.fees),
            "shares": _shares_display(totals.shares),
            "split_total": money_cell(totals.split_total),
            "net": money_cell(totals.net),
            **_settled_display(totals),
        },
    }


def _settled_display(figures: SettlementRow | SettlementTotals) -> dict[str, Any]:
    """What was settled into the wallet and refunded that day, beside the wallet statement's
    settlements and refunds, and whether they agree."""
    return {
        "settlement_count": figures.settlement_count,
        "settled": money_cell(figures.settled),
        "refund_count": figures.refund_count,
        "refunds": money_cell(figures.refunds),
        "refunds_from_wallet": money_cell(figures.refunds_from_wallet),
        "statement_settlements": money_cell(figures.statement_settlements),
        "statement_refunds": money_cell(figures.statement_refunds),
        "agrees": figures.agrees_with_statement,
    }


def settlement_report_csv_rows(report: CollectionSettlementReport) -> list[list[Any]]:
    return [
        [
            row.day.isoformat(),
            row.merchant_id,
            row.merchant_name,
            row.mode,
            CURRENCY_NGN,
            row.transaction_count,
            format_amount(row.gross),
            format_amount(row.fees),
            format_amount(row.split_total),
            format_amount(row.net),
            "; ".join(
                f"{share.account_code} ({share.account_name}): {format_amount(share.amount)}"
                for share in row.shares
            ),
        ]
        for row in report.rows
    ]
