from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from core.api import schema  # noqa: F401 - registers the OpenAPI authentication extension
