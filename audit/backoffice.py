"""What every back-office ``ModelAdmin`` shares: who may do what, and the record of what was done.

* ``BackOfficeAdminMixin``: a refused request gets the admin's own 403 page (styled, with the
  navigation), never the API's JSON; an action the user may not use is neither listed nor run
  (posting it anyway answers 403); every add, change and delete made through the admin forms
  writes an audit record (unless ``audit_form_changes`` is off because the model's own signals
  record every change, as for users and TOTP devices: ``audit.signals``); the admin's own pages
  (``backoffice_pages``) are routed behind the admin site's sign-in; the buttons a user may use
  above the list (``list_buttons``) and on a record's page (``detail_buttons``: a record that
  changes only through services, without Django's save and delete buttons; ``detail_read_only``:
  such a record with no buttons at all; ``ServiceRecordsAdmin``: the admin of such records).
* ``one_selected_page``: an action that opens a page about exactly one selected row.
* ``service_run``: how a back-office action or page calls a service: a refusal is the 403 page,
  any other ``ApplicationError`` an error message to the user.
* ``page_context``: what every back-office page needs (``admin/backoffice/page.html``).
* ``ReasonForm``, ``action_confirmation`` and ``confirmation_form``: the intermediate page that
  asks for a typed reason before a sensitive action runs.
* ``csv_response`` and ``selection_export`` (the selected rows, audited): CSV downloads.
* ``secrets_shown_once``: the page that shows a newly issued key or secret once, outside the
  message framework (messages travel in cookies and the session).
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Model, QuerySet
from django.forms import BaseFormSet, ModelForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers

from audit.services import audit_record
from core.admin import ReadOnlyAdminMixin
from core.exceptions import ApplicationError

REASON_MIN_LENGTH = 10
_T = TypeVar("_T")
FORBIDDEN_TEMPLATE = "admin/403.html"


def page_context(model_admin: admin.ModelAdmin, request: HttpRequest, title: str) -> dict[str, Any]:
    """What every back-office page about ``model_admin``'s model needs (its frame is
    ``admin/backoffice/page.html``): the admin site's context, the title, the model's options
    and the URL of its list."""
    opts = model_admin.model._meta
    return {
        **model_admin.admin_site.each_context(request),
        "title": title,
        "opts": opts,
        "changelist_url": reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"),
    }


def forbidden_response(
    request: HttpRequest, *, admin_site: admin.AdminSite, message: str = ""
) -> HttpResponse:
    """The admin's 403 page: the back-office layout, a plain explanation, status 403."""
    context = {
        **admin_site.each_context(request),
        "title": "403 Forbidden",
        "message": message,
    }
    response = TemplateResponse(request, FORBIDDEN_TEMPLATE, context, status=403)
    add_never_cache_headers(response)
    return response


def _initial_value(form: ModelForm, name: str) -> Any:
    """The form's initial value, a related object rather than its bare primary key."""
    value = form.initial.get(name)
    field = form.fields.get(name)
    if (
        isinstance(field, forms.ModelChoiceField)
        and not isinstance(field, forms.ModelMultipleChoiceField)
        and value not in (None, "")
        and not isinstance(value, Model)
    ):
        try:
            return field.to_python(value)
        except ValidationError:
            return value
    return value


def _form_values(form: ModelForm, names: Iterable[str], *, initial: bool) -> dict[str, Any]:
    if initial:
        return {name: _initial_value(form, name) for name in names}
    return {name: form.cleaned_data.get(name) for name in names}


