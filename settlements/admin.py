"""Back office for settlements and the platform ledger: everything here is read-only; money moves
only through ``settlements.services``.

* **Settlements** (``settlements.view_settlement``): the list (settled, id, merchant, counts and
  amounts), filters by mode, status and settled day (Lagos); the page shows the amounts, a link
  to the collections it settled and to its wallet ledger entry, and its subaccount shares with
  their payouts.
* **Settlement shares** (``settlements.view_settlementshare``): each share with its payout; the
  action **Re-send the share's payout** (``payouts.approve_resolution``, the finance approver's
  money permission; a typed reason; audited) asks ``settlement_share_payout_resend`` for a new
  payout of a share whose payout failed.
* **Platform ledger** (``settlements.view_platformledgerentry``): every posting, filtered by mode
  and bucket; **Platform balances** shows each bucket per mode and whether
  collected = fees + merchant credits + subaccount payouts + refunds + still owed.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any, cast

from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from audit.backoffice import (
    ServiceRecordsAdmin,
    action_confirmation,
    confirmation_form,
    page_context,
    service_run,
)
from audit.services import audit_record
from core.admin import (
    LocalDateRangeFilter,
    ReadOnlyTabularInline,
    merchant_column,
    money_cell,
    money_column,
    status_badge,
    time_column,
)
from core.dates import local_zone_label
from merchants.models import Mode
from settlements.models import (
    STILL_OWED_ACCOUNTS,
    PlatformAccount,
    PlatformLedgerEntry,
    Settlement,
    SettlementShare,
)
from settlements.platform_ledger import PlatformBalances, platform_balances

RESEND_PERMISSION = "payouts.approve_resolution"
PLATFORM_LEDGER_PERMISSION = "settlements.view_platformledgerentry"
RESEND_INTRO = (
    "A new payout of each selected share is created from the platform's wallet to the "
    "subaccount's bank account, through the ordinary dispatch. Only a share whose payout failed "
    "can be re-sent; the others are left as they are."
)
RESEND_UNAVAILABLE = "Re-sending a share's payout is not available on this installation."


def _payout_link(payout: Any) -> SafeString | str:
    if payout is None:
        return "—"
    return format_html(
        '<a href="{}">{}</a> {}',
        reverse("admin:payouts_payout_change", args=[payout.pk]),
        payout.internal_reference,
        status_badge(payout.status, payout.get_status_display()),
    )


def _share_payout_resend() -> Callable[..., Any] | None:
    """``settlements.services.settlement_share_payout_resend``, looked up when the action runs
    (the settlement services import payouts and collections; the admin module stays light)."""
    try:
        services = importlib.import_module("settlements.services")
    except ModuleNotFoundError as error:
        if error.name != "settlements.services":
            raise
        return None
    return getattr(services, "settlement_share_payout_resend", None)


class ShareColumns:
    """A share's subaccount, amount and payout, in the settlement's inline and the shares' list."""

    @admin.display(description="subaccount", ordering="subaccount__account_name")
    def subaccount_display(self, obj: SettlementShare) -> str:
        return f"{obj.subaccount.account_code} · {obj.subaccount.account_name}"

    amount_display = money_column("amount", "amount")

    @admin.display(description="payout")
    def payout_display(self, obj: SettlementShare) -> SafeString | str:
        return _payout_link(obj.payout)


class SettlementShareInline(ShareColumns, ReadOnlyTabularInline):
    model = SettlementShare
    fields = ("subaccount_display", "amount_display", "payout_display")
    readonly_fields = fields
    verbose_name_plural = "subaccount shares and their payouts"

    def get_queryset(self, request: HttpRequest) -> QuerySet[SettlementShare]:
        return super().get_queryset(request).select_related("subaccount", "payout")


# A settlement's amounts, in the list and on its page: gross - fees - shares - refunds = net.
SETTLEMENT_AMOUNTS = (
    "gross_display",
    "fees_display",
    "shares_display",
    "refunds_display",
    "net_display",
)


