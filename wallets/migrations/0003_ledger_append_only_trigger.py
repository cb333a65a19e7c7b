"""The database refuses UPDATE and DELETE on ledger rows, whoever issues them (raw SQL included).

TRUNCATE (used by test flushes) is not affected. The SQL lives in sql/ beside this file, each
file run as one statement.
"""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("wallets", "0002_seed_banks_and_fee_schedule")]

    operations = [
        migrations.RunSQL(
            [(SQL / "0003_ledger_append_only.sql").read_text(encoding="utf-8")],
            [(SQL / "0003_ledger_append_only_drop.sql").read_text(encoding="utf-8")],
        )
    ]
