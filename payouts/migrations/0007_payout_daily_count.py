"""Per-(wallet, status, Lagos day) payout counts, kept by triggers on ``payouts_payout``.

The triggers run inside the statement that writes payouts, whoever issues it, so a count
commits or rolls back with the change it counts: statement-level triggers with transition tables
append one ``payouts_payoutcountchange`` row per (wallet, status, day) the statement changed (a
50-payout ``bulk_update`` appends two, not fifty). Appending takes no lock on a shared row, so
concurrent creates and dispatch claims never wait for one another over a count;
``payout_counts_fold`` folds the changes into ``payouts_payoutdailycount``. TRUNCATE empties
both.

A payout's day is its creation instant's calendar day at UTC+01:00, Lagos time (WAT has no
daylight saving), written the same way here and in ``payouts.selectors.count_day``: the UTC
instant plus one hour, then its date. The counts of the payouts already there are written while
writes to the table wait (``SHARE ROW EXCLUSIVE`` until the migration commits), so none is
counted twice or missed.
"""

from django.db import migrations, models
import django.db.models.deletion

PG_DAY_NEW = "((n.created_at AT TIME ZONE 'UTC') + interval '1 hour')::date"
PG_DAY_OLD = "((o.created_at AT TIME ZONE 'UTC') + interval '1 hour')::date"
PG_APPEND = "INSERT INTO payouts_payoutcountchange (wallet_id, status, day, delta)"
PG_CHANGED = """n.status <> o.status OR n.wallet_id <> o.wallet_id
           OR n.created_at <> o.created_at"""

PG_CREATE = f"""
LOCK TABLE payouts_payout IN SHARE ROW EXCLUSIVE MODE;

CREATE OR REPLACE FUNCTION payouts_payout_count_insert() RETURNS trigger AS $$
BEGIN
    {PG_APPEND}
    SELECT n.wallet_id, n.status, {PG_DAY_NEW}, count(*) FROM new_rows n GROUP BY 1, 2, 3;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION payouts_payout_count_update() RETURNS trigger AS $$
BEGIN
    {PG_APPEND}
    SELECT wallet_id, status, day, sum(delta)
    FROM (
        SELECT n.wallet_id, n.status, {PG_DAY_NEW} AS day, 1 AS delta
        FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE {PG_CHANGED}
        UNION ALL
        SELECT o.wallet_id, o.status, {PG_DAY_OLD} AS day, -1 AS delta
        FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE {PG_CHANGED}
    ) AS changes
    GROUP BY 1, 2, 3 HAVING sum(delta) <> 0;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION payouts_payout_count_delete() RETURNS trigger AS $$
BEGIN
    {PG_APPEND}
    SELECT o.wallet_id, o.status, {PG_DAY_OLD}, -count(*) FROM old_rows o GROUP BY 1, 2, 3;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION payouts_payout_count_truncate() RETURNS trigger AS $$
BEGIN
    DELETE FROM payouts_payoutcountchange;
    DELETE FROM payouts_payoutdailycount;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER payouts_payout_count_insert AFTER INSERT ON payouts_payout
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION payouts_payout_count_insert();
CREATE TRIGGER payouts_payout_count_update AFTER UPDATE ON payouts_payout
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION payouts_payout_count_update();
CREATE TRIGGER payouts_payout_count_delete AFTER DELETE ON payouts_payout
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION payouts_payout_count_delete();
CREATE TRIGGER payouts_payout_count_truncate AFTER TRUNCATE ON payouts_payout
    FOR EACH STATEMENT EXECUTE FUNCTION payouts_payout_count_truncate();

DELETE FROM payouts_payoutcountchange;
DELETE FROM payouts_payoutdailycount;
INSERT INTO payouts_payoutdailycount (wallet_id, status, day, count)
SELECT n.wallet_id, n.status, {PG_DAY_NEW}, count(*)
FROM payouts_payout n GROUP BY 1, 2, 3;
"""

PG_DROP = """
DROP TRIGGER IF EXISTS payouts_payout_count_insert ON payouts_payout;
DROP TRIGGER IF EXISTS payouts_payout_count_update ON payouts_payout;
DROP TRIGGER IF EXISTS payouts_payout_count_delete ON payouts_payout;
DROP TRIGGER IF EXISTS payouts_payout_count_truncate ON payouts_payout;
DROP FUNCTION IF EXISTS payouts_payout_count_insert();
DROP FUNCTION IF EXISTS payouts_payout_count_update();
DROP FUNCTION IF EXISTS payouts_payout_count_delete();
DROP FUNCTION IF EXISTS payouts_payout_count_truncate();
"""


def counts_install(apps, schema_editor):
    schema_editor.execute(PG_CREATE, params=None)


def counts_uninstall(apps, schema_editor):
    schema_editor.execute(PG_DROP, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('payouts', '0006_payout_batch'),
        ('wallets', '0009_ledger_payout_return'),
    ]

    operations = [
        migrations.CreateModel(
            name='PayoutDailyCount',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('status', models.CharField(choices=[('reserved', 'Reserved'), ('processing', 'Processing'), ('dispatched', 'Dispatched'), ('ambiguous', 'Ambiguous'), ('successful', 'Successful'), ('failed', 'Failed')], max_length=12)),
                ('day', models.DateField()),
                ('count', models.BigIntegerField(default=0)),
                ('wallet', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='wallets.wallet')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('wallet', 'status', 'day'), name='payout_daily_count_unique')],
            },
        ),
        migrations.CreateModel(
            name='PayoutCountChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('status', models.CharField(choices=[('reserved', 'Reserved'), ('processing', 'Processing'), ('dispatched', 'Dispatched'), ('ambiguous', 'Ambiguous'), ('successful', 'Successful'), ('failed', 'Failed')], max_length=12)),
                ('day', models.DateField()),
                ('delta', models.BigIntegerField()),
                ('wallet', models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='wallets.wallet')),
            ],
            options={
                'indexes': [models.Index(fields=['wallet', 'status', 'day'], name='payout_count_change_idx')],
            },
        ),
        migrations.RunPython(counts_install, counts_uninstall),
    ]
