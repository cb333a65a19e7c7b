"""What bounds one merchant's hold on the webhook senders: a wall-clock deadline per attempt,
Celery time limits on every task, the webhooks queue, a cap on each merchant's attempts in
flight, the sweeper's round-robin; and which URL a retry goes to."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from celery.exceptions import Retry
from django.conf import settings as django_settings
from django.db import connection, transaction
from django.utils import timezone

from collections_app.models import PaymentStatus
from collections_app.services import transaction_confirm
from config.celery_app import app as celery_app
from merchants.models import Merchant, Mode
from merchants.services import merchant_create, webhook_settings_set
from tests.celery_worker import procfile_commands
from tests.collections_app.factories import CollectionTransactionFactory
from tests.collections_app.helpers import RecordingReceiver
from tests.webhooks.receivers import SlowReceiver
from wallets.selectors import wallet_get
from webhooks import tasks
from webhooks.deliveries import (
    URL_REMOVED_ERROR,
    DeliveryAttemptResult,
    DeliveryDeferred,
    webhook_deliveries_due_ids,
    webhook_delivery_attempt,
    webhook_merchant_in_flight,
)
from webhooks.models import DeliveryStatus, DeliveryTarget, Event, WebhookDelivery
from webhooks.wallet_events import wallet_balance_low_record

DEADLINE = 2.0
SLACK = 1.0


@pytest.fixture
def allow_private(settings: Any) -> None:
    settings.CALLBACK_URL_ALLOW_PRIVATE = True
    settings.WEBHOOK_RETRY_JITTER = 0.0


@pytest.fixture
def receiver(allow_private: None) -> Iterator[RecordingReceiver]:
    server = RecordingReceiver().start()
    yield server
    server.stop()


def balance_low_event(merchant: Merchant) -> Event:
    """An event that goes to the merchant's webhook URL only (as a moved threshold makes one)."""
    with transaction.atomic():
        return wallet_balance_low_record(
            wallet=wallet_get(merchant=merchant, mode=Mode.TEST),
            available_balance=Decimal("10.00"),
            low_balance_threshold=Decimal("5000.00"),
            ledger_entry=None,
        )


def webhook_chain(merchant: Merchant) -> WebhookDelivery:
    return balance_low_event(merchant).deliveries.get(target=DeliveryTarget.WEBHOOK_URL)


def attempted(delivery: WebhookDelivery, **kwargs: Any) -> DeliveryAttemptResult:
    outcome = webhook_delivery_attempt(delivery_id=delivery.pk, **kwargs)
    assert isinstance(outcome, DeliveryAttemptResult), outcome
    return outcome


def attempt_in_thread(delivery_id: int) -> None:
    """An attempt made by another sender: its own thread and database connection."""
    try:
        webhook_delivery_attempt(delivery_id=delivery_id)
    finally:
        connection.close()


# --- the deadline --------------------------------------------------------------------------------


@pytest.mark.slow  # waits for a real delivery deadline
@pytest.mark.django_db
@pytest.mark.parametrize("behaviour", ["drip", "silent"])
def test_an_attempt_ends_by_the_deadline_and_is_recorded_as_a_timeout(
    behaviour: str, merchant: Merchant, settings: Any, allow_private: None
) -> None:
    """A receiver answering ``200 OK`` and then a byte every 0.5 s never trips the 5 s read
    timeout; one that says nothing trips it only after 5 s. Both end at the 2 s deadline."""
    settings.WEBHOOK_DELIVERY_DEADLINE_SECONDS = DEADLINE
    slow = SlowReceiver(behaviour, interval=0.5, max_seconds=15).start()
    try:
        webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=slow.url("/hooks"))
        delivery = webhook_chain(merchant)
        started = time.monotonic()
        recorded = attempted(delivery)
        elapsed = time.monotonic() - started
        closed = slow.connections[0].closed_by_sender_at
    finally:
        slow.stop()
    assert elapsed <= DEADLINE + SLACK, f"the attempt took {elapsed:.2f}s"
    assert closed is not None and closed - slow.connections[0].accepted_at <= DEADLINE + SLACK
    row = recorded.attempt
    assert row.status_code is None
    assert row.error == "timeout: no complete answer within the 2 s deadline"
    assert not row.succeeded
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.attempt_count == 1
    assert delivery.next_attempt_at == row.next_attempt_at
    assert delivery.next_attempt_at is not None
    assert delivery.next_attempt_at - row.created_at == timedelta(seconds=30)
    assert delivery.claimed_until is None


