"""Money columns hold integer kobo (``core.fields.MoneyField``); every row converted exactly.

PostgreSQL's ALTER TABLE rewrites the ledger without firing its append-only row trigger.
"""

from decimal import Decimal

from django.db import migrations, models

import core.fields
from core.migration_operations import minor_units_operations

ZERO = Decimal("0.00")


class Migration(migrations.Migration):
    dependencies = [("wallets", "0003_ledger_append_only_trigger")]

    operations = [
        *minor_units_operations(
            "wallet",
            {
                "available_balance": core.fields.MoneyField(default=ZERO),
                "reserved_balance": core.fields.MoneyField(default=ZERO),
            },
            [
                models.CheckConstraint(
                    condition=models.Q(("available_balance__gte", 0)),
                    name="wallet_available_balance_gte_0",
                ),
                models.CheckConstraint(
                    condition=models.Q(("reserved_balance__gte", 0)),
                    name="wallet_reserved_balance_gte_0",
                ),
            ],
        ),
        *minor_units_operations(
            "ledgerentry",
            {
                "amount": core.fields.MoneyField(),
                "fee_amount": core.fields.MoneyField(default=ZERO),
                "available_delta": core.fields.MoneyField(),
                "reserved_delta": core.fields.MoneyField(),
                "available_balance_after": core.fields.MoneyField(),
                "reserved_balance_after": core.fields.MoneyField(),
            },
            [
                models.CheckConstraint(
                    condition=models.Q(("amount__gte", 0)), name="ledger_amount_gte_0"
                ),
                models.CheckConstraint(
                    condition=models.Q(("fee_amount__gte", 0)), name="ledger_fee_gte_0"
                ),
                models.CheckConstraint(
                    condition=models.Q(("available_balance_after__gte", 0)),
                    name="ledger_available_after_gte_0",
                ),
                models.CheckConstraint(
                    condition=models.Q(("reserved_balance_after__gte", 0)),
                    name="ledger_reserved_after_gte_0",
                ),
            ],
        ),
        *minor_units_operations(
            "feetier",
            {
                "min_amount": core.fields.MoneyField(),
                "max_amount": core.fields.MoneyField(null=True, blank=True),
                "fee_amount": core.fields.MoneyField(),
            },
            [
                models.CheckConstraint(
                    condition=models.Q(("min_amount__gte", 0)), name="fee_tier_min_gte_0"
                ),
                models.CheckConstraint(
                    condition=models.Q(("fee_amount__gte", 0)), name="fee_tier_fee_gte_0"
                ),
                models.CheckConstraint(
                    condition=models.Q(
                        ("max_amount__isnull", True),
                        ("max_amount__gte", models.F("min_amount")),
                        _connector="OR",
                    ),
                    name="fee_tier_max_gte_min",
                ),
            ],
        ),
        *minor_units_operations(
            "fundingtransfer",
            {"amount": core.fields.MoneyField()},
            [
                models.CheckConstraint(
                    condition=models.Q(("amount__gt", 0)), name="funding_amount_gt_0"
                ),
            ],
        ),
    ]
