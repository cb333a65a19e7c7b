"""An index for the settlement statement: a wallet's ledger entries of a range of days, and its
last entry before a day starts (ordered by ``created_at``, then ``id``)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("wallets", "0006_references_per_mode")]

    operations = [
        migrations.AddIndex(
            model_name="ledgerentry",
            index=models.Index(
                fields=["wallet", "created_at", "id"], name="ledger_wallet_created_idx"
            ),
        ),
    ]
