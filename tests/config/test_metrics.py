"""/metrics: Prometheus text of the counted metrics and the scrape-time gauges; its access
rules."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from decimal import Decimal

import pytest
from django.conf import settings
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from core.heartbeats import (
    BEAT_HEARTBEAT,
    beat_task_heartbeat_name,
    heartbeat_record,
    worker_heartbeat_name,
)
from merchants.models import Mode
from merchants.services import MerchantCreated
from payouts.models import PayoutStatus
from payouts.services import payout_create, payouts_dispatch_round
from tests.payouts.helpers import GOOD_ACCOUNT, GTB_CODE, fund_wallet, new_idempotency_key
from wallets.selectors import wallet_get
from webhooks.events import event_record

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _project_broker() -> Iterator[None]:
    """The broker the settings configure (another module's session fixture may have swapped
    in an in-memory one, whose queues /metrics cannot read)."""
    from config.celery_app import app as celery_app

    previous = (celery_app.conf.broker_url, celery_app.conf.broker_transport_options)
    celery_app.conf.broker_url = settings.CELERY_BROKER_URL
    celery_app.conf.broker_transport_options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    yield
    celery_app.conf.broker_url, celery_app.conf.broker_transport_options = previous


NAMED_FAMILIES = {
    "http_requests",
    "http_request_duration_seconds",
    "payout_dispatch_rounds",
    "payout_dispatch_round_payouts",
    "payout_provider_outcomes",
    "payouts_pending",
    "payouts_pending_oldest_age_seconds",
    "webhook_deliveries_pending",
    "webhook_deliveries_oldest_due_age_seconds",
    "celery_queue_length",
    "celery_worker_heartbeat_timestamp_seconds",
    "celery_beat_heartbeat_timestamp_seconds",
    "celery_beat_task_last_sent_timestamp_seconds",
    "metrics_collector_up",
}

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: Client | None = None, **extra: str) -> tuple[int, str]:
    response = (client or Client()).get("/metrics", **extra)
    return response.status_code, response.content.decode()


def samples(text: str) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_answer_prometheus_text_with_the_named_families() -> None:
    status, text = scrape()
    assert status == 200
    families = {family.name for family in text_string_to_metric_families(text)}
    assert families >= NAMED_FAMILIES - {
        # these appear once something was counted or beat
        "payout_dispatch_rounds",
        "payout_dispatch_round_payouts",
        "payout_provider_outcomes",
        "http_requests",
        "http_request_duration_seconds",
    }
    found = samples(text)
    for part in ("payouts", "webhooks", "queues", "heartbeats"):
        assert value(found, "metrics_collector_up", part=part) == 1.0


def test_requests_are_counted_by_route_name_never_by_raw_path(test_client) -> None:
    before = samples(scrape()[1])
    test_client.get("/api/v1/transactions/bank")
    Client().get("/no-such-page-xyz")
    test_client.get("/api/v1/no-such-route-xyz")
    status, text = scrape()
    after = samples(text)

    def grew(**labels: str) -> float:
        return value(after, "http_requests_total", **labels) - value(
            before, "http_requests_total", **labels
        )

    assert grew(route="bank-list", method="GET", status="200") == 1
    assert grew(route="unmatched", method="GET", status="404") == 1
    assert grew(route="api-route-not-found", method="GET", status="404") == 1
    assert "xyz" not in text
    count = value(after, "http_request_duration_seconds_count", route="bank-list", method="GET")
    assert count >= 1


def test_pending_payouts_and_their_oldest_age_by_status(merchant_account: MerchantCreated) -> None:
    fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "100000.00")
    before = samples(scrape()[1])
    for _ in range(2):
        payout_create(
            merchant=merchant_account.merchant,
            mode=Mode.TEST,
            account_number=GOOD_ACCOUNT,
            bank_code=GTB_CODE,
            amount=Decimal("100.00"),
            idempotency_key=new_idempotency_key(),
        )
    after = samples(scrape()[1])
    reserved = value(after, "payouts_pending", status=PayoutStatus.RESERVED)
    assert reserved == value(before, "payouts_pending", status=PayoutStatus.RESERVED) + 2
    assert value(after, "payouts_pending_oldest_age_seconds", status="reserved") >= 0
    assert ("payouts_pending", (("status", "ambiguous"),)) in after


def test_a_payout_held_by_the_merchant_does_not_age_the_reserved_gauge(
    merchant_account: MerchantCreated,
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from payouts.models import Payout

    fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "100000.00")
    payout = payout_create(
        merchant=merchant_account.merchant,
        mode=Mode.TEST,
        account_number=GOOD_ACCOUNT,
        bank_code=GTB_CODE,
        amount=Decimal("100.00"),
        idempotency_key=new_idempotency_key(),
        scheduled_for=timezone.now() + timedelta(hours=2),
    ).payout
    Payout.objects.filter(pk=payout.pk).update(created_at=timezone.now() - timedelta(hours=1))

    after = samples(scrape()[1])

    assert value(after, "payouts_pending", status=PayoutStatus.RESERVED) == 1
    assert value(after, "payouts_pending_oldest_age_seconds", status="reserved") == 0


def test_dispatch_rounds_and_provider_outcomes_are_counted(
    merchant_account: MerchantCreated,
) -> None:
    fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "100000.00")
    payout_create(
        merchant=merchant_account.merchant,
        mode=Mode.TEST,
        account_number=GOOD_ACCOUNT,
        bank_code=GTB_CODE,
        amount=Decimal("100.00"),
        idempotency_key=new_idempotency_key(),
    )
    before = samples(scrape()[1])
    payouts_dispatch_round()
    payouts_dispatch_round()  # finds nothing
    after = samples(scrape()[1])

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("payout_dispatch_rounds_total", result="claimed") == 1
    assert grew("payout_dispatch_rounds_total", result="empty") >= 1
    assert grew("payout_dispatch_round_payouts_total", outcome="successful") == 1
    assert grew("payout_provider_outcomes_total", provider="sandbox", outcome="successful") == 1


def test_webhook_backlog_counts_pending_deliveries(merchant_account: MerchantCreated) -> None:
    before = samples(scrape()[1])
    event_record(
        merchant_id=merchant_account.merchant.pk,
        mode=Mode.TEST,
        event_type="payout.successful",
        reference="po_metrics",
        data={"reference": "po_metrics"},
        callback_url="https://merchant.example.com/hook",
    )
    after = samples(scrape()[1])
    grew = value(after, "webhook_deliveries_pending") - value(before, "webhook_deliveries_pending")
    assert grew >= 1


def test_heartbeats_and_beat_runs_are_exposed_as_timestamps() -> None:
    now = time.time()
    entry = next(iter(settings.CELERY_BEAT_SCHEDULE))
    heartbeat_record(worker_heartbeat_name(settings.CELERY_TASK_DEFAULT_QUEUE), at=now)
    heartbeat_record(BEAT_HEARTBEAT, at=now)
    heartbeat_record(beat_task_heartbeat_name(entry), at=now - 4)
    found = samples(scrape()[1])
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    assert value(found, "celery_worker_heartbeat_timestamp_seconds", queue=queue) == now
    assert value(found, "celery_beat_heartbeat_timestamp_seconds") == now
    task = settings.CELERY_BEAT_SCHEDULE[entry]["task"]
    last_sent = value(found, "celery_beat_task_last_sent_timestamp_seconds", entry=entry, task=task)
    assert last_sent == now - 4


def test_queue_length_counts_the_filesystem_brokers_messages(tmp_path, settings) -> None:
    from config.celery_app import app

    folder = tmp_path / "out"
    folder.mkdir()
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    for index in range(3):
        (folder / f"{index}_00000000-0000-0000-0000-00000000000{index}.{queue}.msg").write_text("")
    (folder / f"9_00000000-0000-0000-0000-000000000009.{settings.WEBHOOK_QUEUE}.msg").write_text("")
    previous = (app.conf.broker_url, app.conf.broker_transport_options)
    app.conf.broker_url = "filesystem://localhost/"
    app.conf.broker_transport_options = {"data_folder_in": str(folder)}
    try:
        found = samples(scrape()[1])
    finally:
        app.conf.broker_url, app.conf.broker_transport_options = previous
    assert value(found, "celery_queue_length", queue=queue) == 3
    assert value(found, "celery_queue_length", queue=settings.WEBHOOK_QUEUE) == 1


def test_queue_length_reads_redis_lists() -> None:
    import os

    import redis

    from config.celery_app import app

    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    client = redis.Redis.from_url(url)
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    previous = app.conf.broker_url
    try:
        client.delete(queue, f"{queue}\x06\x166")
        client.rpush(queue, "a", "b")
        client.rpush(f"{queue}\x06\x166", "c")
        app.conf.broker_url = url
        found = samples(scrape()[1])
    finally:
        app.conf.broker_url = previous
        client.delete(queue, f"{queue}\x06\x166")
    assert value(found, "celery_queue_length", queue=queue) == 3


def test_queue_length_reads_rabbitmq_queues(settings) -> None:
    from kombu import Connection, Exchange, Queue

    from config.celery_app import app
    from tests.celery_worker import (
        RABBITMQ_URL,
        rabbitmq_queue_remove,
        rabbitmq_require,
        unavailable_for,
        unique_queue,
    )

    rabbitmq_require(RABBITMQ_URL, unavailable=unavailable_for("the RabbitMQ queue length test"))
    queue, never_declared = unique_queue("metrics"), unique_queue("metrics-none")
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    settings.CELERY_TASK_ROUTES = {"webhooks.tasks.*": {"queue": never_declared}}
    previous = app.conf.broker_url
    try:
        with Connection(RABBITMQ_URL, connect_timeout=2) as connection:
            declared = Queue(
                queue, Exchange(queue, "topic"), queue, queue_arguments={"x-queue-type": "quorum"}
            )
            producer = connection.Producer()
            for body in ("a", "b", "c"):
                producer.publish(
                    body, exchange=declared.exchange, routing_key=queue, declare=[declared]
                )
        app.conf.broker_url = RABBITMQ_URL
        found = wait_for_scrape(lambda found: value(found, "celery_queue_length", queue=queue) == 3)
    finally:
        app.conf.broker_url = previous
        rabbitmq_queue_remove(RABBITMQ_URL, queue)
    assert value(found, "celery_queue_length", queue=queue) == 3
    assert value(found, "celery_queue_length", queue=never_declared) == 0


def wait_for_scrape(done: Callable[[Samples], bool], timeout: float = 5.0) -> Samples:
    """The scrape once ``done`` holds (a quorum queue counts a published message a moment
    after the publish returns), or the last one."""
    deadline = time.monotonic() + timeout
    while True:
        found = samples(scrape()[1])
        if done(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


# --- Access ---------------------------------------------------------------------------------


def test_without_a_token_only_loopback_may_read() -> None:
    assert scrape(REMOTE_ADDR="127.0.0.1")[0] == 200
    assert scrape(REMOTE_ADDR="::1")[0] == 200
    status, text = scrape(REMOTE_ADDR="203.0.113.7")
    assert status == 403
    assert "payouts_pending" not in text


@pytest.mark.parametrize(
    "authorization",
    ["", "Bearer wrong-token", "Basic bWV0cmljcy10b2tlbi0xMjM0NQ==", "metrics-token-12345"],
)
def test_with_a_token_it_is_required_even_from_loopback(settings, authorization: str) -> None:
    settings.METRICS_TOKEN = "metrics-token-12345"  # noqa: S105
    status, text = scrape(REMOTE_ADDR="127.0.0.1", HTTP_AUTHORIZATION=authorization)
    assert status == 401
    assert "payouts_pending" not in text


def test_with_a_token_the_bearer_reads_from_anywhere(settings) -> None:
    settings.METRICS_TOKEN = "metrics-token-12345"  # noqa: S105
    status, text = scrape(
        REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION="Bearer metrics-token-12345"
    )
    assert status == 200
    assert "payouts_pending" in text
    assert "metrics-token-12345" not in text


def test_metrics_never_show_a_secret_key(
    merchant_account: MerchantCreated, client_for: Callable
) -> None:
    client_for(merchant_account.test_key.plaintext).get("/api/v1/transactions/bank")
    _, text = scrape()
    assert "sk_test_" not in text and "sk_live_" not in text