@pytest.mark.slow  # waits for a real delivery deadline
@pytest.mark.django_db
def test_headers_in_time_count_and_the_body_is_read_until_the_deadline(
    merchant: Merchant, settings: Any, allow_private: None
) -> None:
    settings.WEBHOOK_DELIVERY_DEADLINE_SECONDS = DEADLINE
    slow = SlowReceiver("drip_body", interval=0.5, max_seconds=15).start()
    try:
        webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=slow.url("/hooks"))
        started = time.monotonic()
        recorded = attempted(webhook_chain(merchant))
        elapsed = time.monotonic() - started
    finally:
        slow.stop()
    assert elapsed <= DEADLINE + SLACK, f"the attempt took {elapsed:.2f}s"
    assert recorded.delivery.status == DeliveryStatus.SUCCEEDED
    assert recorded.attempt.status_code == 200
    assert 1 <= len(recorded.attempt.response_excerpt) <= 5
    assert set(recorded.attempt.response_excerpt) == {"a"}


@pytest.mark.django_db
def test_an_answer_inside_the_deadline_still_counts(
    merchant: Merchant, settings: Any, receiver: RecordingReceiver
) -> None:
    settings.WEBHOOK_DELIVERY_DEADLINE_SECONDS = DEADLINE
    receiver.answer = lambda request: (200, b"ok", {})
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/hooks"))
    recorded = attempted(webhook_chain(merchant))
    assert recorded.delivery.status == DeliveryStatus.SUCCEEDED
    assert recorded.attempt.response_excerpt == "ok"


# --- time limits and queues ----------------------------------------------------------------------


def test_the_send_task_has_hard_and_soft_time_limits_past_the_deadline() -> None:
    task = tasks.webhook_delivery_send_task
    deadline = django_settings.WEBHOOK_DELIVERY_DEADLINE_SECONDS
    assert deadline == 10.0
    assert deadline < task.soft_time_limit < task.time_limit
    assert task.time_limit < django_settings.WEBHOOK_DELIVERY_CLAIM_SECONDS


def test_every_task_of_the_project_has_a_hard_time_limit() -> None:
    celery_app.loader.import_default_modules()  # every app's tasks module, as a worker does
    project_tasks = {
        name: task
        for name, task in celery_app.tasks.items()
        if not name.startswith("celery.") and not name.startswith("tests.")
    }
    assert "collections_app.tasks.transactions_expire_task" in project_tasks
    assert len(project_tasks) >= 9
    missing = [name for name, task in project_tasks.items() if not task.time_limit]
    assert missing == []
    assert all(0 < task.soft_time_limit < task.time_limit for task in project_tasks.values())


def test_webhook_tasks_go_to_the_webhooks_queue_and_money_tasks_to_the_default_one() -> None:
    router = celery_app.amqp.router

    def queue_of(name: str) -> str:
        return router.route({}, name)["queue"].name

    assert queue_of("webhooks.tasks.webhook_delivery_send_task") == "webhooks"
    assert queue_of("webhooks.tasks.webhook_deliveries_sweep_task") == "webhooks"
    default = django_settings.CELERY_TASK_DEFAULT_QUEUE
    assert default != "webhooks"
    for name in (
        "payouts.tasks.payouts_dispatch_round_task",
        "payouts.tasks.payout_dispatch_task",
        "payouts.tasks.payout_requery_task",
        "collections_app.tasks.transactions_expire_task",
    ):
        assert queue_of(name) == default


