"""The broker is down when a payout is created, on Redis and on RabbitMQ.

Redis: a real gunicorn process whose CELERY_BROKER_URL points at a closed port accepts the
payout: the funds are reserved and the payout stays ``reserved`` (the enqueue failure is logged,
never returned to the merchant). Once a broker is back, ``dispatch_stuck --enqueue`` (what beat
runs) hands it to a worker, which dispatches it once.

RabbitMQ: the same, through a proxy of the test's own (``tests.faults.tcp_proxy``: the shared
RabbitMQ is not the test's to restart). The proxy is cut under a running gunicorn that has
published through it, as a restart of RabbitMQ would; the next create is accepted and its
enqueue failure logged; the proxy is restored, and the sweeper and a worker dispatch it once.
"""

from __future__ import annotations

import time
from decimal import Decimal
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.conf import settings

from payouts.models import Payout, PayoutStatus, SandboxTransfer
from tests.celery_worker import RABBITMQ_URL, broker_queue_remove, rabbitmq_require, unique_queue
from tests.faults.conftest import (
    PAYOUTS_PATH,
    REDIS_URL_2,
    TEST_MODE,
    Processes,
    free_port,
    funded_wallet,
    http_json,
    payout_body,
    unavailable,
    wait_for,
)
from tests.faults.tcp_proxy import tcp_proxy
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_totals

pytestmark = [pytest.mark.multiprocess]

CREATE_BUDGET_SECONDS = 10


@pytest.mark.django_db(transaction=True)
def test_create_succeeds_with_the_broker_down_and_dispatch_stuck_sends_it_later(
    merchant_account, processes: Processes
) -> None:
    try:
        redis.Redis.from_url(REDIS_URL_2, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        unavailable(f"Redis at {REDIS_URL_2} is unreachable ({error})")
    dead_broker = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    web, base_url = processes.web("web-broker-down", CELERY_BROKER_URL=dead_broker)
    wallet = funded_wallet(merchant_account, TEST_MODE, "10000.00")
    key = merchant_account.test_key.plaintext

    started = time.monotonic()
    status, body = http_json(
        "POST", f"{base_url}{PAYOUTS_PATH}", key=key, body=payout_body("broker-down-1")
    )
    elapsed = time.monotonic() - started

    assert status == 202, body
    assert elapsed < CREATE_BUDGET_SECONDS
    created = body["data"]["payout"]
    assert created["status"] == "reserved"
    assert body["data"]["duplicate"] is False
    payout = Payout.objects.get(pk=created["id"])
    wallet.refresh_from_db()
    assert wallet.reserved_balance == payout.total_debit_amount
    assert wallet.available_balance == Decimal("10000.00") - payout.total_debit_amount
    assert (
        LedgerEntry.objects.filter(
            payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_RESERVE
        ).count()
        == 1
    )
    assert "could not enqueue a dispatch round" in wait_for(
        lambda: "could not enqueue a dispatch round" in web.output() and web.output(),
        timeout=10,
        what="the enqueue failure in the web log",
    )
    # A replay while the broker is still down is the same payout, not a second one.
    status, replay = http_json(
        "POST", f"{base_url}{PAYOUTS_PATH}", key=key, body=payout_body("broker-down-1")
    )
    assert status == 202 and replay["data"]["duplicate"] is True
    assert Payout.objects.filter(idempotency_key="broker-down-1").count() == 1
    time.sleep(0.5)
    assert Payout.objects.get(pk=payout.pk).status == PayoutStatus.RESERVED

    # The broker is back: beat's sweeper (the management command here) queues it for a worker.
    # REDIS_URL_2 is a database of its own, so the default queue there is ours.
    queue = "celery"
    redis.Redis.from_url(REDIS_URL_2).delete(queue)
    back = {"CELERY_BROKER_URL": REDIS_URL_2}
    worker = processes.worker("worker-back", queue=queue, **back)
    try:
        swept = processes.manage("dispatch_stuck", "--older-than", "0", "--enqueue", **back)
        assert swept.returncode == 0, swept.stderr
        assert "Considered 1 stuck payout(s) (1 reserved for over 0 s, " in swept.stdout
        assert ": 1 queued; 0 error(s)." in swept.stdout

        settled = wait_for(
            lambda: Payout.objects.filter(pk=payout.pk, status=PayoutStatus.SUCCESSFUL).first(),
            timeout=45,
            what=f"the swept dispatch; worker log:\n{worker.output()[-3000:]}",
        )
    finally:
        redis.Redis.from_url(REDIS_URL_2).delete(
            queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}"
        )
    assert settled.dispatch_attempts == 1
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    assert (
        LedgerEntry.objects.filter(
            payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
        ).count()
        == 1
    )
    wallet.refresh_from_db()
    assert wallet.reserved_balance == Decimal("0.00")
    assert wallet_totals(wallet=wallet).balanced


