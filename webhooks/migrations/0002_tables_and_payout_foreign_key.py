"""The moved tables take this app's names, ``Event.payout`` becomes a real foreign key to the
payout (same ``payout_id`` column, now constrained), and the due-deliveries index is renamed."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
        ("collections_app", "0005_events_move_to_webhooks"),
        ("payouts", "0002_money_minor_units"),
    ]

    operations = [
        migrations.AlterModelTable(name="event", table=None),
        migrations.AlterModelTable(name="webhookdelivery", table=None),
        migrations.AlterModelTable(name="webhookdeliveryattempt", table=None),
        migrations.RenameIndex(
            model_name="webhookdelivery",
            new_name="webhook_delivery_due_idx",
            old_name="collections_status_c16e79_idx",
        ),
        migrations.AlterField(
            model_name="event",
            name="payout",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="events",
                to="payouts.payout",
            ),
        ),
    ]
