"""The audit trail in the back office: read-only, filterable, exportable as CSV.

The user and group admins are registered again with the audit hooks, so granting a role or a
permission in the admin is recorded too.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html

from audit.backoffice import BackOfficeAdminMixin, csv_response
from audit.models import AuditRecord
from audit.services import audit_record
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
        records = list(queryset.order_by("-created_at", "-id"))
        audit_record(
            actor=request.user,
            action="audit.auditrecord.export",
            obj=AuditRecord,
            after={"count": len(records)},
            request=request,
        )
        return csv_response(
            filename_stem="audit-records",
            header=CSV_COLUMNS,
            rows=(
                (
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
                for record in records
            ),
        )


User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)
if admin.site.is_registered(Group):
    admin.site.unregister(Group)


@admin.register(User)
class AuditedUserAdmin(BackOfficeAdminMixin, UserAdmin):
    """Django's user admin; role (group) and permission changes are recorded."""


@admin.register(Group)
class AuditedGroupAdmin(BackOfficeAdminMixin, GroupAdmin):
    """Django's group admin; changes to a role's permissions are recorded."""
