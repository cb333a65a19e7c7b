"""How long one settlement run takes, and in how many SQL statements: 100,000 paid test
collections (by default) of one merchant, a tenth of them split with two subaccounts and one
in twenty-five with a third.

``python -m benchmarks.settlement_run [--collections N]`` on the database of ``DATABASE_URL``
(when unset, the embedded PostgreSQL of a running ``make run``). It creates a throwaway merchant,
seeds the collections and their split entries with one ``INSERT … SELECT generate_series`` each,
runs ``settlements.services.settlement_run`` once under ``CaptureQueriesContext``, prints the
wall time, the statement count and the settlement, and rolls everything back: the database is
left as it was. The statement count does not depend on N (``tests/settlements/test_scale.py``
checks it at two sizes).
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

AMOUNT_KOBO = 700_000  # 7,000.00
FEE_KOBO = 20_500  # 205.00
SHARES_KOBO = (70_000, 10_000, 5_000)  # 700.00 and 100.00 on every tenth; 50.00 on every 25th


class _RolledBack(Exception):
    """Raised to roll the benchmark's transaction back."""


@dataclass(frozen=True)
class SettlementBench:
    collections: int
    seed_seconds: float
    run_seconds: float
    statements: int
    statement_kinds: dict[str, int]
    settlement: Any

    def lines(self) -> list[str]:
        settlement = self.settlement
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(self.statement_kinds.items()))
        return [
            f"collections seeded: {self.collections} in {self.seed_seconds:.1f} s",
            f"settlement run: {self.run_seconds:.2f} s wall, {self.statements} SQL statements "
            f"({kinds})",
            f"settlement {settlement.settlement_id}: {settlement.transaction_count} collections, "
            f"gross {settlement.gross}, fees {settlement.fees}, shares "
            f"{settlement.subaccount_shares}, net {settlement.net}",
        ]


def _seed(*, merchant: Any, count: int) -> None:
    """``count`` paid test collections of ``merchant`` and their split entries, in SQL."""
    from django.db import connection
    from django.utils import timezone

    from collections_app.models import CollectionTransaction, Customer, TransactionSplitEntry
    from merchants.models import Mode
    from payment_items.models import Business, Category, PaymentItem, Subaccount, SubCategory
    from wallets.models import Bank

    bank = Bank.objects.filter(is_active=True).order_by("id")[0]
    business = Business.objects.create(merchant=merchant, mode=Mode.TEST, business_name="Bench")
    category = Category.objects.create(merchant=merchant, mode=Mode.TEST, name="Bench")
    item = PaymentItem.objects.create(
        merchant=merchant,
        mode=Mode.TEST,
        business=business,
        category=category,
        sub_category=SubCategory.objects.create(category=category, name="Bench"),
        name="Bench item",
        amount=Decimal("7000.00"),
    )
    customer = Customer.objects.create(
        merchant=merchant,
        mode=Mode.TEST,
        customer_tag=f"CUS_bench{time.time_ns():x}"[:40],
        email="payer@example.com",
        phone_number="08012345678",
        first_name="Ada",
        last_name="Obi",
    )
    subaccounts = [
        Subaccount.objects.create(
            merchant=merchant,
            mode=Mode.TEST,
            bank=bank,
            account_number=f"{2_100_000_000 + n}",
            account_name=f"Bench Subaccount {n}",
        )
        for n in range(len(SHARES_KOBO))
    ]
    tag = f"{time.time_ns():x}"
    collections = CollectionTransaction._meta.db_table
    entries = TransactionSplitEntry._meta.db_table
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {collections} (
                merchant_id, mode, reference, client_reference, request_fingerprint,
                payment_item_id, business_id, customer_id, channel, payment_type, currency,
                amount, transaction_fee, amount_to_be_paid, amount_paid, amount_refunded,
                payment_status, callback_url, transaction_split_code, no_of_attempts,
                provider_responses, initiation_time, expires_at, paid_at, status_changed_at,
                created_at, updated_at
            )
            SELECT %s, 'test', 'TXN_B' || %s || '_' || n, 'bench-' || %s || '-' || n,
                   repeat('0', 64), %s, %s, %s, 'card', 'payment_item', 'NGN',
                   %s, %s, %s, %s, 0, 'paid', 'https://merchant.example.com/callback', '', 1,
                   '[]'::jsonb, %s, %s, %s - make_interval(secs => n), %s, %s, %s
            FROM generate_series(1, %s) AS n
            """,  # noqa: S608 - table names from the models; values are parameters
            [
                merchant.pk,
                tag,
                tag,
                item.pk,
                business.pk,
                customer.pk,
                AMOUNT_KOBO,
                FEE_KOBO,
                AMOUNT_KOBO + FEE_KOBO,
                AMOUNT_KOBO + FEE_KOBO,
                now,
                now,
                now,
                now,
                now,
                now,
                count,
            ],
        )
        for subaccount, share, every in zip(subaccounts, SHARES_KOBO, (10, 10, 25), strict=True):
            cursor.execute(
                f"""
                INSERT INTO {entries} (transaction_id, subaccount_id, share)
                SELECT id, %s, %s FROM {collections}
                WHERE merchant_id = %s AND id %% %s = 0
                """,  # noqa: S608 - table names from the models; values are parameters
                [subaccount.pk, share, merchant.pk, every],
            )


def settlement_bench(*, count: int) -> SettlementBench:
    """Seeds ``count`` collections of a new merchant and settles them once, inside the
    caller's transaction (which the caller rolls back)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from merchants.models import Mode
    from merchants.services import merchant_create
    from settlements.services import platform_merchant_get, settlement_run

    merchant = merchant_create(name="Settlement Bench", email="bench@example.com").merchant
    platform_merchant_get()
    started = time.perf_counter()
    _seed(merchant=merchant, count=count)
    seeded = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        run_started = time.perf_counter()
        settlement = settlement_run(merchant_id=merchant.pk, mode=Mode.TEST)
        run_seconds = time.perf_counter() - run_started
    kinds: dict[str, int] = {}
    for query in queries.captured_queries:
        kind = query["sql"].lstrip().split(" ", 1)[0].upper()
        kinds[kind] = kinds.get(kind, 0) + 1
    return SettlementBench(
        collections=count,
        seed_seconds=seeded - started,
        run_seconds=run_seconds,
        statements=len(queries.captured_queries),
        statement_kinds=kinds,
        settlement=settlement,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=100_000)
    arguments = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.db import transaction

    result: SettlementBench | None = None
    try:
        with transaction.atomic():
            result = settlement_bench(count=arguments.collections)
            raise _RolledBack
    except _RolledBack:
        pass
    assert result is not None
    for line in result.lines():
        print(line)  # noqa: T201 - the benchmark's report
    print("rolled back: the database is as it was")  # noqa: T201


if __name__ == "__main__":
    main()
