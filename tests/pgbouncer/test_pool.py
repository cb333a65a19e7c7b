"""What transaction pooling changes, checked on PgBouncer itself: the test's connections do
reach PostgreSQL through it, many clients share a pool of fewer server connections, and what
would outlive a transaction (a server-side cursor) is not used."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from django.db import connection, connections, transaction

from merchants.models import Mode
from merchants.services import merchant_create
from tests.pgbouncer.conftest import PgBouncerServer
from wallets.models import LedgerEntry
from wallets.selectors import wallet_get
from wallets.services import wallet_fund

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.multiprocess]
CLIENTS = 16
TRANSACTIONS_PER_CLIENT = 5


def test_the_connections_go_through_pgbouncer_in_transaction_mode(
    through_pgbouncer: PgBouncerServer,
) -> None:
    before = int(str(through_pgbouncer.row_of("STATS")["total_xact_count"]))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        (database,) = cursor.fetchone()

    assert database == through_pgbouncer.database
    assert through_pgbouncer.row_of("POOLS")["pool_mode"] == "transaction"
    assert int(str(through_pgbouncer.row_of("STATS")["total_xact_count"])) > before


def test_more_clients_than_server_connections_all_commit(
    through_pgbouncer: PgBouncerServer,
) -> None:
    """Sixteen threads, each with its own client connection, fund one wallet five times; the
    pool never opens more server connections than its size, and every funding is counted."""
    wallet = wallet_get(
        merchant=merchant_create(name="Pooled", email="pooled@example.com").merchant,
        mode=Mode.TEST,
    )
    barrier = threading.Barrier(CLIENTS)
    errors: list[BaseException] = []

    def fund(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            for step in range(TRANSACTIONS_PER_CLIENT):
                reference = f"P-{index}-{step}"
                wallet_fund(wallet_id=wallet.pk, amount=Decimal("1.00"), reference=reference)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=fund, args=(index,)) for index in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    wallet.refresh_from_db()
    assert wallet.available_balance == Decimal("1.00") * CLIENTS * TRANSACTIONS_PER_CLIENT
    assert LedgerEntry.objects.filter(wallet=wallet).count() == CLIENTS * TRANSACTIONS_PER_CLIENT
    servers = [
        row
        for row in through_pgbouncer.show("SERVERS")
        if row["database"] == through_pgbouncer.database
    ]
    assert len(servers) <= through_pgbouncer.pool_size < CLIENTS


def test_iterating_a_queryset_opens_no_server_side_cursor(
    through_pgbouncer: PgBouncerServer,
) -> None:
    """``QuerySet.iterator()`` outside a transaction would ``DECLARE`` a cursor ``WITH HOLD``
    (a named, server-side cursor) whose later ``FETCH`` could reach another server connection;
    with server-side cursors off it reads the rows with an ordinary client cursor."""
    wallet = wallet_get(
        merchant=merchant_create(name="Iterated", email="iterated@example.com").merchant,
        mode=Mode.TEST,
    )
    for step in range(5):
        wallet_fund(wallet_id=wallet.pk, amount=Decimal("2.00"), reference=f"I-{step}")

    with connection.execute_wrapper(_refuse_server_side_cursor):
        amounts = [
            entry.amount
            for entry in LedgerEntry.objects.filter(wallet=wallet).iterator(chunk_size=2)
        ]

    assert amounts == [Decimal("2.00")] * 5


def _refuse_server_side_cursor(
    execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]
) -> Any:
    assert not isinstance(context["cursor"].cursor, psycopg.ServerCursor), sql
    return execute(sql, params, many, context)
