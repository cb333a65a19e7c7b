"""The database refuses UPDATE and DELETE on ledger rows, whoever issues them (raw SQL included).

TRUNCATE (used by test flushes) is not affected.
"""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION wallets_ledgerentry_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ledger entries are append-only (% refused)', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS wallets_ledgerentry_append_only ON wallets_ledgerentry;
CREATE TRIGGER wallets_ledgerentry_append_only
    BEFORE UPDATE OR DELETE ON wallets_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION wallets_ledgerentry_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS wallets_ledgerentry_append_only ON wallets_ledgerentry;
DROP FUNCTION IF EXISTS wallets_ledgerentry_append_only();
"""


def create_trigger(apps, schema_editor):
    schema_editor.execute(CREATE, params=None)


def drop_trigger(apps, schema_editor):
    schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("wallets", "0002_seed_banks_and_fee_schedule")]

    operations = [migrations.RunPython(create_trigger, drop_trigger)]
