"""``wallet.balance_low`` joins the event types. Choices live in Django's state only (no
database constraint on ``event_type``), so this changes no table."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("webhooks", "0003_admin_permissions")]

    operations = [
        migrations.AlterField(
            model_name="event",
            name="event_type",
            field=models.CharField(
                choices=[
                    ("transaction.paid", "transaction.paid"),
                    ("transaction.failed", "transaction.failed"),
                    ("transaction.cancelled", "transaction.cancelled"),
                    ("transaction.expired", "transaction.expired"),
                    ("payout.successful", "payout.successful"),
                    ("payout.failed", "payout.failed"),
                    ("wallet.balance_low", "wallet.balance_low"),
                ],
                max_length=30,
            ),
        ),
    ]