def test_the_procfile_runs_a_webhooks_pool_and_keeps_the_default_worker_off_its_queue() -> None:
    commands = procfile_commands()
    worker = commands["worker"].split()
    webhooks = commands["webhooks"].split()
    assert worker[worker.index("-Q") + 1] == "${CELERY_DEFAULT_QUEUE:-celery}"
    assert "webhooks" not in commands["worker"]
    assert webhooks[:4] == ["celery", "-A", "config.celery_app", "worker"]
    assert webhooks[webhooks.index("-Q") + 1] == "${WEBHOOK_QUEUE:-webhooks}"
    assert "--concurrency=${WEBHOOK_WORKER_CONCURRENCY:-4}" in webhooks
    assert webhooks[webhooks.index("-n") + 1] == "webhooks@%h"
    assert worker[worker.index("-n") + 1] != "webhooks@%h"


# --- the per-merchant cap ------------------------------------------------------------------------


@pytest.mark.slow  # waits for a real delivery deadline
@pytest.mark.django_db(transaction=True)
def test_at_the_cap_a_merchants_next_delivery_is_deferred_while_another_merchants_goes_out(
    merchant: Merchant, settings: Any, receiver: RecordingReceiver
) -> None:
    settings.WEBHOOK_MERCHANT_MAX_IN_FLIGHT = 1
    settings.WEBHOOK_DELIVERY_DEADLINE_SECONDS = DEADLINE
    slow = SlowReceiver("drip", interval=0.2, max_seconds=15).start()
    other = merchant_create(name="Prompt Hooks", email="prompt@example.com").merchant
    try:
        webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=slow.url("/slow"))
        webhook_settings_set(merchant=other, mode=Mode.TEST, url=receiver.url("/prompt"))
        first, second = webhook_chain(merchant), webhook_chain(merchant)
        prompt = webhook_chain(other)
        sending = threading.Thread(target=attempt_in_thread, args=(first.pk,))
        sending.start()
        deadline = time.monotonic() + 5
        while slow.accepted() < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert slow.accepted() == 1
        assert webhook_merchant_in_flight(merchant_id=merchant.pk, now=timezone.now()) == 1

        now = timezone.now()
        deferred = webhook_delivery_attempt(delivery_id=second.pk, now=now)
        delivered = webhook_delivery_attempt(delivery_id=prompt.pk)
        sending.join(timeout=DEADLINE + 5)
    finally:
        slow.stop()
    assert isinstance(deferred, DeliveryDeferred)
    assert deferred.in_flight == 1
    assert timedelta(seconds=5) <= deferred.until - now <= timedelta(seconds=7.5)
    second.refresh_from_db()
    assert (second.status, second.attempt_count, second.attempts.count()) == ("pending", 0, 0)
    assert second.next_attempt_at == deferred.until
    assert second.claimed_until is None
    assert slow.accepted() == 1  # the second was never sent
    assert isinstance(delivered, DeliveryAttemptResult)
    assert delivered.delivery.status == DeliveryStatus.SUCCEEDED
    assert len(receiver.received("POST", "/prompt")) == 1
    first.refresh_from_db()
    assert first.attempt_count == 1 and first.claimed_until is None
    assert webhook_merchant_in_flight(merchant_id=merchant.pk, now=timezone.now()) == 0


def send_task_run(delivery_id: int, **kwargs: Any) -> Retry:
    """Runs the send task's body as a worker would (so a retry is published, to the in-memory
    broker, and raised with its signature); the ``Retry`` it raised."""
    task = tasks.webhook_delivery_send_task
    task.push_request(id="send-task-under-test", retries=0, delivery_info={}, called_directly=False)
    try:
        with pytest.raises(Retry) as retry:
            task.run(delivery_id, **kwargs)
    finally:
        task.pop_request()
    return retry.value


@pytest.mark.django_db
def test_a_deferred_send_task_comes_back_when_its_deferral_ends(
    merchant: Merchant, settings: Any, receiver: RecordingReceiver
) -> None:
    settings.WEBHOOK_MERCHANT_MAX_IN_FLIGHT = 1
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/hooks"))
    in_flight, waiting = webhook_chain(merchant), webhook_chain(merchant)
    WebhookDelivery.objects.filter(pk=in_flight.pk).update(
        claimed_until=timezone.now() + timedelta(seconds=60)
    )
    retry = send_task_run(waiting.pk)
    assert retry.sig.kwargs == {"deferrals": 1}
    assert 5 <= float(retry.when) <= 7.5
    WebhookDelivery.objects.filter(pk=waiting.pk).update(next_attempt_at=timezone.now())
    again = send_task_run(waiting.pk, deferrals=1)  # a deferral in a row waits twice as long
    assert again.sig.kwargs == {"deferrals": 2}
    assert 9.9 <= float(again.when) <= 15
    assert receiver.received("POST") == []
    WebhookDelivery.objects.filter(pk=in_flight.pk).update(claimed_until=None)
    WebhookDelivery.objects.filter(pk=waiting.pk).update(next_attempt_at=timezone.now())
    assert tasks.webhook_delivery_send_task(waiting.pk, deferrals=2) == "succeeded"


