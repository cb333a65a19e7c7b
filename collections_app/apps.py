"""The collections app; after each migrate it restores the default collection fee schedule when
none is active."""

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _fee_schedule_ensure(sender: AppConfig, using: str = "default", **kwargs: Any) -> None:
    """Restores the default collection fee schedule when none is active.

    The data migration seeds it once; this keeps it present after a database flush (for example
    between transactional tests) and never touches a table that already has an active schedule.
    """
    import importlib

    from django.apps import apps as global_apps
    from django.db import connections

    from collections_app.models import CollectionFeeSchedule

    if CollectionFeeSchedule._meta.db_table not in connections[using].introspection.table_names():
        return
    seed = importlib.import_module("collections_app.migrations.0002_seed_collection_fee_schedule")
    seed.seed_fee_schedule(global_apps, None)


class CollectionsAppConfig(AppConfig):
    name = "collections_app"
    verbose_name = "Collections"

    def ready(self) -> None:
        post_migrate.connect(
            _fee_schedule_ensure, sender=self, dispatch_uid="collections_fee_schedule"
        )
