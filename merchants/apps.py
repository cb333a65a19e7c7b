from django.apps import AppConfig


class MerchantsConfig(AppConfig):
    name = "merchants"
    verbose_name = "Merchants and keys"

    def ready(self) -> None:
        from merchants import schema  # noqa: F401 - registers the OpenAPI authentication extension
