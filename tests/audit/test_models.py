"""Audit records are append-only: the model and queryset refuse updates and deletes, and on
PostgreSQL so does the database, whoever asks."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from audit.models import AuditRecord, AuditRecordImmutableError
from tests.audit.factories import AuditRecordFactory

pytestmark = pytest.mark.django_db


def test_a_record_cannot_be_saved_again() -> None:
    record = AuditRecordFactory()
    record.reason = "rewritten"
    with pytest.raises(AuditRecordImmutableError):
        record.save()
    assert AuditRecord.objects.get(pk=record.pk).reason == "Renamed at the merchant's request"


def test_a_record_cannot_be_deleted() -> None:
    record = AuditRecordFactory()
    with pytest.raises(AuditRecordImmutableError):
        record.delete()
    assert AuditRecord.objects.filter(pk=record.pk).exists()


def test_the_queryset_refuses_update_and_delete() -> None:
    record = AuditRecordFactory()
    with pytest.raises(AuditRecordImmutableError):
        AuditRecord.objects.filter(pk=record.pk).update(reason="rewritten")
    with pytest.raises(AuditRecordImmutableError):
        AuditRecord.objects.filter(pk=record.pk).delete()
    assert AuditRecord.objects.get(pk=record.pk).reason == "Renamed at the merchant's request"


def test_bulk_update_is_refused() -> None:
    record = AuditRecordFactory()
    record.reason = "rewritten"
    with pytest.raises(AuditRecordImmutableError):
        AuditRecord.objects.bulk_update([record], ["reason"])


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_auditrecord SET reason = 'rewritten' WHERE id = %s",
        "DELETE FROM audit_auditrecord WHERE id = %s",
    ],
)
def test_postgres_refuses_raw_update_and_delete(statement: str) -> None:
    record = AuditRecordFactory()
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement, [record.pk])
    assert AuditRecord.objects.get(pk=record.pk).reason == "Renamed at the merchant's request"
