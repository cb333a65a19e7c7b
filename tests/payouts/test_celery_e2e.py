"""End to end on a real Celery worker process and Redis (not eager mode): a payout created
through the API goes from ``reserved`` to ``successful`` in the worker.

Redis: ``TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/14``). Skipped only when Redis
does not answer, and never under ``REQUIRE_POSTGRES=1`` (CI), where it fails instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection

from config.celery_app import app as celery_app
from merchants.models import Mode
from payouts.models import Payout, PayoutStatus, SandboxTransfer
from tests.payouts.helpers import (
    PAYOUTS_URL,
    assert_wallet_balanced,
    celery_client_reset,
    fund_wallet,
)
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_get

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/14")
WORKER_WAIT_SECONDS = 60


def _unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_POSTGRES") == "1":
        pytest.fail(f"end-to-end Celery test cannot run under REQUIRE_POSTGRES=1: {reason}")
    pytest.skip(reason)


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return (
        f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )


@pytest.fixture
def redis_broker() -> Iterator[str]:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        _unavailable(f"Redis at {REDIS_URL} is unreachable ({error})")
    if connection.vendor != "postgresql":
        _unavailable("the worker needs a database shared across processes (PostgreSQL)")
    queue = f"payouts-e2e-{uuid.uuid4().hex[:12]}"
    previous = (
        celery_app.conf.broker_url,
        celery_app.conf.broker_transport_options,
        celery_app.conf.task_routes,
    )
    celery_app.conf.broker_url = REDIS_URL
    celery_app.conf.broker_transport_options = {"visibility_timeout": 300}
    celery_app.conf.task_routes = {"payouts.tasks.*": {"queue": queue}}
    celery_client_reset()
    try:
        yield queue
    finally:
        (
            celery_app.conf.broker_url,
            celery_app.conf.broker_transport_options,
            celery_app.conf.task_routes,
        ) = previous
        celery_client_reset()
        client = redis.Redis.from_url(REDIS_URL)
        client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")


@pytest.fixture
def celery_worker(redis_broker: str, tmp_path: Path) -> Iterator[subprocess.Popen]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": REDIS_URL,
        "VAR_DIR": str(tmp_path / "var"),
    }
    log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config.celery_app",
            "worker",
            "-Q",
            redis_broker,
            "--pool=solo",
            "--without-mingle",
            "--without-gossip",
            "--without-heartbeat",
            "--loglevel=INFO",
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield worker
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=5)
        log.close()


def _wait_for_status(payout_id: int, status: str, worker: subprocess.Popen, log: Path) -> Payout:
    deadline = time.monotonic() + WORKER_WAIT_SECONDS
    while time.monotonic() < deadline:
        payout = Payout.objects.get(pk=payout_id)
        if payout.status == status:
            return payout
        assert worker.poll() is None, f"worker exited early:\n{log.read_text()[-3000:]}"
        time.sleep(0.2)
    raise AssertionError(
        f"payout stayed {payout.status} for {WORKER_WAIT_SECONDS}s; worker log:\n"
        f"{log.read_text()[-3000:]}"
    )


@pytest.mark.django_db(transaction=True)
def test_worker_takes_a_payout_from_reserved_to_successful(
    celery_worker, merchant_account, client_for, tmp_path: Path
) -> None:
    wallet = fund_wallet(wallet_get(merchant=merchant_account.merchant, mode=Mode.TEST), "5000")
    client = client_for(merchant_account.test_key.plaintext)
    response = client.post(
        PAYOUTS_URL,
        {
            "account_number": "0123456789",
            "bank_code": "058",
            "amount": "1500.00",
            "idempotency_key": "e2e-worker-1",
        },
        format="json",
    )
    assert response.status_code == 202
    created = response.json()["data"]["payout"]
    assert created["status"] == "reserved"

    payout = _wait_for_status(
        created["id"], PayoutStatus.SUCCESSFUL, celery_worker, tmp_path / "worker.log"
    )
    assert payout.completed_at is not None
    assert payout.dispatch_attempts == 1
    assert SandboxTransfer.objects.get(reference=payout.internal_reference).initiate_count == 1
    debit = LedgerEntry.objects.get(payout_id=payout.pk, entry_type=LedgerEntryType.PAYOUT_DEBIT)
    assert (debit.amount, debit.fee_amount) == (Decimal("1500.00"), Decimal("10.00"))
    wallet.refresh_from_db()
    assert wallet.available_balance == Decimal("3490.00")
    assert wallet.reserved_balance == Decimal("0.00")
    assert_wallet_balanced(wallet)
    details = client.get(f"{PAYOUTS_URL}/{payout.pk}").json()["data"]
    assert details["status"] == "successful"
    assert _log_mentions(tmp_path / "worker.log", "payout_dispatch_task")


def _log_mentions(log: Path, text: str) -> bool:
    """The work was done by the worker process (its log names the task)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if text in log.read_text():
            return True
        time.sleep(0.2)
    return False
