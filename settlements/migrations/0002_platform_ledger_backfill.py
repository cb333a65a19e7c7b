"""Accounts for collections paid before the platform ledger existed: each one posts what
``collection_paid_post`` posts when a collection is paid today."""

from decimal import Decimal

from django.db import migrations
from django.db.models import Sum

ZERO = Decimal("0.00")


def backfill(apps, schema_editor):
    collection_model = apps.get_model("collections_app", "CollectionTransaction")
    split_entry_model = apps.get_model("collections_app", "TransactionSplitEntry")
    entry_model = apps.get_model("settlements", "PlatformLedgerEntry")
    entries = []
    for collection in collection_model.objects.filter(payment_status="paid").iterator():
        shares = (
            split_entry_model.objects.filter(transaction_id=collection.pk).aggregate(
                total=Sum("share")
            )["total"]
            or ZERO
        )
        postings = {
            "collected": collection.amount_paid,
            "fees": collection.transaction_fee,
            "owed_subaccounts": shares,
            "owed_merchants": collection.amount_paid - collection.transaction_fee - shares,
        }
        entries.extend(
            entry_model(
                mode=collection.mode,
                account=account,
                amount=amount,
                group=f"paid:{collection.reference}",
                merchant_id=collection.merchant_id,
                collection_id=collection.pk,
                description="collection paid",
            )
            for account, amount in postings.items()
            if amount != ZERO
        )
    entry_model.objects.bulk_create(entries, batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0001_initial"),
        ("collections_app", "0007_settlement"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
