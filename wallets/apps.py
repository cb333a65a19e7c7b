"""The wallets app; after each migrate it restores the banks and the default fee schedule when
their tables are empty."""

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_delete, post_migrate, post_save


def _reference_data_ensure(sender: AppConfig, using: str = "default", **kwargs: Any) -> None:
    """Restores banks and the default fee schedule when their tables are empty.

    The data migration seeds them once; this keeps them present after a database flush (for
    example between transactional tests), and never touches tables that already hold rows.
    """
    from django.db import connections

    from wallets.models import Bank, FeeSchedule, FeeTier
    from wallets.reference_data import reference_data_seed

    tables = set(connections[using].introspection.table_names())
    if not {Bank._meta.db_table, FeeSchedule._meta.db_table, FeeTier._meta.db_table} <= tables:
        return
    reference_data_seed(bank_model=Bank, fee_schedule_model=FeeSchedule, fee_tier_model=FeeTier)
    from wallets.selectors import bank_cache_clear, fee_schedule_cache_clear

    bank_cache_clear()
    fee_schedule_cache_clear()


def _bank_changed(sender: type, **kwargs: Any) -> None:
    """Clears the bank cache now and again on commit, so a request that re-read the old rows
    between the save and the commit cannot leave them cached."""
    from django.db import transaction

    from wallets.selectors import bank_cache_clear

    bank_cache_clear()
    transaction.on_commit(bank_cache_clear, using=kwargs.get("using"))


def _fee_schedule_changed(sender: type, **kwargs: Any) -> None:
    """Forgets this process's fee schedules now and again on commit (see ``_bank_changed``)."""
    from django.db import transaction

    from wallets.selectors import fee_schedule_cache_clear

    fee_schedule_cache_clear()
    transaction.on_commit(fee_schedule_cache_clear, using=kwargs.get("using"))


def _merchant_wallets_open(sender: Any, merchant: Any, **kwargs: Any) -> None:
    from wallets.services import wallets_create_for_merchant

    wallets_create_for_merchant(merchant=merchant)


class WalletsConfig(AppConfig):
    name = "wallets"
    verbose_name = "Wallets and ledger"

    def ready(self) -> None:
        from merchants.signals import merchant_created
        from wallets.models import Bank, FeeSchedule, FeeTier

        merchant_created.connect(_merchant_wallets_open, dispatch_uid="wallets_merchant_created")

        post_migrate.connect(_reference_data_ensure, sender=self, dispatch_uid="wallets_ref_data")
        post_save.connect(_bank_changed, sender=Bank, dispatch_uid="wallets_bank_saved")
        post_delete.connect(_bank_changed, sender=Bank, dispatch_uid="wallets_bank_deleted")
        for model in (FeeSchedule, FeeTier):
            label = model._meta.model_name
            post_save.connect(
                _fee_schedule_changed, sender=model, dispatch_uid=f"wallets_{label}_saved"
            )
            post_delete.connect(
                _fee_schedule_changed, sender=model, dispatch_uid=f"wallets_{label}_deleted"
            )
