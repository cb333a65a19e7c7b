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
counted twice or missed. The SQL lives in sql/ beside this file, each file run as one statement.
"""

from pathlib import Path

from django.db import migrations, models
import django.db.models.deletion

SQL = Path(__file__).resolve().parent / "sql"


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
        migrations.RunSQL(
            [(SQL / '0007_payout_daily_count.sql').read_text(encoding='utf-8')],
            [(SQL / '0007_payout_daily_count_drop.sql').read_text(encoding='utf-8')],
        ),
    ]
