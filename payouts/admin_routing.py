"""Back office of payout routing: the attempts of a payout (an inline on its page), the routing
rules ops edit, and each provider's health.

* ``PayoutAttemptInline``: every send of the payout, read-only (provider, reference, outcome,
  the provider's reference and message, when);
* ``PayoutRouteAdmin``: routing rules, added, changed and deleted by users with Django's
  ``payouts.add/change/delete_payoutroute`` permissions; every change writes an audit record
  (``BackOfficeAdminMixin``) and is checked by ``payouts.services.routing.payout_route_validate``
  (a test route reaches sandbox providers only, a live one never does);
* ``PayoutProviderCircuitAdmin``: provider health, one row per provider: the circuit's state,
  its attempts of the window and their timeout, not-sent and refusal rates, its last attempt.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from audit.backoffice import BackOfficeAdminMixin
from core.admin import ReadOnlyAdminMixin, ReadOnlyTabularInline, money_cell, status_badge
from core.dates import local_text
from core.exceptions import ApplicationError
from payouts.models import PayoutAttempt, PayoutProviderCircuit, PayoutRoute
from payouts.selectors import ProviderHealth, provider_health_list
from payouts.services.routing import payout_route_validate


class PayoutAttemptInline(ReadOnlyTabularInline):
    model = PayoutAttempt
    fields = (
        "number",
        "provider_name",
        "reference",
        "outcome",
        "provider_reference",
        "session_id",
        "message",
        "created_at",
        "completed_at",
    )
    readonly_fields = fields
    ordering = ("number",)
    verbose_name_plural = "attempts (each send to a provider)"


def _percent(value: float) -> str:
    return f"{value:.0%}"


def provider_health_table(health: list[ProviderHealth]) -> SafeString | str:
    """The providers' health as a small table (the payout page shows its providers')."""
    if not health:
        return "—"
    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                item.provider_name,
                status_badge(item.state, item.state.replace("_", "-")),
                item.attempts,
                _percent(item.rate(item.unknown)),
                _percent(item.rate(item.not_sent)),
                _percent(item.rate(item.rejected)),
                local_text(item.last_attempt_at) if item.last_attempt_at else "—",
            )
            for item in health
        ),
    )
    return format_html(
        '<table class="provider-health"><thead><tr><th>provider</th><th>circuit</th>'
        "<th>attempts (window)</th><th>timeouts</th><th>not sent</th><th>refused</th>"
        "<th>last attempt</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


class PayoutRouteForm(forms.ModelForm):
    class Meta:
        model = PayoutRoute
        fields = (
            "mode",
            "bank_code",
            "min_amount",
            "max_amount",
            "provider_name",
            "weight",
            "priority",
            "active",
        )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        try:
            payout_route_validate(
                mode=cleaned.get("mode", ""),
                provider_name=cleaned.get("provider_name", ""),
                min_amount=cleaned.get("min_amount"),
                max_amount=cleaned.get("max_amount"),
            )
        except ApplicationError as error:
            field, _sep, message = str(error.message).partition(": ")
            if field in self.fields and message:
                self.add_error(field, message)
            else:
                raise forms.ValidationError(str(error.message)) from error
        return cleaned


@admin.register(PayoutRoute)
class PayoutRouteAdmin(BackOfficeAdminMixin, admin.ModelAdmin):
    """Routing rules: which providers carry which payouts (audited changes)."""

    form = PayoutRouteForm
    list_display = (
        "mode",
        "bank_display",
        "band_display",
        "provider_name",
        "weight",
        "priority",
        "active",
        "updated_at",
    )
    list_filter = ("mode", "active", "provider_name")
    ordering = ("mode", "priority", "id")

    @admin.display(description="bank", ordering="bank_code")
    def bank_display(self, obj: PayoutRoute) -> str:
        return obj.bank_code or "any bank"

    @admin.display(description="amount band")
    def band_display(self, obj: PayoutRoute) -> SafeString:
        low = money_cell(obj.min_amount) if obj.min_amount is not None else "0"
        high = money_cell(obj.max_amount) if obj.max_amount is not None else "∞"
        return format_html("{} – {}", low, high)


@admin.register(PayoutProviderCircuit)
class PayoutProviderCircuitAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    """Provider health: the circuit breaker of each provider, read-only (it changes from the
    answers providers give). The table above the list covers every registered provider."""

    list_display = ("provider_name", "state", "opened_at", "closed_at", "probe_started_at")
    readonly_fields = list_display

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> Any:
        health = provider_health_list()
        extra_context = {**(extra_context or {}), "provider_health": provider_health_table(health)}
        return super().changelist_view(request, extra_context)