class BackOfficeAdminMixin:
    """Mix into every back-office ``ModelAdmin`` (before ``admin.ModelAdmin``)."""

    admin_site: admin.AdminSite
    model: type[Any]
    # Off where the model's own signals record every change with the request's user.
    audit_form_changes: bool = True
    # On for records that change only through services and whose page offers no buttons of its
    # own (``detail_buttons`` answers none rather than Django's form buttons).
    detail_read_only: bool = False

    # --- who may do what ------------------------------------------------------------------

    @property
    def urls(self) -> list[Any]:
        return [
            self._admin_forbidden_page(pattern) if isinstance(pattern, URLPattern) else pattern
            for pattern in self.get_urls()
        ]

    def _admin_forbidden_page(self, pattern: URLPattern) -> URLPattern:
        view: Callable[..., HttpResponse] = pattern.callback
        admin_site = self.admin_site

        @functools.wraps(view)
        def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                return view(request, *args, **kwargs)
            except PermissionDenied as error:
                return forbidden_response(request, admin_site=admin_site, message=str(error))

        return URLPattern(pattern.pattern, guarded, pattern.default_args, pattern.name)

    def backoffice_pages(self) -> Sequence[tuple[str, Callable[..., HttpResponse], str]]:
        """The admin's own pages beside Django's: (route, view, URL name) each."""
        return ()

    def get_urls(self) -> list[URLPattern]:
        """The admin's own pages, each behind the admin site's sign-in, before Django's."""
        own = [
            path(route, self.admin_site.admin_view(view), name=name)
            for route, view, name in self.backoffice_pages()
        ]
        return [*own, *super().get_urls()]  # type: ignore[misc]

    def detail_buttons(
        self, request: HttpRequest, object_id: str
    ) -> Sequence[tuple[str, str]] | None:
        """For a record that changes only through services, the buttons (label, url) this user
        may use on its page (``read_only_page_context``); ``None``: Django's own form buttons
        (none at all with ``detail_read_only``)."""
        return () if self.detail_read_only else None

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        buttons = self.detail_buttons(request, object_id)
        if buttons is not None:
            extra_context = read_only_page_context(extra_context, buttons=buttons)
        return super().change_view(request, object_id, form_url, extra_context)  # type: ignore[misc]

    def list_buttons(self, request: HttpRequest) -> Sequence[tuple[str, str]] | None:
        """The buttons (label, url) this user may use above the list, shown by
        ``admin/backoffice/change_list.html``; ``None``: none."""
        return None

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if request.method == "POST":
            posted = [name for name in request.POST.getlist("action") if name]
            allowed = self.get_actions(request)  # type: ignore[attr-defined]
            if any(name not in allowed for name in posted):
                raise PermissionDenied("You may not use this action.")
        buttons = self.list_buttons(request)
        if buttons is not None:
            extra_context = {**(extra_context or {}), "backoffice_buttons": list(buttons)}
        return super().changelist_view(request, extra_context)  # type: ignore[misc]

    def user_has(self, request: HttpRequest, permission: str) -> bool:
        """``permission`` is ``"app_label.codename"``."""
        return bool(request.user.has_perm(permission))

    # --- what was done --------------------------------------------------------------------

    def audit_action(self, verb: str) -> str:
        return f"{self.model._meta.label_lower}.{verb}"

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm, change: bool) -> None:
        before = _form_values(form, form.changed_data, initial=True) if change else None
        super().save_model(request, obj, form, change)  # type: ignore[misc]
        if not self.audit_form_changes:
            return
        names = form.changed_data if change else list(form.cleaned_data)
        audit_record(
            actor=request.user,
            action=self.audit_action("change" if change else "add"),
            obj=obj,
            before=before,
            after=_form_values(form, names, initial=False),
            request=request,
        )

    def save_related(
        self, request: HttpRequest, form: ModelForm, formsets: Sequence[BaseFormSet], change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)  # type: ignore[misc]
        if not self.audit_form_changes:
            return
        for formset in formsets:
            self._audit_formset(request, formset)

    def _audit_formset(self, request: HttpRequest, formset: Any) -> None:
        initial_by_pk = {form.instance.pk: form for form in getattr(formset, "initial_forms", [])}
        for obj in getattr(formset, "new_objects", []):
            audit_record(
                actor=request.user,
                action=f"{obj._meta.label_lower}.add",
                obj=obj,
                after={
                    field.name: getattr(obj, field.attname)
                    for field in obj._meta.concrete_fields
                    if not field.primary_key
                },
                request=request,
            )
        for obj, changed in getattr(formset, "changed_objects", []):
            form = initial_by_pk.get(obj.pk)
            audit_record(
                actor=request.user,
                action=f"{obj._meta.label_lower}.change",
                obj=obj,
                before=_form_values(form, changed, initial=True) if form is not None else None,
                after={name: getattr(obj, name, None) for name in changed},
                request=request,
            )
        for obj in getattr(formset, "deleted_objects", []):
            audit_record(
                actor=request.user,
                action=f"{obj._meta.label_lower}.delete",
                obj=obj,
                before={"repr": str(obj)},
                request=request,
            )

    def _deletion_record(self, request: HttpRequest, obj: Any) -> None:
        audit_record(
            actor=request.user,
            action=self.audit_action("delete"),
            obj=obj,
            before={"repr": str(obj)},
            request=request,
        )

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        if self.audit_form_changes:
            self._deletion_record(request, obj)
        super().delete_model(request, obj)  # type: ignore[misc]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        if self.audit_form_changes:
            for obj in queryset:
                self._deletion_record(request, obj)
        super().delete_queryset(request, queryset)  # type: ignore[misc]


class ServiceRecordsAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    """The back office of records that change only through services: viewed, never added,
    edited or deleted through the admin's forms (``ReadOnlyAdminMixin``); the list and the
    record's page in the back-office frames, the page with none of Django's form buttons
    (``detail_read_only``; ``detail_buttons`` names the admin's own)."""

    change_form_template = "admin/backoffice/change_form.html"
    change_list_template = "admin/backoffice/change_list.html"
    detail_read_only = True


# --- Read-only detail pages ---------------------------------------------------------------


def read_only_page_context(
    extra_context: dict[str, Any] | None, *, buttons: Sequence[tuple[str, str]] = ()
) -> dict[str, Any]:
    """The ``extra_context`` of a detail page whose record changes only through services: no
    save or delete buttons, and the ``buttons`` (label, url) this user may use, shown by
    ``admin/backoffice/change_form.html`` (set as the admin's ``change_form_template``)."""
    return {
        **(extra_context or {}),
        "show_save": False,
        "show_save_and_continue": False,
        "show_save_and_add_another": False,
        "show_delete": False,
        "backoffice_buttons": list(buttons),
    }


