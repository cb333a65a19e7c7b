"""Funding references are scoped by mode: each funding records its wallet's mode; a live
reference stays unique among live fundings, a test reference only within its wallet.

Existing rows are kept: their mode is copied from their wallet before the new constraints are
added (the old global uniqueness means no existing pair can violate them).
"""

from django.db import migrations, models


def funding_mode_copy(apps, schema_editor):
    FundingTransfer = apps.get_model("wallets", "FundingTransfer")
    for mode in ("test", "live"):
        FundingTransfer.objects.filter(wallet__mode=mode).update(mode=mode)


class Migration(migrations.Migration):
    dependencies = [("wallets", "0005_admin_permissions")]

    operations = [
        migrations.AddField(
            model_name="fundingtransfer",
            name="mode",
            field=models.CharField(
                choices=[("test", "Test"), ("live", "Live")],
                editable=False,
                max_length=4,
                null=True,
            ),
        ),
        migrations.RunPython(funding_mode_copy, migrations.RunPython.noop, elidable=False),
        migrations.AlterField(
            model_name="fundingtransfer",
            name="mode",
            field=models.CharField(
                choices=[("test", "Test"), ("live", "Live")], editable=False, max_length=4
            ),
        ),
        migrations.AlterField(
            model_name="fundingtransfer",
            name="provider_reference",
            field=models.CharField(max_length=100),
        ),
        migrations.AddConstraint(
            model_name="fundingtransfer",
            constraint=models.UniqueConstraint(
                fields=("provider_reference", "wallet"), name="funding_reference_per_wallet"
            ),
        ),
        migrations.AddConstraint(
            model_name="fundingtransfer",
            constraint=models.UniqueConstraint(
                condition=models.Q(("mode", "live")),
                fields=("provider_reference",),
                name="funding_live_reference_unique",
            ),
        ),
        migrations.AddConstraint(
            model_name="fundingtransfer",
            constraint=models.CheckConstraint(
                condition=models.Q(("mode__in", ["test", "live"])), name="funding_mode_valid"
            ),
        ),
    ]
