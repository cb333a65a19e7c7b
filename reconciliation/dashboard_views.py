"""The finance dashboard page (admin): yesterday's and today's payouts at a glance (or a chosen
day's beside today's), every figure a link to the payout list (or the reconciliation exceptions)
it counts. It opens on live mode once there are live payouts, else on test mode, and says which
in a banner.

Wired by ``ReconciliationRunAdmin.backoffice_pages`` (``reconciliation.admin.statement_imports``)
as ``admin:reconciliation_dashboard``. Needs ``payouts.view_payout``; the back-office mixin turns
the refusal into the admin's 403 page.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from core.admin import money_cell, status_badge
from core.dates import local_day_bounds, local_text, local_today, local_zone_label
from merchants.models import Mode
from payouts.models import FINAL_STATUSES, PayoutStatus
from reconciliation.dashboard import (
    NOT_FINAL_STATUSES,
    WAITING_STATUSES,
    DayFigures,
    FinanceDashboard,
    WaitingPayout,
    dashboard_default_mode,
    finance_dashboard,
)
from reconciliation.dashboard_chart import daily_series_svg
from reconciliation.selectors import UNRESOLVED_STATES, ExceptionState

VIEW_PERMISSION = "payouts.view_payout"
SETTLEMENTS_PERMISSION = "settlements.view_settlement"
EXCEPTIONS_PERMISSION = "reconciliation.view_reconciliationitem"
TEMPLATE = "admin/reconciliation/dashboard.html"
FIRST_DAY = date(2000, 1, 1)  # before any payout; keeps 14 days back inside the calendar


class DashboardForm(forms.Form):
    day = forms.DateField(
        required=False,
        input_formats=["%Y-%m-%d"],
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        error_messages={"invalid": "Enter the day as YYYY-MM-DD."},
        help_text="A calendar day in Lagos; empty for today.",
    )
    mode = forms.ChoiceField(
        required=False,
        choices=Mode.choices,
        error_messages={"invalid_choice": "Choose live or test."},
    )

    def clean_day(self) -> date | None:
        day: date | None = self.cleaned_data.get("day")
        if day is None:
            return None
        if day > local_today():
            raise ValidationError("That day has not happened yet in Lagos.")
        if day < FIRST_DAY:
            raise ValidationError(f"Choose a day from {FIRST_DAY.isoformat()} on.")
        return day


def payout_list_url(
    *,
    mode: str,
    day: date | None = None,
    statuses: Sequence[str] | None = None,
    attention: str = "",
) -> str:
    """The payout changelist filtered by mode, status(es), the Lagos day's ``created_at`` and
    what needs finance (``attention``: ``held`` or ``escalated``)."""
    params: dict[str, str] = {}
    if attention:
        params["attention"] = attention
    if statuses:
        if len(statuses) == 1:
            params["status__exact"] = statuses[0]
        else:
            params["status__in"] = ",".join(statuses)
    params["mode__exact"] = mode
    if day is not None:
        start, end = local_day_bounds(day)
        params["created_at__gte"] = start.isoformat(sep=" ")
        params["created_at__lt"] = end.isoformat(sep=" ")
    return f"{reverse('admin:payouts_payout_changelist')}?{urlencode(params)}"


def settlement_list_url(*, mode: str, day: date) -> str:
    """The settlement changelist filtered by mode and the Lagos day's ``settled_at``."""
    start, end = local_day_bounds(day)
    params = {
        "mode__exact": mode,
        "settled_at__gte": start.isoformat(sep=" "),
        "settled_at__lt": end.isoformat(sep=" "),
    }
    return f"{reverse('admin:settlements_settlement_changelist')}?{urlencode(params)}"


def _settlement_rows(board: FinanceDashboard) -> list[dict[str, Any]]:
    """One row per day and mode: the settlements settled that day, added up, linked to them."""
    today = board.today
    return [
        {
            "day": figures.day,
            "heading": "Today" if figures.day == today else figures.day.isoformat(),
            "mode": figures.mode,
            "mode_label": Mode(figures.mode).label,
            "count": figures.count,
            "transaction_count": figures.transaction_count,
            "url": settlement_list_url(mode=figures.mode, day=figures.day),
            "gross": money_cell(figures.gross),
            "fees": money_cell(figures.fees),
            "subaccount_shares": money_cell(figures.subaccount_shares),
            "refunds_deducted": money_cell(figures.refunds_deducted),
            "net": money_cell(figures.net),
        }
        for figures in board.settlements
    ]


