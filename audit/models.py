"""The back-office audit trail: who did what to which object, when, from where and why.

Records are append-only: the model and its queryset refuse updates and deletes, and on
PostgreSQL a trigger refuses them too, whoever issues them (raw SQL included).
"""

from __future__ import annotations

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone

from core.models import AppendOnlyModel, AppendOnlyQuerySet, staff_user_field


class AuditRecordImmutableError(Exception):
    """Audit records are append-only: they are never updated or deleted."""


class AuditRecord(AppendOnlyModel):
    """One back-office act. ``before`` and ``after`` hold the values that changed, never a secret
    (a key or a webhook secret is recorded by its prefix or as ``"rotated"``)."""

    created_at = models.DateTimeField(default=timezone.now, db_index=True, editable=False)
    actor = staff_user_field(
        related_name="audit_records",
        optional=True,
        help_text="The staff user; empty for a command-line or system actor",
    )
    actor_label = models.CharField(
        max_length=150, help_text="Username at the time, or the command-line or system actor"
    )
    action = models.CharField(max_length=100, db_index=True)
    object_type = models.CharField(max_length=100, blank=True, default="")
    object_id = models.CharField(max_length=64, blank=True, default="")
    object_repr = models.CharField(max_length=200, blank=True, default="")
    before = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    after = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    reason = models.TextField(blank=True, default="")
    ip_address = models.GenericIPAddressField(null=True, blank=True)

    objects = AppendOnlyQuerySet["AuditRecord"].as_manager()
    immutable_error = AuditRecordImmutableError
    immutable_noun = "audit records"

    class Meta:
        ordering = ["-created_at", "-id"]
        permissions = [
            ("export_audit_records", "Can export audit records as CSV"),
            ("reset_staff_credentials", "Can set another staff user's password or TOTP devices"),
        ]
        indexes = [
            models.Index(fields=["object_type", "object_id"], name="audit_object_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_label} {self.action} {self.object_repr}".strip()
