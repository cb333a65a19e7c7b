"""Expiry: the beat task's body, its schedule entry and the management command."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from collections_app.models import PaymentStatus
from collections_app.tasks import transactions_expire_task
from tests.collections_app.factories import CollectionTransactionFactory

pytestmark = pytest.mark.django_db


def test_beat_runs_the_expiry_task() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["collections-expire-transactions"]
    assert entry["task"] == "collections_app.tasks.transactions_expire_task"
    assert entry["schedule"] == timedelta(minutes=5)
    assert transactions_expire_task.name == entry["task"]


def test_default_expiry_is_24_hours() -> None:
    assert settings.COLLECTION_TRANSACTION_EXPIRY_HOURS == 24


def test_task_body_expires_due_transactions() -> None:
    due = CollectionTransactionFactory(expires_at=timezone.now() - timedelta(minutes=1))
    fresh = CollectionTransactionFactory()
    assert transactions_expire_task() == 1
    assert transactions_expire_task() == 0  # idempotent
    due.refresh_from_db()
    fresh.refresh_from_db()
    assert due.payment_status == PaymentStatus.EXPIRED
    assert fresh.payment_status == PaymentStatus.PENDING


def test_command_prints_progress_and_a_summary() -> None:
    past = timezone.now() - timedelta(hours=25)
    CollectionTransactionFactory.create_batch(3, expires_at=past)
    CollectionTransactionFactory()
    out = StringIO()
    call_command("expire_transactions", "--batch-size", "2", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["  checked 2/3 due transactions", "  checked 3/3 due transactions"]
    assert lines[-1] == "Expired 3 of 3 due pending transactions (expiry window 24 h)."


def test_command_with_nothing_due() -> None:
    CollectionTransactionFactory()
    out = StringIO()
    call_command("expire_transactions", stdout=out)
    assert out.getvalue().strip() == "Expired 0 of 0 due pending transactions (expiry window 24 h)."


def test_command_rejects_a_bad_batch_size() -> None:
    with pytest.raises(CommandError, match="at least 1"):
        call_command("expire_transactions", "--batch-size", "0")