def _figure(count: int, url: str, **money: Any) -> dict[str, Any]:
    return {
        "count": count,
        "url": url,
        **{name: money_cell(amount) for name, amount in money.items()},
    }


def _day_table(board: FinanceDashboard) -> dict[str, Any]:
    """Status rows × day columns, oldest first: yesterday and today (the morning routine), or
    the chosen day and today when another day is chosen."""
    earlier = board.yesterday_figures if board.is_today else board.chosen
    heading = earlier.day.isoformat()
    if earlier.day == board.yesterday_figures.day:
        heading = f"Yesterday, {heading}"
    columns: list[tuple[str, DayFigures]] = [
        (heading, earlier),
        (f"Today, {board.today.isoformat()}", board.today_figures),
    ]
    mode = board.mode
    status_rows = [
        {
            "status": status,
            "badge": status_badge(status, label),
            "cells": [
                _figure(
                    figures.by_status[index].count,
                    payout_list_url(mode=mode, day=figures.day, statuses=(status,)),
                    amount=figures.by_status[index].amount,
                    fees=figures.by_status[index].fees,
                )
                for _heading, figures in columns
            ],
        }
        for index, (status, label) in enumerate(PayoutStatus.choices)
    ]
    total_cells = [
        _figure(
            figures.count,
            payout_list_url(mode=mode, day=figures.day),
            amount=figures.amount,
            fees=figures.fees,
        )
        for _heading, figures in columns
    ]
    rate_cells = [
        {
            "rate": "—" if figures.success_rate is None else f"{figures.success_rate}%",
            "final": figures.final_count,
            "successful": figures.status_count(PayoutStatus.SUCCESSFUL),
            "url": payout_list_url(mode=mode, day=figures.day, statuses=FINAL_STATUSES),
        }
        for _heading, figures in columns
    ]
    return {
        "headings": [heading for heading, _figures in columns],
        "status_rows": status_rows,
        "total_cells": total_cells,
        "rate_cells": rate_cells,
    }


def _waiting_rows(waiting: Sequence[WaitingPayout]) -> list[dict[str, Any]]:
    return [
        {
            "reference": item.payout.internal_reference,
            "url": reverse("admin:payouts_payout_change", args=[item.payout.pk]),
            "merchant": item.payout.merchant.name,
            "badge": status_badge(item.payout.status, item.payout.get_status_display()),
            "amount": money_cell(item.payout.amount),
            "since": local_text(item.since),
            "age": item.age_text,
        }
        for item in waiting
    ]


def _waiting_sections(board: FinanceDashboard) -> list[dict[str, Any]]:
    return [
        {
            "testid": "dashboard-oldest-pending",
            "title": "Oldest pending",
            "note": "Reserved, processing or dispatched, created on any day; age since creation.",
            "since_label": "Created",
            "url": payout_list_url(mode=board.mode, statuses=WAITING_STATUSES),
            "total": board.pending_total,
            "rows": _waiting_rows(board.oldest_pending),
        },
        {
            "testid": "dashboard-oldest-ambiguous",
            "title": "Oldest ambiguous",
            "note": "Outcome unknown, created on any day; age since the payout became ambiguous.",
            "since_label": "Ambiguous since",
            "url": payout_list_url(mode=board.mode, statuses=(PayoutStatus.AMBIGUOUS,)),
            "total": board.ambiguous_total,
            "rows": _waiting_rows(board.oldest_ambiguous),
        },
        {
            "testid": "dashboard-held-for-fraud",
            "title": "Held for suspected fraud",
            "note": "Ambiguous, flagged by the provider or the bank (NIP 34, 35, 63): funds stay "
            "reserved until finance resolves it with two people; age since flagged.",
            "since_label": "Flagged",
            "url": payout_list_url(mode=board.mode, attention="held"),
            "total": board.held_total,
            "rows": _waiting_rows(board.oldest_held),
        },
        {
            "testid": "dashboard-escalated",
            "title": "Unresolved past the requery window (escalated)",
            "note": "Dispatched or ambiguous with no final answer after "
            "PAYOUT_REQUERY_ESCALATE_AFTER; still requeried hourly; age since sent.",
            "since_label": "Sent",
            "url": payout_list_url(mode=board.mode, attention="escalated"),
            "total": board.escalated_total,
            "rows": _waiting_rows(board.oldest_escalated),
        },
    ]


