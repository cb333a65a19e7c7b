from decimal import Decimal

from django.db import migrations


def seed_fee_schedule(apps, schema_editor):
    CollectionFeeSchedule = apps.get_model("collections_app", "CollectionFeeSchedule")
    if CollectionFeeSchedule.objects.filter(is_active=True).exists():
        return
    CollectionFeeSchedule.objects.create(
        name="Local collections: 1.5% + NGN 100 (waived below NGN 2,500), capped at NGN 2,000",
        currency="NGN",
        percentage_rate=Decimal("1.50"),
        flat_fee=Decimal("100.00"),
        flat_fee_waiver_below=Decimal("2500.00"),
        fee_cap=Decimal("2000.00"),
        is_active=True,
    )


class Migration(migrations.Migration):
    dependencies = [("collections_app", "0001_initial")]

    operations = [migrations.RunPython(seed_fee_schedule, migrations.RunPython.noop)]
