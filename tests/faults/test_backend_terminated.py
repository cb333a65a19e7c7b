"""A PostgreSQL backend is terminated (``pg_terminate_backend``) in the middle of a create.

The create runs in a real gunicorn process. To stop it exactly between "payout inserted" and
"reservation written", the test holds a SHARE lock on the ledger table: the create inserts its
payout, updates the wallet, then waits on the ledger insert, and its backend is terminated
there. Afterwards there is neither a payout nor a reservation, the balances are untouched, and
a retry with the same idempotency key creates the payout once.

A second test terminates the web's backends at random while creates run concurrently: whatever
was cut, no payout exists without its reservation and no reservation without its payout, and
every retried key ends with exactly one payout.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from decimal import Decimal
from typing import Any

import psycopg
import pytest
import redis

from payouts.models import Payout
from tests.faults.conftest import (
    PAYOUTS_PATH,
    REDIS_URL_2,
    TEST_MODE,
    Processes,
    database_url_for_processes,
    free_port,
    funded_wallet,
    http_json,
    payout_body,
    redis_ready,
    wait_for,
)
from wallets.models import LedgerEntry, LedgerEntryType
from wallets.selectors import wallet_totals

pytestmark = [pytest.mark.multiprocess]

APP_NAME = "faults-web"


def _dsn() -> str:
    return database_url_for_processes()


def _web_env(broker_url: str | None = None) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url_for_processes(application_name=APP_NAME),
        # The dispatch is not under test here: by default enqueueing fails (no broker there)
        # and is logged, which costs the kombu publish retries (~0.6 s) per create.
        "CELERY_BROKER_URL": broker_url or f"redis://127.0.0.1:{free_port()}/0",
    }


def _assert_payouts_and_reservations_match(wallet_id: int) -> None:
    payouts = set(Payout.objects.filter(wallet_id=wallet_id).values_list("pk", flat=True))
    reserves = Counter(
        LedgerEntry.objects.filter(
            wallet_id=wallet_id, entry_type=LedgerEntryType.PAYOUT_RESERVE
        ).values_list("payout_id", flat=True)
    )
    assert set(reserves) == payouts, "a payout without its reservation, or the reverse"
    assert all(count == 1 for count in reserves.values()), reserves


@pytest.mark.django_db(transaction=True)
def test_backend_killed_between_payout_insert_and_reservation_leaves_nothing(
    merchant_account, processes: Processes
) -> None:
    _, base_url = processes.web("web-terminate", **_web_env())
    wallet = funded_wallet(merchant_account, TEST_MODE, "10000.00")
    ledger_before = LedgerEntry.objects.filter(wallet_id=wallet.pk).count()
    key = merchant_account.test_key.plaintext
    url = f"{base_url}{PAYOUTS_PATH}"
    outcome: dict[str, Any] = {}

    with psycopg.connect(_dsn()) as blocker, psycopg.connect(_dsn(), autocommit=True) as admin:
        blocker.execute("LOCK TABLE wallets_ledgerentry IN SHARE MODE")
        request = threading.Thread(
            target=lambda: outcome.update(
                zip(
                    ("status", "body"),
                    http_json("POST", url, key=key, body=payout_body("cut-1")),
                    strict=True,
                )
            )
        )
        request.start()
        pid = wait_for(
            lambda: admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s "
                "AND wait_event_type = 'Lock' "
                "AND query LIKE 'INSERT INTO \"wallets_ledgerentry\"%%'",
                (APP_NAME,),
            ).fetchone(),
            timeout=20,
            what="the create to wait on the ledger insert",
        )[0]
        # The payout row exists in that backend's open transaction right now.
        in_flight = admin.execute(
            "SELECT query FROM pg_stat_activity WHERE pid = %s", (pid,)
        ).fetchone()[0]
        assert "payout_reserve" in in_flight
        assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0] is True
        request.join(timeout=30)
        blocker.rollback()

    assert outcome["status"] == 500, outcome
    assert not Payout.objects.filter(idempotency_key="cut-1").exists()
    wallet.refresh_from_db()
    assert wallet.available_balance == Decimal("10000.00")
    assert wallet.reserved_balance == Decimal("0.00")
    assert LedgerEntry.objects.filter(wallet_id=wallet.pk).count() == ledger_before

    status, body = http_json("POST", url, key=key, body=payout_body("cut-1"))
    assert status == 202, body
    assert body["data"]["duplicate"] is False
    payout = Payout.objects.get(idempotency_key="cut-1")
    wallet.refresh_from_db()
    assert wallet.reserved_balance == payout.total_debit_amount
    _assert_payouts_and_reservations_match(wallet.pk)
    assert wallet_totals(wallet=wallet).balanced


@pytest.mark.django_db(transaction=True)
def test_backends_killed_at_random_during_concurrent_creates_lose_nothing(
    merchant_account, processes: Processes
) -> None:
    # A broker nobody consumes from (its own Redis database, emptied afterwards) keeps each
    # create fast; the dispatch is not under test here.
    redis_ready(REDIS_URL_2)
    redis.Redis.from_url(REDIS_URL_2).delete("celery")
    _, base_url = processes.web("web-terminate-storm", **_web_env(REDIS_URL_2))
    wallet = funded_wallet(merchant_account, TEST_MODE, "1000000.00")
    key = merchant_account.test_key.plaintext
    url = f"{base_url}{PAYOUTS_PATH}"
    keys = [f"storm-{n}" for n in range(40)]
    statuses: Counter[int] = Counter()
    terminated = 0
    stop = threading.Event()
    rng = random.Random(7)  # noqa: S311 - fault timing, not security

    def killer() -> None:
        nonlocal terminated
        with psycopg.connect(_dsn(), autocommit=True) as admin:
            while not stop.is_set():
                time.sleep(rng.uniform(0.005, 0.04))
                rows = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = %s AND state <> 'idle'",
                    (APP_NAME,),
                ).fetchall()
                terminated += sum(1 for (done,) in rows if done)

    def client(chunk: list[str]) -> None:
        for idempotency_key in chunk:
            status, _ = http_json("POST", url, key=key, body=payout_body(idempotency_key, "100.00"))
            statuses[status] += 1

    chaos = threading.Thread(target=killer)
    chaos.start()
    clients = [threading.Thread(target=client, args=(keys[i::4],)) for i in range(4)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join(timeout=60)
    stop.set()
    chaos.join(timeout=10)

    assert terminated > 0 and statuses[500] > 0, (terminated, statuses)
    assert set(statuses) <= {202, 500}, statuses
    _assert_payouts_and_reservations_match(wallet.pk)
    assert wallet_totals(wallet=wallet).balanced

    # The merchant retries every key that failed: each ends with exactly one payout.
    for idempotency_key in keys:
        status, body = http_json("POST", url, key=key, body=payout_body(idempotency_key, "100.00"))
        assert status == 202, body
    counts = Counter(
        Payout.objects.filter(wallet_id=wallet.pk).values_list("idempotency_key", flat=True)
    )
    assert counts == Counter({idempotency_key: 1 for idempotency_key in keys})
    _assert_payouts_and_reservations_match(wallet.pk)
    totals = wallet_totals(wallet=wallet)
    assert totals.balanced
    redis.Redis.from_url(REDIS_URL_2).delete("celery")
    assert totals.reserved == sum(
        Payout.objects.filter(wallet_id=wallet.pk).values_list("total_debit_amount", flat=True),
        Decimal("0.00"),
    )
