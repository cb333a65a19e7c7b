"""What one payout costs the database and the processes, for the capacity model
(docs/scaling.md, "Capacity model"): SQL statements, WAL bytes and CPU per create and per
dispatched payout, and how long a create holds its wallet's row lock.

``python -m benchmarks.capacity [--payouts N] [--json]`` on the database of ``DATABASE_URL``
(when unset, the embedded PostgreSQL of a running ``make run``; ``make bench`` runs it on its
own database after the load runs, with 200 payouts). It creates a throwaway merchant and funds
its test wallet, then:

1. creates N payouts one after another on that one wallet (``payout_create``, the service the
   API calls): each create commits, so this is the hot wallet's serial path;
2. dispatches them in the worker's rounds (``payouts_dispatch_round`` until none is claimed;
   the sandbox provider answers at once).

For each phase: statements (``CaptureQueriesContext``), WAL bytes (the records between the
LSNs before and after of the transactions that changed this database, read with
``pg_walinspect``, which it creates; without it the whole server's WAL in between), and of them
full-page images (the first change of a page after a checkpoint), this process's CPU
(``time.process_time``) and, when PostgreSQL runs on this host, the CPU of the connection's
server process (``/proc/<pg_backend_pid()>/stat``). The lock hold is the time from the start of
the statement that locks the wallet (``UPDATE "wallets_wallet"`` or ``SELECT … FOR UPDATE`` on
it) to the end of the ``COMMIT`` that releases it, per transaction: 1 / hold is the ceiling of
one wallet's creates per second, whatever the hardware around it.

The merchant, its payouts and ledger entries stay in the database: run it on a bench or scratch
database (``tests/benchmarks/test_capacity.py`` runs it at N = 5 on the test database).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
AMOUNT = Decimal("100.00")


@dataclass
class PhaseCost:
    """One phase's totals over ``payouts`` payouts, and per payout."""

    payouts: int
    seconds: float
    statements: int
    wal_bytes: int
    wal_fpi_bytes: int | None
    wal_scope: str
    python_cpu_ms: float
    postgres_cpu_ms: float | None
    statement_kinds: dict[str, int]

    @property
    def per_payout(self) -> dict[str, float | None]:
        n = max(1, self.payouts)
        return {
            "statements": round(self.statements / n, 2),
            "wal_bytes": round(self.wal_bytes / n),
            "wal_fpi_bytes": None if self.wal_fpi_bytes is None else round(self.wal_fpi_bytes / n),
            "python_cpu_ms": round(self.python_cpu_ms / n, 3),
            "postgres_cpu_ms": (
                None if self.postgres_cpu_ms is None else round(self.postgres_cpu_ms / n, 3)
            ),
            "wall_ms": round(1000 * self.seconds / n, 3),
        }


@dataclass
class CapacityReport:
    create: PhaseCost
    dispatch: PhaseCost
    lock_hold_ms: list[float] = field(default_factory=list)
    dispatched: int = 0

    def lock_hold(self) -> dict[str, float]:
        holds = sorted(self.lock_hold_ms)
        if not holds:
            return {}

        def pick(fraction: float) -> float:
            return round(holds[min(len(holds) - 1, int(fraction * len(holds)))], 3)

        p50 = pick(0.5)
        return {
            "samples": len(holds),
            "p50_ms": p50,
            "p99_ms": pick(0.99),
            "mean_ms": round(sum(holds) / len(holds), 3),
            "one_wallet_ceiling_per_s": round(1000 / p50) if p50 else 0,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "create": {**asdict(self.create), "per_payout": self.create.per_payout},
            "dispatch": {**asdict(self.dispatch), "per_payout": self.dispatch.per_payout},
            "dispatched": self.dispatched,
            "lock_hold": self.lock_hold(),
        }

    def lines(self) -> list[str]:
        out = []
        for name, phase in (("create", self.create), ("dispatch", self.dispatch)):
            per = phase.per_payout
            pg = per["postgres_cpu_ms"]
            out.append(
                f"{name}: {phase.payouts} payouts in {phase.seconds:.2f} s; per payout "
                f"{per['statements']} statements, {per['wal_bytes']} WAL bytes "
                f"({per['wal_fpi_bytes']} of them full-page images), "
                f"{per['python_cpu_ms']} ms Python CPU, "
                f"{'n/a' if pg is None else pg} ms PostgreSQL CPU"
            )
        hold = self.lock_hold()
        if hold:
            out.append(
                f"wallet row lock held per create: p50 {hold['p50_ms']} ms, p99 "
                f"{hold['p99_ms']} ms over {hold['samples']} transactions: one wallet "
                f"carries at most ~{hold['one_wallet_ceiling_per_s']} creates/s"
            )
        return out


def _backend_cpu_ms(pid: int) -> float | None:
    """CPU (user + system) of PostgreSQL's server process ``pid`` on this host, or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return 1000 * (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


WAL_OF_THIS_DATABASE = """
    WITH records AS (
        SELECT xid, record_length, fpi_length, block_ref
        FROM pg_get_wal_records_info(%s::pg_lsn, pg_current_wal_flush_lsn())
    ), ours AS (
        SELECT DISTINCT xid FROM records
        WHERE xid <> '0' AND block_ref LIKE %s
    )
    SELECT coalesce(sum(record_length), 0), coalesce(sum(fpi_length), 0)
    FROM records WHERE xid IN (SELECT xid FROM ours)
