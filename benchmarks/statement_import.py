"""How long one statement import takes: 10,000 lines (by default) against 10,000 payouts.

``python -m benchmarks.statement_import [--lines N]`` on the database of ``DATABASE_URL`` (when
unset, the embedded PostgreSQL of a running ``make run``). It creates a throwaway merchant
with ``N`` live Paystack payouts sent on one day, writes the Paystack transfers export for that
day (1 % of lines with another amount, 1 % with another status, 0.5 % foreign, 0.5 % of our
payouts left off), times ``manage.py import_statement`` on it, prints the figures and rolls
everything back: the database is left as it was.
"""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from io import StringIO
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000)
    arguments = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import transaction

    from merchants.models import Mode
    from merchants.services import merchant_create
    from payouts.models import Payout, PayoutStatus
    from reconciliation.models import ReconciliationRun
    from wallets.selectors import bank_get_by_code, wallet_get

    count = arguments.lines
    day_start = datetime(2026, 11, 19, 23, 0, tzinfo=UTC)  # 2026-11-20 00:00 Lagos
    with transaction.atomic():
        merchant = merchant_create(name="Statement Bench", email="bench@example.com").merchant
        wallet = wallet_get(merchant=merchant, mode=Mode.LIVE)
        bank = bank_get_by_code(bank_code="058")
        tag = f"{time.time_ns():x}"
        payouts = [
            Payout(
                wallet=wallet,
                merchant=merchant,
                mode=Mode.LIVE,
                internal_reference=f"po_bench_{tag}_{n}",
                idempotency_key=f"bench-{n}",
                request_fingerprint="0" * 64,
                account_number=f"{n:010d}",
                account_name="BENCH BENEFICIARY",
                bank_code=bank.bank_code,
                bank_name=bank.name,
                bank_id=bank.pk,
                amount=Decimal(1000 + n % 5000),
                fee_amount=Decimal("10.00"),
                total_debit_amount=Decimal(1000 + n % 5000) + Decimal("10.00"),
                status=PayoutStatus.SUCCESSFUL,
                provider_name="paystack",
                provider_reference=f"TRF_bench_{tag}_{n}",
                dispatched_at=day_start + timedelta(seconds=(n * 8) % 86_000),
            )
            for n in range(count)
        ]
        Payout.objects.bulk_create(payouts, batch_size=1000)
        rows = StringIO()
        writer = csv.writer(rows)
        writer.writerow(["Reference", "Transfer Code", "Amount", "Currency", "Status", "Date"])
        for n, payout in enumerate(payouts):
            if n % 200 == 7:
                continue  # ours, left off the statement
            kobo = int(payout.amount * 100) + (1 if n % 100 == 3 else 0)
            status = "reversed" if n % 100 == 5 else "success"
            writer.writerow(
                [
                    payout.internal_reference,
                    payout.provider_reference,
                    kobo,
                    "NGN",
                    status,
                    payout.dispatched_at.isoformat(),
                ]
            )
        for n in range(count // 200):
            writer.writerow(
                [f"EXT-{n}", f"TRF_ext_{tag}_{n}", 10000, "NGN", "success", day_start.isoformat()]
            )
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / f"paystack-transfers-{tag}.csv"
            path.write_text(rows.getvalue())
            started = time.perf_counter()
            out = StringIO()
            call_command(
                "import_statement", str(path), "--format", "paystack_transfers", stdout=out
            )
            elapsed = time.perf_counter() - started
        run = ReconciliationRun.objects.get(file_name=path.name)
        print(out.getvalue().strip())
        print(
            f"statement import: {run.line_count} lines against {count} "
            f"payouts in {elapsed:.2f} s ({run.line_count / elapsed:,.0f} lines/s)"
        )
        transaction.set_rollback(True)


if __name__ == "__main__":
    main()