@admin.register(Settlement)
class SettlementAdmin(ServiceRecordsAdmin):
    list_display = (
        "settled_display",
        "settlement_id",
        "merchant_display",
        "transactions_link",
        *SETTLEMENT_AMOUNTS,
        "status",
    )
    list_display_links = ("settlement_id",)
    list_filter = (
        "mode",
        "status",
        ("merchant", admin.RelatedOnlyFieldListFilter),
        ("settled_at", LocalDateRangeFilter),
    )
    search_fields = ("=settlement_id", "merchant__name")
    search_help_text = "Settlement id (exact) or merchant name."
    list_select_related = ("merchant",)
    list_per_page = 50
    show_full_result_count = False
    inlines = (SettlementShareInline,)
    fields = (
        "settlement_id",
        "merchant",
        "mode",
        "status",
        "currency",
        "period_start",
        "period_end",
        "settled_at",
        "transactions_link",
        *SETTLEMENT_AMOUNTS,
        "ledger_entry_display",
        "created_at",
    )
    readonly_fields = fields

    def list_buttons(self, request: HttpRequest) -> list[tuple[str, str]]:
        if not self.user_has(request, PLATFORM_LEDGER_PERMISSION):
            return []
        return [("Platform balances", reverse("admin:settlements_platform_balances"))]

    settled_display = time_column("settled_at", "settled")

    merchant_display = merchant_column(live_mode=Mode.LIVE)

    @admin.display(description="transactions", ordering="transaction_count")
    def transactions_link(self, obj: Settlement) -> SafeString:
        url = reverse("admin:collections_app_collectiontransaction_changelist")
        return format_html(
            '<a href="{}?settlement__id__exact={}" data-testid="settlement-transactions">{}</a>',
            url,
            obj.pk,
            obj.transaction_count,
        )

    gross_display = money_column("gross", "gross")
    fees_display = money_column("fees", "fees")
    shares_display = money_column("subaccount_shares", "subaccount shares")
    refunds_display = money_column("refunds_deducted", "refunds deducted")
    net_display = money_column("net", "net to wallet")

    @admin.display(description="wallet ledger entry")
    def ledger_entry_display(self, obj: Settlement) -> SafeString | str:
        if obj.ledger_entry_id is None:
            return "— (nothing to credit)"
        url = reverse("admin:wallets_ledgerentry_change", args=[obj.ledger_entry_id])
        return format_html('<a href="{}">#{}</a>', url, obj.ledger_entry_id)


@admin.register(SettlementShare)
class SettlementShareAdmin(ShareColumns, ServiceRecordsAdmin):
    list_display = (
        "id",
        "settlement_link",
        "subaccount_display",
        "amount_display",
        "payout_display",
        "created_at",
    )
    list_filter = ("settlement__mode", ("payout__status", admin.AllValuesFieldListFilter))
    search_fields = (
        "=settlement__settlement_id",
        "subaccount__account_code",
        "=payout__internal_reference",
    )
    search_help_text = "Settlement id or payout reference (exact), or subaccount code."
    list_select_related = ("settlement", "subaccount", "payout")
    actions = ("resend_payout_selected",)
    fields = (
        "settlement_link",
        "subaccount_display",
        "amount_display",
        "payout_display",
        "created_at",
    )
    readonly_fields = fields

    def has_resend_payout_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, RESEND_PERMISSION)

    @admin.display(description="settlement", ordering="settlement__settled_at")
    def settlement_link(self, obj: SettlementShare) -> SafeString:
        url = reverse("admin:settlements_settlement_change", args=[obj.settlement_id])
        return format_html('<a href="{}">{}</a>', url, obj.settlement.settlement_id)

    @admin.action(description="Re-send the share's payout…", permissions=["resend_payout"])
    def resend_payout_selected(
        self, request: HttpRequest, queryset: QuerySet[SettlementShare]
    ) -> HttpResponse | None:
        resend = _share_payout_resend()
        if resend is None:
            self.message_user(request, RESEND_UNAVAILABLE, level=messages.ERROR)
            return None
        form = confirmation_form(request)
        if not form.is_bound or not form.is_valid():
            return action_confirmation(
                request,
                model_admin=self,
                queryset=queryset.select_related("settlement", "subaccount"),
                action_name="resend_payout_selected",
                title="Re-send settlement share payouts",
                intro=RESEND_INTRO,
                submit_label="Re-send with this reason",
                form=form,
            )
        actor = cast(User, request.user)
        sent = 0
        for share in queryset.select_related("payout").order_by("pk"):
            before = share.payout.internal_reference if share.payout else None
            result = service_run(
                self,
                request,
                functools.partial(resend, share_id=share.pk, actor=actor),
                shown=f"Share #{share.pk}: {{}}".format,
                refusal_denied=False,
            )
            if result is None:
                continue
            sent += 1
            audit_record(
                actor=actor,
                action=self.audit_action("payout_resend"),
                obj=share,
                before={"payout": before},
                after={
                    "payout": getattr(result, "internal_reference", None),
                    "reason": form.cleaned_data["reason"],
                },
                request=request,
            )
        if sent:
            self.message_user(request, f"{sent} share payout(s) re-sent.", level=messages.SUCCESS)
        return None


