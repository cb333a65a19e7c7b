"""Events, webhook deliveries and their attempts move here from ``collections_app``: the state
is created over the existing tables (nothing in the database changes here); 0002 renames them."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

EVENT_TYPES = [
    ("transaction.paid", "transaction.paid"),
    ("transaction.failed", "transaction.failed"),
    ("transaction.cancelled", "transaction.cancelled"),
    ("transaction.expired", "transaction.expired"),
    ("payout.successful", "payout.successful"),
    ("payout.failed", "payout.failed"),
]


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("collections_app", "0004_money_minor_units"),
        ("merchants", "0001_initial"),
        ("payouts", "0002_money_minor_units"),
    ]

    state_operations = [
        migrations.CreateModel(
            name="Event",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("event_id", models.CharField(editable=False, max_length=40, unique=True)),
                ("event_type", models.CharField(choices=EVENT_TYPES, max_length=30)),
                (
                    "mode",
                    models.CharField(choices=[("test", "Test"), ("live", "Live")], max_length=4),
                ),
                (
                    "payout",
                    models.BigIntegerField(
                        blank=True, db_column="payout_id", db_index=True, null=True
                    ),
                ),
                (
                    "reference",
                    models.CharField(
                        db_index=True,
                        help_text="Transaction reference or payout reference",
                        max_length=40,
                    ),
                ),
                ("body", models.TextField(editable=False)),
                (
                    "created_at",
                    models.DateTimeField(
                        db_index=True, default=django.utils.timezone.now, editable=False
                    ),
                ),
                (
                    "merchant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="merchants.merchant",
                    ),
                ),
                (
                    "transaction",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="events",
                        to="collections_app.collectiontransaction",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "db_table": "collections_app_event",
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("transaction__isnull", False)),
                        fields=("transaction", "event_type"),
                        name="one_event_per_transaction_and_type",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("payout__isnull", False)),
                        fields=("payout", "event_type"),
                        name="one_event_per_payout_and_type",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="WebhookDelivery",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "target",
                    models.CharField(
                        choices=[
                            ("callback_url", "Transaction callback URL"),
                            ("webhook_url", "Merchant webhook URL"),
                        ],
                        max_length=20,
                    ),
                ),
                ("url", models.CharField(max_length=2000)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("succeeded", "Succeeded"),
                            ("failed", "Failed"),
                        ],
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("attempt_count", models.PositiveIntegerField(default=0)),
                ("next_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("give_up_at", models.DateTimeField()),
                ("last_status_code", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("last_error", models.CharField(blank=True, default="", max_length=255)),
                ("delivered_at", models.DateTimeField(blank=True, null=True)),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "event",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="deliveries",
                        to="webhooks.event",
                    ),
                ),
                (
                    "resend_of",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="resends",
                        to="webhooks.webhookdelivery",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "webhook deliveries",
                "ordering": ["-created_at", "-id"],
                "db_table": "collections_app_webhookdelivery",
                "indexes": [
                    models.Index(
                        fields=["status", "next_attempt_at"], name="collections_status_c16e79_idx"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="WebhookDeliveryAttempt",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("attempt_number", models.PositiveIntegerField()),
                ("url", models.CharField(max_length=2000)),
                ("status_code", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("latency_ms", models.PositiveIntegerField(blank=True, null=True)),
                ("response_excerpt", models.CharField(blank=True, default="", max_length=500)),
                ("error", models.CharField(blank=True, default="", max_length=255)),
                ("succeeded", models.BooleanField(default=False)),
                ("next_attempt_at", models.DateTimeField(blank=True, null=True)),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                (
                    "delivery",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="attempts",
                        to="webhooks.webhookdelivery",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "db_table": "collections_app_webhookdeliveryattempt",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("delivery", "attempt_number"), name="one_row_per_delivery_attempt"
                    )
                ],
            },
        ),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=state_operations),
    ]
