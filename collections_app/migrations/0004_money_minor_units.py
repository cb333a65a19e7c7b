"""Money columns hold integer kobo and the fee rate integer hundredths of a percent
(``core.fields``); every row converted exactly."""

from decimal import Decimal

from django.db import migrations, models

import core.fields
from core.migration_operations import minor_units_operations


class Migration(migrations.Migration):
    dependencies = [("collections_app", "0003_events_deliveries_provider")]

    operations = [
        *minor_units_operations(
            "collectionfeeschedule",
            {
                "percentage_rate": core.fields.FixedPointField(
                    help_text="Percent of the amount, e.g. 1.50"
                ),
                "flat_fee": core.fields.MoneyField(default=Decimal("0.00")),
                "flat_fee_waiver_below": core.fields.MoneyField(
                    default=Decimal("0.00"),
                    help_text="The flat fee is not charged when the amount is below this",
                ),
                "fee_cap": core.fields.MoneyField(blank=True, null=True),
            },
            [
                models.CheckConstraint(
                    condition=models.Q(
                        ("percentage_rate__gte", 0),
                        ("percentage_rate__lte", 100),
                        ("flat_fee__gte", 0),
                        ("flat_fee_waiver_below__gte", 0),
                        models.Q(("fee_cap__isnull", True), ("fee_cap__gte", 0), _connector="OR"),
                    ),
                    name="collection_fee_schedule_values_valid",
                )
            ],
        ),
        *minor_units_operations(
            "collectiontransaction",
            {
                "amount": core.fields.MoneyField(),
                "transaction_fee": core.fields.MoneyField(),
                "amount_to_be_paid": core.fields.MoneyField(),
                "amount_paid": core.fields.MoneyField(default=Decimal("0.00")),
            },
            [
                models.CheckConstraint(
                    condition=models.Q(
                        ("amount__gt", 0),
                        ("transaction_fee__gte", 0),
                        ("amount_to_be_paid__gte", 0),
                        ("amount_paid__gte", 0),
                    ),
                    name="collection_transaction_amounts_valid",
                )
            ],
        ),
        *minor_units_operations(
            "transactionattempt",
            {"amount_paid": core.fields.MoneyField(blank=True, null=True)},
            [],
        ),
        *minor_units_operations(
            "transactionsplitentry",
            {"share": core.fields.MoneyField()},
            [
                models.CheckConstraint(
                    condition=models.Q(("share__gt", 0)), name="split_entry_positive"
                )
            ],
        ),
    ]