@pytest.mark.django_db
def test_the_sweeper_takes_due_deliveries_round_robin_across_merchants(
    merchant: Merchant, settings: Any
) -> None:
    settings.CALLBACK_URL_ALLOW_PRIVATE = True
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url="http://127.0.0.1:9/dead")
    backlog = [webhook_chain(merchant).pk for _ in range(5)]
    other = merchant_create(name="Prompt Hooks", email="prompt@example.com").merchant
    webhook_settings_set(merchant=other, mode=Mode.TEST, url="http://127.0.0.1:9/other")
    prompt = webhook_chain(other).pk
    now = timezone.now() + timedelta(seconds=1)
    assert webhook_deliveries_due_ids(now=now, limit=3) == [backlog[0], prompt, backlog[1]]
    assert webhook_deliveries_due_ids(now=now) == [backlog[0], prompt, *backlog[1:]]


# --- which URL a retry goes to -------------------------------------------------------------------


@pytest.mark.django_db
def test_a_retry_goes_to_the_merchants_current_webhook_url(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    answers = iter([503, 200])
    receiver.answer = lambda request: (next(answers), b"", {})
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/old"))
    delivery = webhook_chain(merchant)
    first = attempted(delivery)
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/new"))
    second = attempted(delivery, now=first.delivery.next_attempt_at)
    assert [request.path for request in receiver.received("POST")] == ["/old", "/new"]
    assert [row.url for row in delivery.attempts.order_by("attempt_number")] == [
        receiver.url("/old"),
        receiver.url("/new"),
    ]
    assert second.delivery.status == DeliveryStatus.SUCCEEDED
    assert second.delivery.url == receiver.url("/new")


@pytest.mark.django_db
def test_a_removed_webhook_url_ends_the_chain_with_its_reason(
    merchant: Merchant, receiver: RecordingReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.answer = lambda request: (503, b"", {})
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/old"))
    delivery = webhook_chain(merchant)
    first = attempted(delivery)
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url="")
    with caplog.at_level(logging.WARNING, logger="webhooks.deliveries"):
        outcome = webhook_delivery_attempt(
            delivery_id=delivery.pk, now=first.delivery.next_attempt_at
        )
    assert outcome is None
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.last_error == URL_REMOVED_ERROR == "webhook URL removed by the merchant"
    assert delivery.next_attempt_at is None
    assert delivery.attempt_count == 1
    assert len(receiver.received("POST")) == 1
    assert URL_REMOVED_ERROR in caplog.text
    assert webhook_deliveries_due_ids(now=timezone.now() + timedelta(days=3)) == []


@pytest.mark.django_db
def test_a_callback_url_chain_keeps_its_url_when_the_webhook_url_changes(
    merchant: Merchant, receiver: RecordingReceiver
) -> None:
    receiver.answer = lambda request: (503, b"", {})
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url=receiver.url("/hooks"))
    txn = CollectionTransactionFactory(merchant=merchant, callback_url=receiver.url("/callback"))
    transaction_confirm(collection=txn, outcome=PaymentStatus.PAID, gateway_reference="SBX_1")
    callback = Event.objects.get(transaction=txn).deliveries.get(target=DeliveryTarget.CALLBACK_URL)
    first = attempted(callback)
    webhook_settings_set(merchant=merchant, mode=Mode.TEST, url="")
    attempted(callback, now=first.delivery.next_attempt_at)
    assert [request.path for request in receiver.received("POST")] == ["/callback", "/callback"]
    callback.refresh_from_db()
    assert callback.status == DeliveryStatus.PENDING
    assert callback.url == receiver.url("/callback")
