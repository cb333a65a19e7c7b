"""Money columns hold integer kobo (``core.fields.MoneyField``); every row converted exactly."""

from decimal import Decimal

import django.db.models.expressions
from django.db import migrations, models

import core.fields
from core.migration_operations import minor_units_operations

ZERO = Decimal("0.00")


class Migration(migrations.Migration):
    dependencies = [("payouts", "0001_initial")]

    operations = [
        *minor_units_operations(
            "payout",
            {
                "amount": core.fields.MoneyField(),
                "fee_amount": core.fields.MoneyField(default=ZERO),
                "total_debit_amount": core.fields.MoneyField(),
            },
            [
                models.CheckConstraint(
                    condition=models.Q(("amount__gt", 0)), name="payout_amount_gt_0"
                ),
                models.CheckConstraint(
                    condition=models.Q(("fee_amount__gte", 0)), name="payout_fee_gte_0"
                ),
                models.CheckConstraint(
                    condition=models.Q(
                        (
                            "total_debit_amount",
                            django.db.models.expressions.CombinedExpression(
                                models.F("amount"), "+", models.F("fee_amount")
                            ),
                        )
                    ),
                    name="payout_total_is_amount_plus_fee",
                ),
            ],
        ),
        *minor_units_operations("sandboxtransfer", {"amount": core.fields.MoneyField()}, []),
    ]
