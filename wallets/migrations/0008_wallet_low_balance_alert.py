"""The low-balance alert of a wallet: an optional threshold (greater than zero) and whether an
alert was sent and not yet re-armed. Existing wallets get no threshold (no alerts)."""

from django.db import migrations, models

import core.fields


class Migration(migrations.Migration):
    dependencies = [("wallets", "0007_ledger_wallet_created_idx")]

    operations = [
        migrations.AddField(
            model_name="wallet",
            name="low_balance_threshold",
            field=core.fields.MoneyField(
                blank=True,
                help_text="wallet.balance_low is sent when available balance drops below this",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="wallet",
            name="low_balance_alerted",
            field=models.BooleanField(
                default=False,
                help_text="An alert was sent and the balance has not recovered since",
            ),
        ),
        migrations.AddConstraint(
            model_name="wallet",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("low_balance_threshold__isnull", True),
                    ("low_balance_threshold__gt", 0),
                    _connector="OR",
                ),
                name="wallet_low_balance_threshold_gt_0",
            ),
        ),
    ]
