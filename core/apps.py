"""The core app; it registers psycopg's compiled ``timestamptz`` loader on every new PostgreSQL
connection (``core.postgres``)."""

from django.apps import AppConfig
from django.db.backends.signals import connection_created


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from core.postgres import compiled_instants_use

        connection_created.connect(compiled_instants_use, dispatch_uid="core.compiled_instants")