def _rabbitmq_through(port: int) -> str:
    """``RABBITMQ_URL`` with its host and port replaced by the proxy's."""
    url = urlsplit(RABBITMQ_URL)
    credentials = url.netloc.rpartition("@")[0]
    netloc = f"{credentials}@127.0.0.1:{port}" if credentials else f"127.0.0.1:{port}"
    return urlunsplit(url._replace(netloc=netloc))


@pytest.mark.django_db(transaction=True)
def test_with_rabbitmq_cut_under_a_running_service_a_create_is_accepted_and_sent_once_it_is_back(
    merchant_account, processes: Processes
) -> None:
    rabbitmq_require(RABBITMQ_URL, unavailable=unavailable)
    upstream = urlsplit(RABBITMQ_URL)
    queue = unique_queue("broker-down")
    with tcp_proxy((upstream.hostname or "127.0.0.1", upstream.port or 5672)) as proxy:
        env = {
            "CELERY_BROKER_URL": _rabbitmq_through(proxy.port),
            "CELERY_DEFAULT_QUEUE": queue,
            "WEBHOOK_QUEUE": queue,
        }
        try:
            web, base_url = processes.web("web-rabbitmq-cut", **env)
            wallet = funded_wallet(merchant_account, TEST_MODE, "10000.00")
            key = merchant_account.test_key.plaintext
            status, before = http_json(
                "POST", f"{base_url}{PAYOUTS_PATH}", key=key, body=payout_body("rabbitmq-up-1")
            )
            assert status == 202, before
            assert "could not enqueue" not in web.output()
            # A create publishes a wake only once its process's wake interval has ended (one
            # round per interval covers every commit inside it): let it end, so that the next
            # create has to reach the broker.
            time.sleep(settings.PAYOUT_DISPATCH_WAKE_INTERVAL_MS / 1000 + 0.3)

            proxy.cut()  # what a restart does to the service's connections
            started = time.monotonic()
            status, body = http_json(
                "POST", f"{base_url}{PAYOUTS_PATH}", key=key, body=payout_body("rabbitmq-cut-1")
            )
            elapsed = time.monotonic() - started

            assert status == 202, body
            assert elapsed < CREATE_BUDGET_SECONDS
            assert proxy.refused >= 1
            payout = Payout.objects.get(pk=body["data"]["payout"]["id"])
            assert payout.status == PayoutStatus.RESERVED
            wait_for(
                lambda: "could not enqueue a dispatch round" in web.output(),
                timeout=10,
                what=f"the enqueue failure in the web log:\n{web.output()[-3000:]}",
            )
            time.sleep(0.5)
            assert Payout.objects.get(pk=payout.pk).status == PayoutStatus.RESERVED

            proxy.restore()  # RabbitMQ is back: beat's sweeper queues it for a worker
            worker = processes.worker("worker-back", queue=queue, **env)
            swept = processes.manage("dispatch_stuck", "--older-than", "0", "--enqueue", **env)
            assert swept.returncode == 0, swept.stderr
            settled = wait_for(
                lambda: Payout.objects.filter(pk=payout.pk, status=PayoutStatus.SUCCESSFUL).first(),
                timeout=45,
                what=f"the swept dispatch; worker log:\n{worker.output()[-3000:]}",
            )
        finally:
            processes.stop_all()
            broker_queue_remove(RABBITMQ_URL, queue)
    assert settled.dispatch_attempts == 1
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    assert (
        LedgerEntry.objects.filter(
            payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT
        ).count()
        == 1
    )
    wait_for(
        lambda: Payout.objects.filter(status=PayoutStatus.SUCCESSFUL).count() == 2,
        timeout=15,
        what="the payout created before the cut",
    )
    wallet.refresh_from_db()
    assert wallet.reserved_balance == Decimal("0.00")
    assert wallet_totals(wallet=wallet).balanced