"""


def _wal_written(connection: Any, since: str) -> tuple[int, int | None, str]:
    """WAL bytes (and of them full-page images) written since LSN ``since`` by transactions
    that changed this database, read back with ``pg_walinspect`` (created here when absent);
    the whole server's WAL since then where that extension is not available."""
    from django.db import DatabaseError, transaction

    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
            cursor.execute("SELECT oid FROM pg_database WHERE datname = current_database()")
            (database_oid,) = cursor.fetchone()
            cursor.execute(WAL_OF_THIS_DATABASE, [since, f"%/{database_oid}/%"])
            total, fpi = cursor.fetchone()
            return int(total), int(fpi), "this database's transactions (pg_walinspect)"
    except DatabaseError:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s)", [since])
            (total,) = cursor.fetchone()
        return int(total), None, "the whole server (no pg_walinspect)"


def _locks_wallet(sql: str) -> bool:
    text = sql.lstrip()
    return text.startswith('UPDATE "wallets_wallet"') or (
        '"wallets_wallet"' in text and "FOR UPDATE" in text and text.startswith("SELECT")
    )


@contextmanager
def _lock_hold_recorder(connection: Any, holds: list[float]) -> Iterator[None]:
    """Appends to ``holds`` the ms from each transaction's first wallet-locking statement to
    the end of its COMMIT."""
    state: dict[str, float | None] = {"locked_at": None}

    def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool, ctx: Any) -> Any:
        if state["locked_at"] is None and _locks_wallet(sql):
            state["locked_at"] = time.perf_counter()
        return execute(sql, params, many, ctx)

    original_commit = connection._commit
    original_rollback = connection._rollback

    def commit() -> None:
        original_commit()
        locked_at = state["locked_at"]
        if locked_at is not None:
            holds.append(round(1000 * (time.perf_counter() - locked_at), 3))
        state["locked_at"] = None

    def rollback() -> None:
        original_rollback()
        state["locked_at"] = None

    connection._commit, connection._rollback = commit, rollback
    try:
        with connection.execute_wrapper(wrapper):
            yield
    finally:
        del connection._commit, connection._rollback


@contextmanager
def _phase(connection: Any, payouts: Callable[[], int], out: list[PhaseCost]) -> Iterator[None]:
    from django.test.utils import CaptureQueriesContext

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid(), pg_current_wal_insert_lsn()::text")
        pid, wal_before = cursor.fetchone()
    pg_before = _backend_cpu_ms(pid)
    cpu_before = time.process_time()
    started = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        yield
    seconds = time.perf_counter() - started
    cpu = 1000 * (time.process_time() - cpu_before)
    pg_after = _backend_cpu_ms(pid)
    wal_bytes, wal_fpi_bytes, wal_scope = _wal_written(connection, wal_before)
    kinds: dict[str, int] = {}
    for query in queries.captured_queries:
        kind = query["sql"].lstrip().split(" ", 1)[0].upper()
        kinds[kind] = kinds.get(kind, 0) + 1
    out.append(
        PhaseCost(
            payouts=payouts(),
            seconds=round(seconds, 4),
            statements=len(queries.captured_queries),
            wal_bytes=wal_bytes,
            wal_fpi_bytes=wal_fpi_bytes,
            wal_scope=wal_scope,
            python_cpu_ms=round(cpu, 2),
            postgres_cpu_ms=(
                None if pg_before is None or pg_after is None else round(pg_after - pg_before, 2)
            ),
            statement_kinds=kinds,
        )
    )


def capacity_measure(*, payouts: int) -> CapacityReport:
    """Creates ``payouts`` payouts on one new wallet, then dispatches them (module docstring).
    Commits as it goes: not for a transaction that will be rolled back."""
    from django.db import connection

    from merchants.models import Mode
    from merchants.services import merchant_create
    from payouts.models import Payout, PayoutStatus
    from payouts.services import payout_create
    from payouts.services.dispatch import payouts_dispatch_round
    from wallets.models import Wallet
    from wallets.services import wallet_fund

    tag = uuid.uuid4().hex[:12]
    merchant = merchant_create(name="Capacity Bench", email=f"capacity-{tag}@example.com").merchant
    wallet = Wallet.objects.get(merchant=merchant, mode=Mode.TEST)
    wallet_fund(
        wallet_id=wallet.pk, amount=AMOUNT * 2 * payouts + Decimal("1000.00"), reference=tag
    )
    wallet.refresh_from_db()  # the funded balance, read once as the key authentication does
    phases: list[PhaseCost] = []
    holds: list[float] = []
    ids: list[int] = []
    with _phase(connection, lambda: len(ids), phases), _lock_hold_recorder(connection, holds):
        for index in range(payouts):
            result = payout_create(
                merchant=merchant,
                mode=Mode.TEST,
                account_number="0123456789",
                bank_code="058",
                amount=AMOUNT,
                idempotency_key=f"capacity-{tag}-{index}",
                narration="capacity",
                wallet=wallet,
            )
            ids.append(result.payout.pk)
    create_holds = list(holds)
    with _phase(connection, lambda: len(ids), phases):
        for _ in range(payouts):  # bounded: a round claims at least one or ends the loop
            if not payouts_dispatch_round().claimed:
                break
    dispatched = Payout.objects.filter(pk__in=ids).exclude(status=PayoutStatus.RESERVED).count()
    return CapacityReport(
        create=phases[0], dispatch=phases[1], lock_hold_ms=create_holds, dispatched=dispatched
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payouts", type=int, default=200)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    arguments = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    report = capacity_measure(payouts=arguments.payouts)
    if arguments.json:
        print(json.dumps(report.as_dict()))
    else:
        print("\n".join(report.lines()))


if __name__ == "__main__":
    main()