# --- Confirmation with a typed reason -----------------------------------------------------


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label="Reason",
        min_length=REASON_MIN_LENGTH,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text="Why this is done, and on whose request (kept in the audit trail).",
    )


def confirmation_form(request: HttpRequest) -> ReasonForm:
    """Bound once the confirmation page was submitted, unbound on the first POST of the action."""
    return ReasonForm(request.POST if request.POST.get("confirm") == "yes" else None)


def action_confirmation(
    request: HttpRequest,
    *,
    model_admin: admin.ModelAdmin,
    queryset: QuerySet[Any],
    action_name: str,
    title: str,
    intro: str,
    submit_label: str,
    form: forms.Form,
    labels: Sequence[str] | None = None,
) -> TemplateResponse:
    """The intermediate page of a sensitive action: what will happen to which objects, a reason
    field, and a confirm button that posts the action again with ``confirm=yes``. ``labels``
    names the objects as the list shows them (one line each); without it, each object's
    ``str``."""
    objects = list(queryset)
    context = {
        **page_context(model_admin, request, title),
        "subtitle": None,
        "intro": intro,
        "objects": objects,
        "labels": list(labels) if labels is not None else [str(obj) for obj in objects],
        "action_name": action_name,
        "submit_label": submit_label,
        "form": form,
    }
    return TemplateResponse(request, "admin/backoffice/confirm_action.html", context)


def secrets_shown_once(
    request: HttpRequest,
    *,
    model_admin: admin.ModelAdmin,
    title: str,
    secrets: Sequence[tuple[str, str]],
    note: str,
) -> TemplateResponse:
    """Shows newly issued secrets (label, value) once; the response is never cached."""
    context = {**page_context(model_admin, request, title), "secrets": secrets, "note": note}
    response = TemplateResponse(request, "admin/backoffice/secrets_shown_once.html", context)
    add_never_cache_headers(response)
    return response


# --- CSV exports --------------------------------------------------------------------------


class CsvText(str):
    """A cell a spreadsheet must keep as text: an account number, a bank code, a session id.

    Written as ``="0012345678"`` so Excel keeps its leading zeros and never turns a long digit
    string into ``1.23E+15``; other readers see the digits between ``="`` and ``"``.
    """


def csv_safe(value: Any) -> str:
    """Spreadsheet-safe text: a leading formula character is neutralised; ``CsvText`` made of
    digits stays text in Excel."""
    text = "" if value is None else str(value)
    if isinstance(value, CsvText) and text and text.isascii() and text.isalnum():
        return f'="{text}"'
    if text and text[0] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


def csv_response(
    *, filename_stem: str, header: Sequence[str], rows: Iterable[Sequence[Any]]
) -> HttpResponse:
    """A CSV attachment named ``<stem>-<local timestamp>.csv`` that opens cleanly in Excel: UTF-8
    with a byte-order mark (so ``₦`` and names survive), CRLF rows, every cell through
    ``csv_safe``. Times in rows should be ``core.dates.local_isoformat`` (Lagos, with offset)."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="{filename_stem}-{stamp}.csv"'
    response.write("\ufeff")
    writer = csv.writer(response)
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_safe(value) for value in row])
    return response


def selection_export(
    request: HttpRequest,
    *,
    action: str,
    model: type[Model],
    records: Sequence[_T],
    filename_stem: str,
    header: Sequence[str],
    row: Callable[[_T], Sequence[Any]],
) -> HttpResponse:
    """The selected ``records`` as a CSV download (``csv_response``, one ``row`` each), written
    to the audit trail first: who exported how many of ``model`` (``action``)."""
    audit_record(
        actor=request.user, action=action, obj=model, after={"count": len(records)}, request=request
    )
    return csv_response(
        filename_stem=filename_stem, header=header, rows=(row(record) for record in records)
    )


def service_run(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    call: Callable[[], _T],
    *,
    shown: Callable[[str], str] = str,
    refusal_denied: bool = True,
) -> _T | None:
    """Runs the service behind a back-office action or page and answers what it returned, or
    ``None`` when it raised ``ApplicationError``: a refusal (status 403, when ``refusal_denied``)
    becomes ``PermissionDenied`` (the admin's 403 page); any other error is shown to the user as
    an error message (``shown`` words it)."""
    try:
        return call()
    except ApplicationError as error:
        if refusal_denied and error.status == 403:
            raise PermissionDenied(error.message) from error
        model_admin.message_user(request, shown(error.message), level=messages.ERROR)
        return None


def one_selected_page(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet[Any],
    *,
    fits: Callable[[Any], bool],
    refusal: str,
    url_name: str,
) -> HttpResponseRedirect | None:
    """An action that opens a page about one selected row: that row's page (``url_name`` with
    its pk) when exactly one row is selected and it ``fits``; else ``refusal``, an error message."""
    rows = list(queryset[:2])
    if len(rows) != 1 or not fits(rows[0]):
        model_admin.message_user(request, refusal, level=messages.ERROR)
        return None
    return HttpResponseRedirect(reverse(url_name, args=[rows[0].pk]))
