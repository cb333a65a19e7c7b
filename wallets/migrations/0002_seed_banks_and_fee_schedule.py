from django.db import migrations


def seed(apps, schema_editor):
    from wallets.reference_data import reference_data_seed

    reference_data_seed(
        bank_model=apps.get_model("wallets", "Bank"),
        fee_schedule_model=apps.get_model("wallets", "FeeSchedule"),
        fee_tier_model=apps.get_model("wallets", "FeeTier"),
    )


def unseed(apps, schema_editor):
    from wallets.reference_data import BANKS, DEFAULT_FEE_SCHEDULE_EFFECTIVE_FROM

    apps.get_model("wallets", "Bank").objects.filter(
        bank_code__in=[code for _name, code, _nip, _active in BANKS]
    ).delete()
    apps.get_model("wallets", "FeeSchedule").objects.filter(
        effective_from=DEFAULT_FEE_SCHEDULE_EFFECTIVE_FROM
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("wallets", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
