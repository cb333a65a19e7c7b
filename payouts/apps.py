from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    name = "payouts"
    verbose_name = "Payouts"

    def ready(self) -> None:
        from integrations.paystack.signals import paystack_event_received
        from payouts import checks  # noqa: F401 - registers the system checks
        from payouts.receivers import paystack_transfer_event

        paystack_event_received.connect(
            paystack_transfer_event, dispatch_uid="payouts.paystack_transfer_event"
        )
