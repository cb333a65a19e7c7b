"""Redis (the cache and the broker, on one server as in production) goes down under a running
service, and comes back.

The test runs a ``redis-server`` of its own and a real gunicorn against it
(``CACHE_URL`` and ``CELERY_BROKER_URL`` both on it), stops that Redis and checks that the API
degrades instead of failing: authenticated reads answer 200 (the rate limits fail open), name
enquiry answers 503 (its limit fails closed: each one costs a provider call), a payout create
answers 202 (its dispatch wake cannot publish: logged, never returned), and
nothing answers 500. Once Redis is back, beat's sweeper (the management command here) hands
the payout to a worker, which dispatches it once.
"""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
import redis

from payouts.models import Payout, PayoutStatus, SandboxTransfer
from tests.faults.conftest import (
    PAYOUTS_PATH,
    TEST_MODE,
    Process,
    Processes,
    free_port,
    funded_wallet,
    http_json,
    payout_body,
    unavailable,
    wait_for,
)

BANKS_PATH = "/api/v1/transactions/bank"
# The cache's sockets time out within 0.25 s and its circuit then skips Redis: a request
# during the outage is not slowed by more than a fraction of this.
REQUEST_BUDGET_SECONDS = 3.0


def redis_server_start(processes: Processes, name: str, port: int) -> Process:
    """A throwaway ``redis-server`` on ``port`` that keeps nothing on disk."""
    if shutil.which("redis-server") is None:
        unavailable("redis-server is not installed")
    server = processes.start(
        name,
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
        processes.env(),
    )
    client = redis.Redis(port=port, socket_connect_timeout=0.5)

    def answers() -> bool:
        assert server.alive(), server.output()[-2000:]
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False

    wait_for(answers, timeout=10, what=f"redis-server on port {port}")
    return server


def timed(call: Callable[[], tuple[int, dict]]) -> tuple[int, dict, float]:
    started = time.monotonic()
    status, body = call()
    return status, body, time.monotonic() - started


@pytest.mark.django_db(transaction=True)
def test_with_redis_down_reads_answer_creates_are_accepted_and_dispatch_follows_its_return(
    merchant_account, processes: Processes
) -> None:
    port = free_port()
    server = redis_server_start(processes, "redis", port)
    redis_url = f"redis://127.0.0.1:{port}"
    on_redis = {"CACHE_URL": f"{redis_url}/1", "CELERY_BROKER_URL": f"{redis_url}/0"}
    web, base_url = processes.web("web-redis", **on_redis)
    funded_wallet(merchant_account, TEST_MODE, "10000.00")
    key = merchant_account.test_key.plaintext
    assert http_json("GET", f"{base_url}{BANKS_PATH}", key=key)[0] == 200  # cached in Redis

    server.stop()
    for attempt in range(3):
        for path in (BANKS_PATH, PAYOUTS_PATH):
            status, body, elapsed = timed(
                lambda path=path: http_json("GET", f"{base_url}{path}", key=key, timeout=10)
            )
            assert status == 200, (attempt, path, body, web.output()[-3000:])
            assert elapsed < REQUEST_BUDGET_SECONDS, (attempt, path, elapsed)
    # Name enquiry is a paid provider call: it fails closed while its limit cannot be counted.
    status, body = http_json(
        "POST",
        f"{base_url}{PAYOUTS_PATH}/name-enquiry",
        key=key,
        body={"account_number": "0123456789", "bank_code": "058"},
    )
    assert status == 503, body
    assert body["status"] is False
    status, body, elapsed = timed(
        lambda: http_json(
            "POST", f"{base_url}{PAYOUTS_PATH}", key=key, body=payout_body("redis-down-1")
        )
    )
    assert status == 202, (body, web.output()[-3000:])
    assert elapsed < REQUEST_BUDGET_SECONDS
    payout = Payout.objects.get(pk=body["data"]["payout"]["id"])
    assert payout.status == PayoutStatus.RESERVED
    wait_for(
        lambda: "could not enqueue a dispatch round" in web.output(),
        timeout=10,
        what="the enqueue failure in the web log",
    )
    assert "unavailable" in web.output()  # the degraded cache is logged
    assert '" 500 ' not in web.output()

    # Redis is back (empty, as after a restart): the sweeper queues the payout for a worker.
    redis_server_start(processes, "redis-back", port)
    worker = processes.worker("worker", queue="celery", **on_redis)
    swept = processes.manage("dispatch_stuck", "--older-than", "0", "--enqueue", **on_redis)
    assert swept.returncode == 0, swept.stderr
    assert ": 1 queued; 0 error(s)." in swept.stdout
    settled = wait_for(
        lambda: Payout.objects.filter(pk=payout.pk, status=PayoutStatus.SUCCESSFUL).first(),
        timeout=45,
        what=f"the swept dispatch; worker log:\n{worker.output()[-3000:]}",
    )
    assert settled.dispatch_attempts == 1
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    # The cache is used again once its circuit closes: reads still answer.
    time.sleep(1.5)
    assert http_json("GET", f"{base_url}{BANKS_PATH}", key=key)[0] == 200
    assert '" 500 ' not in web.output()


@contextmanager
def black_hole() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield listener.getsockname()[1]


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_black_holed_and_the_cache_up_a_create_is_accepted_promptly(
    merchant_account, processes: Processes
) -> None:
    port = free_port()
    redis_server_start(processes, "redis-cache", port)
    funded_wallet(merchant_account, TEST_MODE, "10000.00")
    key = merchant_account.test_key.plaintext
    with black_hole() as broker_port:
        web, base_url = processes.web(
            "web-broker-black-holed",
            CACHE_URL=f"redis://127.0.0.1:{port}/1",
            CELERY_BROKER_URL=f"redis://127.0.0.1:{broker_port}/0",
        )
        status, body, elapsed = timed(
            lambda: http_json(
                "POST",
                f"{base_url}{PAYOUTS_PATH}",
                key=key,
                body=payout_body("broker-black-holed-1"),
                timeout=30,
            )
        )
        assert status == 202, (body, web.output()[-3000:])
        assert elapsed < 2 * REQUEST_BUDGET_SECONDS, elapsed
        assert http_json("GET", f"{base_url}{PAYOUTS_PATH}", key=key)[0] == 200
    assert Payout.objects.get(pk=body["data"]["payout"]["id"]).status == PayoutStatus.RESERVED
    wait_for(
        lambda: "could not enqueue a dispatch round" in web.output(),
        timeout=10,
        what="the enqueue failure in the web log",
    )
