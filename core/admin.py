"""Back-office plumbing shared by every app's admin: the cells of money, times, names, bank
accounts and statuses (and the list columns built from them: ``money_column``, ``time_column``,
``value_column``, ``status_column``, ``merchant_column``), the read-only mixin and inline, and the
local date-range filter."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import build_q_object_from_lookup_parameters
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.dates import local_day_bounds, local_isoformat, local_zone_label
from core.money import CURRENCY_NGN, format_amount_display


def money_cell(amount: Decimal | None, currency: str = CURRENCY_NGN) -> SafeString | str:
    """An amount for an admin list or page: ``₦1,234,567.89``, right-aligned in tabular figures
    (``static/backoffice/admin.css``)."""
    if amount is None:
        return "—"
    return format_html('<span class="money">{}</span>', format_amount_display(amount, currency))


def _record_currency(obj: Any) -> str:
    return getattr(obj, "currency", CURRENCY_NGN)


def money_column(
    field: str, description: str, *, currency: Callable[[Any], str] = _record_currency
) -> Callable[[Any, Any], SafeString | str]:
    """A column of an admin list or page: the money ``field`` as a ``money_cell`` in the
    ``currency`` of the record (its own ``currency`` field, NGN without one), sorted by the
    field."""

    @admin.display(description=description, ordering=field)
    def column(model_admin: Any, obj: Any) -> SafeString | str:
        return money_cell(getattr(obj, field), currency(obj))

    return column


def time_column(field: str, description: str) -> Callable[[Any, Any], SafeString | str]:
    """A column of an admin list or page: the instant ``field`` as a ``local_time_cell``, sorted
    by the field."""

    @admin.display(description=description, ordering=field)
    def column(model_admin: Any, obj: Any) -> SafeString | str:
        return local_time_cell(getattr(obj, field))

    return column


def value_column(field: str, description: str) -> Callable[[Any, Any], Any]:
    """A column of an admin list or page: the ``field`` as it is (``—`` when empty) under a short
    header, sorted by the field."""

    @admin.display(description=description, ordering=field)
    def column(model_admin: Any, obj: Any) -> Any:
        value = getattr(obj, field)
        return "—" if value is None else value

    return column


def status_column(field: str, description: str) -> Callable[[Any, Any], SafeString]:
    """A column of an admin list or page: the choice ``field`` as a ``status_badge`` with its
    label, sorted by the field."""

    @admin.display(description=description, ordering=field)
    def column(model_admin: Any, obj: Any) -> SafeString:
        return status_badge(getattr(obj, field), getattr(obj, f"get_{field}_display")())

    return column


def merchant_column(*, live_mode: str = "") -> Callable[[Any, Any], SafeString]:
    """A column of an admin list or page: the record's merchant as a ``name_cell``, sorted by
    name; with ``live_mode`` (the live mode's value), a record of another mode is tagged with
    its mode."""

    @admin.display(description="merchant", ordering="merchant__name")
    def column(model_admin: Any, obj: Any) -> SafeString:
        tag = "" if not live_mode or obj.mode == live_mode else obj.mode
        return name_cell(obj.merchant.name, tag)

    return column


class ReadOnlyAdminMixin:
    """A log or a money record: viewable, never added, edited or deleted through the admin.

    An admin whose records change through services (admin actions, a custom view) sets
    ``allow_change = True``; one that may delete sets ``allow_delete = True``. Either then gets
    Django's usual permission check for that operation. Adding is never allowed.
    """

    allow_change: bool = False
    allow_delete: bool = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        if self.allow_change:
            return super().has_change_permission(request, obj)  # type: ignore[misc]
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        if self.allow_delete:
            return super().has_delete_permission(request, obj)  # type: ignore[misc]
        return False


class ReadOnlyTabularInline(ReadOnlyAdminMixin, admin.TabularInline):
    """The rows of a log or a money record under their parent's page, read-only: no blank rows to
    add and no delete column (``allow_change`` and ``allow_delete`` as ``ReadOnlyAdminMixin``)."""

    extra = 0
    can_delete = False


def local_time_cell(value: datetime | None) -> SafeString | str:
    """An instant for a narrow list column, in local time on two lines: ``2026-11-23`` over
    ``00:30 +0100`` (the ``DATETIME_FORMAT`` of ``config/formats``, split at the day)."""
    if value is None:
        return "—"
    local = timezone.localtime(value)
    return format_html(
        '<time class="when" datetime="{}">{}<br>{}</time>',
        local_isoformat(value),
        date_format(local, "Y-m-d"),
        date_format(local, "H:i O"),
    )


def name_cell(name: str, tag: str = "") -> SafeString:
    """A name in a narrow list column: at most two lines, the whole name in its tooltip, and an
    optional small tag (``test`` for a test-mode record)."""
    if not tag:
        return format_html('<span class="clamp-2" title="{}">{}</span>', name, name)
    return format_html(
        '<span class="clamp-2" title="{}">{}</span> <span class="mode-badge">{}</span>',
        name,
        name,
        tag,
    )


def bank_account_cell(account_name: str, bank_name: str, account_number: str) -> SafeString:
    """A bank account in one cell: ``ACCOUNT NAME · Bank · 0123456789`` (the bank and number
    quieter)."""
    return format_html(
        '{} <span class="quiet">· {} · {}</span>', account_name, bank_name, account_number
    )


def status_badge(value: str, label: str | None = None) -> SafeString:
    """A status as a small coloured badge (``.status-badge.status-<value>`` in
    ``static/backoffice/admin.css``)."""
    return format_html(
        '<span class="status-badge status-{}">{}</span>', value, label if label else value
    )


class LocalDateRangeFilter(admin.DateFieldListFilter):
    """A ``DateTimeField`` filtered by local (Lagos) calendar days.

    Django's quick links (Any date, Today, Past 7 days, This month, This year, and No date / Has
    date on a nullable field) plus a from/to pair of date inputs. The range travels as
    ``<field>__local_from=2026-11-23&<field>__local_to=2026-11-30`` (``YYYY-MM-DD``, both days
    included, either one optional) and covers ``local_day_bounds(from, to)``: a payout made at
    00:30 in Lagos (23:30 UTC the day before) is on its Lagos day. Use it as
    ``list_filter = (("created_at", LocalDateRangeFilter),)``.
    """

    template = "admin/backoffice/date_range_filter.html"

    def __init__(
        self,
        field: Any,
        request: HttpRequest,
        params: dict[str, list[str]],
        model: Any,
        model_admin: Any,
        field_path: str,
    ) -> None:
        self.lookup_kwarg_local_from = f"{field_path}__local_from"
        self.lookup_kwarg_local_to = f"{field_path}__local_to"
        super().__init__(field, request, params, model, model_admin, field_path)
        self.zone_label = local_zone_label()
        self.hidden_params: list[tuple[str, str]] = []

    def expected_parameters(self) -> list[str | None]:
        return [
            *super().expected_parameters(),
            self.lookup_kwarg_local_from,
            self.lookup_kwarg_local_to,
        ]

    def _raw(self, name: str) -> str:
        values = self.used_parameters.get(name) or [""]
        return str(values[-1]).strip()  # type: ignore[index]  # used_parameters holds lists (Django 5); django-stubs say object

    @property
    def local_from_value(self) -> str:
        return self._raw(self.lookup_kwarg_local_from)

    @property
    def local_to_value(self) -> str:
        return self._raw(self.lookup_kwarg_local_to)

    def local_days(self) -> tuple[date | None, date | None]:
        """The first and last local day asked for; ``ValueError`` for a malformed date."""
        first, last = self.local_from_value, self.local_to_value
        return (
            date.fromisoformat(first) if first else None,
            date.fromisoformat(last) if last else None,
        )

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        ranged = {self.lookup_kwarg_local_from, self.lookup_kwarg_local_to}
        quick = {k: v for k, v in self.used_parameters.items() if k not in ranged}
        try:
            queryset = queryset.filter(build_q_object_from_lookup_parameters(quick))  # type: ignore[arg-type]  # used_parameters holds lists (Django 5); django-stubs say object
            first, last = self.local_days()
        except (ValueError, ValidationError) as error:
            raise IncorrectLookupParameters(error) from error
        if first is not None:
            start, _end = local_day_bounds(first)
            queryset = queryset.filter(**{f"{self.field_path}__gte": start})
        if last is not None:
            _start, end = local_day_bounds(last)
            queryset = queryset.filter(**{f"{self.field_path}__lt": end})
        return queryset

    def choices(self, changelist: Any) -> Any:
        # The from/to form keeps every other filter, the search and the ordering.
        self.hidden_params = [
            (name, value)
            for name, values in changelist.filter_params.items()
            if not name.startswith(self.field_generic)
            for value in values
        ]
        yield from super().choices(changelist)
