"""The audit trail in the back office: read-only, filterable, exportable as CSV.

The user, group and TOTP device admins are registered again with the back-office rules. Every
change of a user or a device is recorded by ``audit.signals`` (with the signed-in user as
actor); these admins add who may make it:

* a password or a TOTP device of another user (set, changed, added, deleted, confirmed; a new
  user created with a password) needs ``audit.reset_staff_credentials`` (the security admin
  role), which also opens the password page without ``auth.change_user``;
* a superuser's password or devices only by another superuser;
* nobody sets or clears the superuser flag of their own account.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html
from django_otp.plugins.otp_totp.admin import TOTPDeviceAdmin
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.backoffice import BackOfficeAdminMixin, selection_export
from audit.models import AuditRecord
from audit.roles import STAFF_CREDENTIALS_PERMISSION
from core.admin import ReadOnlyAdminMixin

CSV_COLUMNS = (
    "id",
    "created_at",
    "actor",
    "action",
    "object_type",
    "object_id",
    "object_repr",
    "before",
    "after",
    "reason",
    "ip_address",
)


def _pretty_json(value: Any) -> str:
    if value is None:
        return "—"
    return format_html(
        '<pre style="white-space: pre-wrap">{}</pre>',
        json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True),
    )


def _csv_row(record: AuditRecord) -> tuple[Any, ...]:
    return (
        record.pk,
        record.created_at.isoformat(),
        record.actor_label,
        record.action,
        record.object_type,
        record.object_id,
        record.object_repr,
        json.dumps(record.before, sort_keys=True) if record.before is not None else "",
        json.dumps(record.after, sort_keys=True) if record.after is not None else "",
        record.reason,
        record.ip_address or "",
    )


@admin.register(AuditRecord)
class AuditRecordAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    list_display = (
        "created_at",
        "actor_label",
        "action",
        "object_type",
        "object_id",
        "object_repr",
        "ip_address",
    )
    list_filter = (
        "action",
        "object_type",
        ("actor", admin.RelatedOnlyFieldListFilter),
        ("created_at", admin.DateFieldListFilter),
    )
    search_fields = ("=object_id", "object_repr", "actor_label", "reason")
    search_help_text = "Object id (exact), object, actor or reason."
    date_hierarchy = "created_at"
    list_select_related = ("actor",)
    show_full_result_count = False
    fields = (
        "created_at",
        "actor",
        "actor_label",
        "ip_address",
        "action",
        "object_type",
        "object_id",
        "object_repr",
        "before_pretty",
        "after_pretty",
        "reason",
    )
    readonly_fields = fields
    actions = ("export_csv",)

    @admin.display(description="before")
    def before_pretty(self, obj: AuditRecord) -> str:
        return _pretty_json(obj.before)

    @admin.display(description="after")
    def after_pretty(self, obj: AuditRecord) -> str:
        return _pretty_json(obj.after)

    def has_export_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, "audit.export_audit_records")

    @admin.action(description="Export selected audit records as CSV", permissions=["export"])
    def export_csv(self, request: HttpRequest, queryset: QuerySet[AuditRecord]) -> HttpResponse:
        return selection_export(
            request,
            action="audit.auditrecord.export",
            model=AuditRecord,
            records=list(queryset.order_by("-created_at", "-id")),
            filename_stem="audit-records",
            header=CSV_COLUMNS,
            row=_csv_row,
        )


User = get_user_model()
for registered in (User, Group, TOTPDevice):
    if admin.site.is_registered(registered):
        admin.site.unregister(registered)

OTHERS_CREDENTIALS_MESSAGE = (
    "Only a security admin may set another user's password or TOTP devices."
)
SUPERUSER_CREDENTIALS_MESSAGE = "Only a superuser may set a superuser's password or TOTP devices."
OWN_SUPERUSER_MESSAGE = "You may not set or clear the superuser flag of your own account."
PASSWORD_PAGE = "auth_user_password_change"  # noqa: S105 - a URL name


def credentials_change_check(request: HttpRequest, user_ids: list[int | None]) -> None:
    """Refuses (403) a change of another user's password or devices without the permission,
    and of a superuser's by anyone but a superuser (it would make them one)."""
    others = [pk for pk in user_ids if pk is not None and pk != request.user.pk]
    if not others:
        return
    if not request.user.has_perm(STAFF_CREDENTIALS_PERMISSION):
        raise PermissionDenied(OTHERS_CREDENTIALS_MESSAGE)
    if (
        not request.user.is_superuser
        and User._default_manager.filter(pk__in=others, is_superuser=True).exists()
    ):
        raise PermissionDenied(SUPERUSER_CREDENTIALS_MESSAGE)


@admin.register(User)
class AuditedUserAdmin(BackOfficeAdminMixin, UserAdmin):
    """Django's user admin; every change is recorded by ``audit.signals``."""

    audit_form_changes = False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        # On the password page, the security admin's permission stands in for change_user.
        match = request.resolver_match
        if (
            obj is not None
            and match is not None
            and match.url_name == PASSWORD_PAGE
            and request.user.has_perm(STAFF_CREDENTIALS_PERMISSION)
        ):
            return True
        return super().has_change_permission(request, obj)

    def user_change_password(
        self, request: HttpRequest, id: str, form_url: str = ""
    ) -> HttpResponse:
        user = self.get_object(request, unquote(id))
        if user is not None:
            credentials_change_check(request, [user.pk])
        return super().user_change_password(request, id, form_url)

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm, change: bool) -> None:
        if change and obj.pk == request.user.pk and "is_superuser" in form.changed_data:
            raise PermissionDenied(OWN_SUPERUSER_MESSAGE)
        if (
            not change
            and obj.has_usable_password()
            and not request.user.has_perm(STAFF_CREDENTIALS_PERMISSION)
        ):
            raise PermissionDenied(OTHERS_CREDENTIALS_MESSAGE)
        super().save_model(request, obj, form, change)


@admin.register(Group)
class AuditedGroupAdmin(BackOfficeAdminMixin, GroupAdmin):
    """Django's group admin; changes to a role's permissions are recorded."""


@admin.register(TOTPDevice)
class AuditedTOTPDeviceAdmin(BackOfficeAdminMixin, TOTPDeviceAdmin):
    """django-otp's TOTP device admin (keys never shown); every change is recorded by
    ``audit.signals``, and another user's device needs the security admin's permission."""

    audit_form_changes = False

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm, change: bool) -> None:
        before = form.initial.get("user") if change else None
        credentials_change_check(request, [obj.user_id, before])
        super().save_model(request, obj, form, change)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        credentials_change_check(request, [obj.user_id])
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        credentials_change_check(request, list(queryset.values_list("user_id", flat=True)))
        super().delete_queryset(request, queryset)
