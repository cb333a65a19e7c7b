"""Events, deliveries and attempts now belong to ``webhooks`` (its 0001 took over the tables);
they leave this app's state. Nothing in the database changes."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("collections_app", "0004_money_minor_units"),
        ("webhooks", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="WebhookDeliveryAttempt"),
                migrations.DeleteModel(name="WebhookDelivery"),
                migrations.DeleteModel(name="Event"),
            ]
        )
    ]