def _series_rows(board: FinanceDashboard) -> list[dict[str, Any]]:
    mode = board.mode
    return [
        {
            "day": point.day,
            "successful": _figure(
                point.successful_count,
                payout_list_url(mode=mode, day=point.day, statuses=(PayoutStatus.SUCCESSFUL,)),
                amount=point.successful_amount,
            ),
            "failed": _figure(
                point.failed_count,
                payout_list_url(mode=mode, day=point.day, statuses=(PayoutStatus.FAILED,)),
            ),
            "pending": _figure(
                point.pending_count,
                payout_list_url(mode=mode, day=point.day, statuses=NOT_FINAL_STATUSES),
            ),
        }
        for point in board.series
    ]


def _exception_rows(
    request: HttpRequest, board: FinanceDashboard, model_admin: Any
) -> list[dict[str, Any]]:
    linked = model_admin.user_has(request, EXCEPTIONS_PERMISSION)
    changelist = reverse("admin:reconciliation_reconciliationitem_changelist")
    return [
        {
            "label": ExceptionState(state).label,
            "count": board.exceptions.get(state, 0),
            "url": f"{changelist}?{urlencode({'state': state, 'run__mode__exact': board.mode})}"
            if linked
            else "",
        }
        for state in UNRESOLVED_STATES
    ] + [
        {
            "label": "Provider transfer events contradicting a final payout",
            "count": board.transfer_event_conflicts,
            "url": f"{reverse('admin:payouts_providertransfereventrecord_changelist')}?"
            f"{urlencode({'result__exact': 'conflict'})}"
            if linked
            else "",
        }
    ]


def finance_dashboard_view(request: HttpRequest, *, model_admin: Any) -> HttpResponse:
    if not model_admin.user_has(request, VIEW_PERMISSION):
        raise PermissionDenied("The finance dashboard needs permission to view payouts.")
    today = local_today()
    data = request.GET.copy()
    if not data.get("day"):
        data["day"] = today.isoformat()
    if not data.get("mode"):
        data["mode"] = dashboard_default_mode()
    form = DashboardForm(data)
    form.is_valid()  # a bad field falls back to its default; its error is shown
    cleaned = form.cleaned_data
    day: date = cleaned.get("day") or today
    mode: str = cleaned.get("mode") or dashboard_default_mode()
    with_settlements = model_admin.user_has(request, SETTLEMENTS_PERMISSION)
    board = finance_dashboard(day=day, mode=mode, with_settlements=with_settlements)
    zone = local_zone_label()

    def day_url(each: date, statuses: Sequence[str] | None) -> str:
        return payout_list_url(mode=mode, day=each, statuses=statuses)

    opts = model_admin.model._meta
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Finance dashboard",
        "subtitle": f"{day.isoformat()} · {Mode(mode).label} mode",
        "opts": opts,
        "form": form,
        "day_error": "day" in form.errors,
        "mode_error": "mode" in form.errors,
        "board": board,
        "mode": mode,
        "mode_label": Mode(mode).label,
        "zone_label": zone,
        "day_table": _day_table(board),
        "waiting_sections": _waiting_sections(board),
        "exception_rows": _exception_rows(request, board, model_admin),
        "series_rows": _series_rows(board),
        "with_settlements": with_settlements,
        "settlement_rows": _settlement_rows(board),
        "chart": daily_series_svg(board.series, day_url=day_url, zone=zone),
    }
    return TemplateResponse(request, TEMPLATE, context)