# What a posting belongs to, in the list and on its page: its group and the records it moved.
POSTING_REFERENCES = (
    "group",
    "merchant",
    "collection_id",
    "settlement_id",
    "refund_id",
    "payout_id",
)


@admin.register(PlatformLedgerEntry)
class PlatformLedgerEntryAdmin(ServiceRecordsAdmin):
    list_display = (
        "created_display",
        "mode",
        "account",
        "amount_display",
        *POSTING_REFERENCES,
    )
    list_filter = ("mode", "account", ("created_at", LocalDateRangeFilter))
    search_fields = ("=group",)
    search_help_text = "Posting group (exact), e.g. paid:TXN_…"
    list_select_related = ("merchant",)
    list_per_page = 100
    show_full_result_count = False
    readonly_fields = (
        "mode",
        "account",
        "amount",
        *POSTING_REFERENCES,
        "description",
        "created_at",
    )
    fields = readonly_fields

    def backoffice_pages(self) -> list[tuple[str, Callable[..., HttpResponse], str]]:
        return [("balances/", self.balances_view, "settlements_platform_balances")]

    def list_buttons(self, request: HttpRequest) -> list[tuple[str, str]]:
        return [("Platform balances", reverse("admin:settlements_platform_balances"))]

    created_display = time_column("created_at", "at")
    amount_display = money_column("amount", "amount")

    def balances_view(self, request: HttpRequest) -> HttpResponse:
        if not self.user_has(request, PLATFORM_LEDGER_PERMISSION):
            raise PermissionDenied(
                "The platform balances need permission to view the platform ledger."
            )
        modes = [
            platform_balances_display(mode=mode, balances=platform_balances(mode=mode))
            for mode in (Mode.LIVE, Mode.TEST)
        ]
        context = {
            **page_context(self, request, "Platform balances"),
            "modes": modes,
            "zone_label": local_zone_label(),
        }
        return TemplateResponse(request, "admin/settlements/platform_balances.html", context)


# The equation's right-hand side, in the order the page lists it.
ACCOUNTED_FOR: tuple[str, ...] = (
    PlatformAccount.FEES,
    PlatformAccount.MERCHANT_CREDITS,
    PlatformAccount.SUBACCOUNT_PAYOUTS,
    PlatformAccount.REFUNDS,
    *STILL_OWED_ACCOUNTS,
)


def platform_balances_display(*, mode: str, balances: PlatformBalances) -> dict[str, Any]:
    """One mode's buckets as money cells, each linked to its postings, with the equation."""
    changelist = reverse("admin:settlements_platformledgerentry_changelist")

    def bucket(account: str) -> dict[str, Any]:
        return {
            "account": account,
            "label": PlatformAccount(account).label,
            "amount": money_cell(balances[account]),
            "still_owed": account in STILL_OWED_ACCOUNTS,
            "url": f"{changelist}?mode__exact={mode}&account__exact={account}",
        }

    return {
        "mode": mode,
        "label": Mode(mode).label,
        "collected": bucket(PlatformAccount.COLLECTED),
        "buckets": [bucket(account) for account in ACCOUNTED_FOR],
        "still_owed": money_cell(balances.still_owed),
        "accounted_for": money_cell(balances.accounted_for),
        "difference": money_cell(balances[PlatformAccount.COLLECTED] - balances.accounted_for),
        "holds": balances.equation_holds,
    }
