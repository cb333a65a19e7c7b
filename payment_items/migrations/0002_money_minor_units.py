"""Item prices and split shares hold integer hundredths (``core.fields``); rows converted
exactly. A percentage share of 12.5 is stored as 1250, a flat share of ₦1.13 as 113."""

from decimal import Decimal

from django.db import migrations, models

import core.fields
from core.migration_operations import minor_units_operations


class Migration(migrations.Migration):
    dependencies = [("payment_items", "0001_initial")]

    operations = [
        *minor_units_operations(
            "paymentitem",
            {
                "amount": core.fields.MoneyField(
                    default=Decimal("0.00"),
                    help_text="Fixed price; 0 means the payer chooses the amount",
                )
            },
            [
                models.CheckConstraint(
                    condition=models.Q(("amount__gte", 0)),
                    name="payment_item_amount_not_negative",
                )
            ],
        ),
        *minor_units_operations(
            "transactionsplitshare",
            {
                "share": core.fields.FixedPointField(
                    help_text="A percent (0-100) for percentage splits, an amount in naira for "
                    "flat splits"
                )
            },
            [
                models.CheckConstraint(
                    condition=models.Q(("share__gt", 0)), name="transaction_split_share_positive"
                )
            ],
        ),
    ]
