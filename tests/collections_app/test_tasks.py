"""Expiry: the beat task's body, its schedule entry and the management command."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from kombu import Connection

from collections_app.models import PaymentStatus
from collections_app.selectors import TransactionsWaiting, transactions_pending_not_due
from collections_app.tasks import transactions_expire_task
from core.dates import local_isoformat, local_text
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


def test_command_prints_progress_on_stderr_and_a_summary_on_stdout() -> None:
    past = timezone.now() - timedelta(hours=25)
    CollectionTransactionFactory.create_batch(3, expires_at=past)
    fresh = CollectionTransactionFactory()
    out, err = StringIO(), StringIO()
    call_command("expire_transactions", "--batch-size", "2", stdout=out, stderr=err)
    assert err.getvalue().splitlines() == [
        f"expire [{'#' * 20}{'.' * 10}] 2/3 transactions",
        f"expire [{'#' * 30}] 3/3 transactions",
    ]
    assert out.getvalue() == (
        "Expired 3 of 3 due pending transaction(s) (expiry window 24 h). Waiting: 1 pending "
        f"transaction(s), next expires at {local_text(fresh.expires_at)} ({fresh.reference}).\n"
    )


def test_command_with_nothing_due_says_when_the_next_expires() -> None:
    soon = CollectionTransactionFactory(expires_at=timezone.now() + timedelta(hours=2))
    CollectionTransactionFactory()
    out = StringIO()
    call_command("expire_transactions", "--json", stdout=out, stderr=StringIO())
    assert json.loads(out.getvalue()) == {
        "due": 0,
        "expired": 0,
        "expiry_window_hours": 24,
        "waiting": {
            "count": 2,
            "next_expires_at": local_isoformat(soon.expires_at),
            "next_transaction": soon.reference,
        },
        "ok": True,
    }


def test_command_publishes_without_a_kombu_warning(
    caplog: pytest.LogCaptureFixture, django_capture_on_commit_callbacks
) -> None:
    CollectionTransactionFactory(expires_at=timezone.now() - timedelta(minutes=1))
    with (
        caplog.at_level(logging.WARNING),
        django_capture_on_commit_callbacks(execute=True) as callbacks,
    ):
        call_command("expire_transactions", stdout=StringIO(), stderr=StringIO())
    assert callbacks  # the webhook delivery was published
    assert [record.getMessage() for record in caplog.records] == []


def test_the_configured_broker_url_names_a_host() -> None:
    assert Connection(settings.CELERY_BROKER_URL).hostname


def test_command_rejects_a_bad_batch_size() -> None:
    with pytest.raises(CommandError, match="at least 1"):
        call_command("expire_transactions", "--batch-size", "0")


def test_pending_not_due_is_one_query(django_assert_num_queries) -> None:
    now = timezone.now()
    CollectionTransactionFactory(expires_at=now - timedelta(minutes=1))
    first = CollectionTransactionFactory(expires_at=now + timedelta(hours=1))
    CollectionTransactionFactory(expires_at=now + timedelta(hours=2))
    with django_assert_num_queries(1):
        waiting = transactions_pending_not_due(now=now)
    assert waiting == TransactionsWaiting(
        count=2, next_expires_at=now + timedelta(hours=1), next_reference=first.reference
    )
