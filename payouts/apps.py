from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    name = "payouts"
    verbose_name = "Payouts"

    def ready(self) -> None:
        from payouts import checks  # noqa: F401 - registers the system checks
